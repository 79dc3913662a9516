package memstate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testutil"
)

// FuzzProcs runs what `memdiag mem` runs over every process, Collector.Procs
// (its /proc/PID/status reader, then package process's jailed readers
// of cmdline, smaps_rollup, cgroup and stat), over any status and cgroup file of one process. Each
// input is written to <root>/proc/1/ of a root made once per fuzzing
// worker. It checks that nothing panics or hangs, that a malformed file
// is a fault naming it (not an error of the whole list), and that the
// RSS kept is the VmRSS written.
func FuzzProcs(f *testing.F) {
	for _, d := range []string{"testdata/host618/proc/12762", "testdata/host618/proc/13604", "testdata/uml61/proc/700"} {
		st, err := os.ReadFile(d + "/status")
		if err != nil {
			f.Fatal(err)
		}
		cg, err := os.ReadFile(d + "/cgroup")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(testutil.Head(st), testutil.Head(cg)) // whole files when not fuzzing
	}
	f.Add([]byte("Name:\tx\nUid:\t0\t0\t0\t0\t0\nVmRSS:\t4 kB\n"), []byte("0::/\n"))
	f.Add([]byte("Name:\tx\nCpus_allowed_list:\t0-18446744073709551615\nVmRSS:\t4 kB\n"), []byte("0::/\n"))
	f.Add([]byte("VmRSS:\t18014398509481984 kB\n"), []byte("0::/system.slice/a.service\n"))
	root := testutil.FuzzRoot(f, "proc/1")
	dir := filepath.Join(root, "proc", "1")
	c, err := NewCollector(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status, cgroup []byte) {
		testutil.WriteInput(t, filepath.Join(dir, "status"), status)
		testutil.WriteInput(t, filepath.Join(dir, "cgroup"), cgroup)
		procs, scan, err := c.Procs(0)
		if err != nil {
			t.Fatalf("Procs failed on one process's files: %v", err) // only /proc itself fails it
		}
		if scan.Fault != nil && !strings.Contains(scan.Fault.Error(), dir+"/") {
			t.Fatalf("fault does not name the file: %v", scan.Fault)
		}
		if (scan.Fault == nil) != (scan.Failed == 0) {
			t.Fatalf("Failed %d, Fault %v", scan.Failed, scan.Fault)
		}
		for _, p := range procs {
			if p.PID != 1 {
				t.Fatalf("PID %d, only 1 exists", p.PID)
			}
			want, err := parseStatus(status)
			if err != nil || want.VmRSS != p.RSSBytes {
				t.Fatalf("RSS %d, status says %d (%v)", p.RSSBytes, want.VmRSS, err)
			}
		}
	})
}

// TestStatusFuzzFindings: what FuzzProcs found in procfs's status parser,
// which memstate used until its own: a fifth Uid value panicked (index out
// of range), and a Cpus_allowed_list range to 2^64-1 never ended. Neither
// field is read now; a VmRSS past 2^64 bytes is an error naming the line.
func TestStatusFuzzFindings(t *testing.T) {
	s, err := parseStatus([]byte("Name:\tx\nUid:\t0\t0\t0\t0\t0\nCpus_allowed_list:\t0-18446744073709551615\nVmRSS:\t   4 kB\nRssAnon:\t1 kB\n"))
	if err != nil || s.Name != "x" || s.VmRSS != 4096 || s.RssAnon != 1024 {
		t.Errorf("parseStatus = %+v, %v; want Name x, VmRSS 4096, RssAnon 1024", s, err)
	}
	proc := filepath.Join(t.TempDir(), "proc")
	path := filepath.Join(proc, "1", "status")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("Name:\tx\nVmRSS:\t18014398509481984 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := path + ":2: malformed line: VmRSS: 18014398509481984 kB is past 2^64 bytes"
	if _, err := readStatus(proc, 1); err == nil || err.Error() != want || !errors.Is(err, ErrParse) {
		t.Errorf("VmRSS past 2^64 bytes: %v, want %q wrapping ErrParse", err, want)
	}
}

// TestKernelLogFuzzFindings: what FuzzParseKernelLog found: "Killed
// process 0" made a kill with PID 0. Such a line is not a kill the kernel
// writes and is left out.
func TestKernelLogFuzzFindings(t *testing.T) {
	boot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, line := range []string{
		"Killed process 0 () total-vm:0kB, anon-rss:0kB, file-rss:0kB",
	} {
		kills, err := parseKernelLog(strings.NewReader(line+"\n"), "kmsg", boot)
		if err != nil || len(kills) != 0 {
			t.Errorf("%q: %+v, %v; want no kill", line, kills, err)
		}
	}
	kills, err := parseKernelLog(strings.NewReader("Killed process 13919 (hog) total-vm:1292960kB, anon-rss:32384kB, file-rss:1660kB, shmem-rss:0kB, UID:0 pgtables:160kB oom_score_adj:0\n"), "kmsg", boot)
	if err != nil || len(kills) != 1 || kills[0].PID != 13919 || kills[0].Comm != "hog" || kills[0].AnonRSSBytes != 32384*1024 {
		t.Errorf("a real kill line: %+v, %v", kills, err)
	}
}
