package sources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
)

func TestSourcesFillASample(t *testing.T) {
	// A fixture root with host PSI from this machine and a v2 group.
	root := t.TempDir()
	mk := func(p, content string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	line := "some avg10=1.82 avg60=0.72 avg300=0.17 total=641648\nfull avg10=1.08 avg60=0.41 avg300=0.09 total=408339\n"
	mk("proc/pressure/memory", line)
	mk("proc/vmstat", "pswpout 12\noom_kill 1\n")
	meminfo, err := os.ReadFile(filepath.Join(fixtures.Proc(t, "linux-6.18"), "meminfo"))
	if err != nil {
		t.Fatal(err)
	}
	mk("proc/meminfo", string(meminfo))
	mk("cg/memory.pressure", line)
	mk("cg/cgroup.procs", "")
	mk("cg/memory.events", "oom_kill 4\n")
	c, err := psi.NewCollector(filepath.Join(root, "proc"), psi.WithCgroup(filepath.Join(root, "cg")))
	if err != nil {
		t.Fatal(err)
	}
	lc, err := lru.NewCollector(filepath.Join(root, "proc"))
	if err != nil {
		t.Fatal(err)
	}
	sp := &record.Sampler{Sources: []record.Source{PSI{C: c}, LRU{C: lc},
		CgroupCounters{Dir: filepath.Join(root, "cg")}}}
	s := sp.Collect(context.Background())
	if len(s.Errors) != 0 {
		t.Fatalf("errors: %v", s.Errors)
	}
	if s.PSI.Memory == nil || s.PSI.Memory.Full.Total != 408339000 || s.PSI.IO != nil {
		t.Errorf("host PSI = %+v; want memory only, full total 408339 µs", s.PSI)
	}
	if s.CgroupPSI == nil || s.CgroupPSI.Memory.Some.Avg10 != 1.82 {
		t.Errorf("cgroup PSI = %+v", s.CgroupPSI)
	}
	if *s.VMStat.Pswpout != 12 || *s.VMStat.OOMKill != 1 || *s.CgroupVMStat.OOMKill != 4 || s.CgroupVMStat.Pswpout != nil {
		t.Errorf("counters: host %+v, cgroup %+v", s.VMStat, s.CgroupVMStat)
	}
}

// TestDiskstatsErrorNamesTheSourceOnce: a malformed /proc/diskstats line
// reaches the sample as the source's name, then the file and line, each
// once (the collector used to add "diskstats: " as the sampler does).
func TestDiskstatsErrorNamesTheSourceOnce(t *testing.T) {
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	for _, d := range []string{proc, sys} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Line 1 is vda from this CI host's kernel (testdata/linux-6.18); line 2
	// has "x" where reads completed should be.
	content := " 254       0 vda 89983 23257 5526546 53249 56417 38357 4616552 41197 0 24668 96845 6817 47 2342880 2149 3418 248\n" +
		" 254      16 vdb x 0 1 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n"
	if err := os.WriteFile(filepath.Join(proc, "diskstats"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	dc, err := diskio.NewDiskCollector(proc, sys, diskio.DiskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	s := (&record.Sampler{Sources: []record.Source{Disks{C: dc}}}).Collect(context.Background())
	want := "diskstats: " + filepath.Join(proc, "diskstats") + ":2: malformed line: expected integer"
	if len(s.Errors) != 1 || s.Errors[0] != want {
		t.Fatalf("errors = %q, want [%q]", s.Errors, want)
	}
}

func TestCgroupCountersV1(t *testing.T) {
	// lru's fixture of websvc's v1 memory group (lru/testdata/cgroupv1/SOURCE).
	var s record.Sample
	if err := (CgroupCountersV1{Dir: "../lru/testdata/cgroupv1"}).Fill(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	v := s.CgroupVMStat
	if v == nil || v.Pgmajfault == nil || *v.Pgmajfault != 0 || v.WorkingsetRefaultFile == nil || v.OOMKill == nil {
		t.Fatalf("CgroupVMStat = %+v, want total_pgmajfault, refaults and oom_kill", v)
	}
	// v1 has no per-group reclaim scan or swap counters: absent, not 0.
	if v.PgscanFile != nil || v.PgscanKswapd != nil || v.Pswpin != nil {
		t.Errorf("v1 counters it lacks are set: %+v", v)
	}
	if err := (CgroupCountersV1{Dir: t.TempDir()}).Fill(context.Background(), &s); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("not a v1 group: %v", err)
	}
}
