package diskio

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/fixtures"
)

// TestTopRSS ranks by stat's resident pages and splits RSS from status:
// /proc/PID/{stat,status} of two real processes (memstate's host618
// fixture: a hog in a 64 MiB cgroup and a sleep), each with a real
// /proc/PID/io file from the diskio poll fixture so the scanner keeps them.
func TestTopRSS(t *testing.T) {
	proc := filepath.Join(t.TempDir(), "proc")
	src := filepath.Join(fixtures.Dir(t), "..", "memstate", "testdata", "host618", "proc")
	io, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "diskio", "poll", "t0", "proc", "9225", "io"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []string{"12762", "13604"} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"stat", "status", "cgroup", "cmdline"} {
			b, err := os.ReadFile(filepath.Join(src, pid, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(proc, pid, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "io"), io, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewProcScanner(proc, ProcScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	const k = 1024
	// Values of the RssAnon/RssFile/RssShmem lines of the two status files;
	// stat field 24 (rss pages) orders them: 5535 pages before 390.
	want := []ProcRSS{
		{PID: 12762, StartTicks: 49399, Comm: "memdiag-mem-hog", AnonBytes: 20620 * k, FileBytes: 1660 * k},
		{PID: 13604, StartTicks: 51601, Comm: "sleep", AnonBytes: 108 * k, FileBytes: 1624 * k},
	}
	if d := cmp.Diff(want, s.TopRSS(10)); d != "" {
		t.Errorf("TopRSS (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[:1], s.TopRSS(1)); d != "" {
		t.Errorf("TopRSS(1) (-want +got):\n%s", d)
	}
}
