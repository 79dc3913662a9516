package memstate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memdiag/memdiag/process"
)

// faultRoot is a root whose proc holds two real processes of host618
// (12762, 13604), for a test to spoil one file of.
func faultRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "proc"), os.DirFS(filepath.Join(host618, "proc"))); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestProcsFaults (issue 29): a per-process file that is there but
// unusable is a fault of package process's policy — counted in
// ProcScan.Failed, the first named with its line in ProcScan.Fault —
// and leaves out only its process (status) or its figure, never the
// whole list. Before, a malformed status failed `mem` (exit 1) and a
// FIFO at stat, cmdline, cgroup or smaps_rollup was passed over without
// a word (smaps_rollup's said as needing root).
func TestProcsFaults(t *testing.T) {
	for _, tc := range []struct {
		file     string // of 13604
		fifo     bool
		text     string
		want     string // Fault's first file, after the proc root
		listed   int    // processes listed
		noPSS    int
		badField func(p Proc) bool
	}{
		{"status", false, "Name:\tx\nVmRSS:\tlots kB\n", `/13604/status:2: malformed line: VmRSS: "lots kB" is not a number of kB`, 1, 0, nil},
		{"status", true, "", "/13604/status: not a regular file (a FIFO); refusing to read it", 1, 0, nil},
		{"stat", true, "", "/13604/stat: not a regular file (a FIFO); refusing to read it", 2, 0, func(p Proc) bool { return p.Retention != nil }},
		{"stat", false, "13604 (x) S\n", "/13604/stat:1: malformed line: 3 fields, want at least 22", 2, 0, func(p Proc) bool { return p.Retention != nil }},
		{"smaps_rollup", true, "", "/13604/smaps_rollup: not a regular file (a FIFO); refusing to read it", 2, 0, func(p Proc) bool { return p.PSSBytes != nil }},
		{"cmdline", true, "", "/13604/cmdline: not a regular file (a FIFO); refusing to read it", 2, 0, func(p Proc) bool { return p.Cmdline != "" }},
		{"cgroup", true, "", "/13604/cgroup: not a regular file (a FIFO); refusing to read it", 2, 0, func(p Proc) bool { return p.Cgroup != "" }},
	} {
		name := tc.file
		if tc.fifo {
			name += "/fifo"
		}
		t.Run(name, func(t *testing.T) {
			root := faultRoot(t)
			f := filepath.Join(root, "proc", "13604", tc.file)
			os.Remove(f)
			var err error
			if tc.fifo {
				err = syscall.Mkfifo(f, 0o600)
			} else {
				err = os.WriteFile(f, []byte(tc.text), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewCollector(root)
			if err != nil {
				t.Fatal(err)
			}
			procs, scan, err := c.Procs(0)
			if err != nil {
				t.Fatalf("Procs: %v; one bad process must not stop the list", err)
			}
			if len(procs) != tc.listed || scan.Failed != 1 || scan.NoPSS != tc.noPSS {
				t.Errorf("%d processes listed, scan %+v; want %d, Failed 1, NoPSS %d", len(procs), scan, tc.listed, tc.noPSS)
			}
			var fe *process.FaultError
			if !errors.As(scan.Fault, &fe) || fe.N != 1 || !strings.HasSuffix(fe.First.Error(), tc.want) {
				t.Errorf("Fault = %v; want the first ending %q", scan.Fault, tc.want)
			}
			for _, p := range procs {
				if p.PID == 12762 && p.RSSBytes == 0 {
					t.Errorf("12762 lost its RSS: %+v", p)
				}
				if p.PID == 13604 && tc.badField != nil && tc.badField(p) {
					t.Errorf("13604 has a figure from its unusable %s: %+v", tc.file, p)
				}
			}
		})
	}
}

// TestProcsNoFault: the fixture as it is has no fault.
func TestProcsNoFault(t *testing.T) {
	c, err := NewCollector(faultRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, scan, err := c.Procs(0); err != nil || scan.Failed != 0 || scan.Fault != nil {
		t.Errorf("scan %+v, %v", scan, err)
	}
}
