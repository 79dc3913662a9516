// Package hogsample reads the two real samples of testdata/linux-6.18-hog-t0
// and -t1 (a 6.18 host while a memory hog ran in a 64 MiB cgroup v1 group
// and was OOM-killed; see their SOURCE) with memdiag's own collectors, for
// the tests that check a signal's value against the files read by hand.
// It is a package of its own, not part of internal/testutil, because it
// imports the collectors whose tests use testutil.
package hogsample

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
)

// Files is what the signal catalogue reads from one hog sample.
type Files struct {
	VMStat  *lru.VMStat  // <proc>/vmstat
	Meminfo *lru.Meminfo // <proc>/meminfo
	PSI     psi.Snapshot // <proc>/pressure/{memory,io,cpu}
	Disks   []diskio.Disk
}

// Read reads hog sample which ("t0" or "t1"), failing t on any error or
// on a missing PSI file (the fixture has them all).
func Read(t testing.TB, which string) Files {
	t.Helper()
	root := fixtures.Root(t, "linux-6.18-hog-"+which)
	proc := filepath.Join(root, "proc")
	f, err := os.Open(filepath.Join(proc, "vmstat"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vm, err := lru.ParseVMStat(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	lc, err := lru.NewCollector(proc)
	if err != nil {
		t.Fatal(err)
	}
	mi, err := lc.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := psi.NewCollector(proc)
	if err != nil {
		t.Fatal(err)
	}
	ps, missing, err := pc.Collect(context.Background())
	if err != nil || len(missing) > 0 {
		t.Fatal(err, missing)
	}
	dc, err := diskio.NewDiskCollector(proc, filepath.Join(root, "sys"), diskio.DiskFilter{Partitions: true, Virtual: true})
	if err != nil {
		t.Fatal(err)
	}
	disks, err := dc.Disks()
	if err != nil {
		t.Fatal(err)
	}
	return Files{VMStat: vm, Meminfo: mi, PSI: ps, Disks: disks}
}
