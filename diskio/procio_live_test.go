package diskio

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/process"
)

// TestScanLiveHog runs the scanner over the real /proc while a hog in the
// cgroup memdiag-diskio-test.service writes 32 MiB with fsync, and checks
// that the bytes are attributed to the hog's PID and unit, and that its
// start and exit are events.
func TestScanLiveHog(t *testing.T) {
	testenv.RequireRoot(t, "a cgroup named like a systemd unit")
	hog := testenv.BuildHog(t)
	cg := testenv.NewCgroup(t, "memdiag-diskio-test.service", 512<<20)

	// /var/tmp, not t.TempDir(): /tmp may be tmpfs, which has no
	// write_bytes accounting.
	dir, err := os.MkdirTemp("/var/tmp", "memdiag-diskio-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	s, err := NewProcScanner("/proc", ProcScanOptions{TopN: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}

	const want = 32 << 20
	cmd := cg.Command(hog, "-write", strconv.Itoa(want), "-file", filepath.Join(dir, "out"), "-hold", "1500ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})

	var (
		attributed uint64
		sawExec    bool
		exit       *process.Event
		units      = map[string]bool{}
		selfWrite  uint64 // this test process's delta in the scan that sees the exit
	)
	deadline := time.Now().Add(60 * time.Second)
	exited := false
	for exit == nil && time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			if err != nil {
				t.Fatalf("hog: %v", err)
			}
			exited = true
		case <-time.After(200 * time.Millisecond):
		}
		top, events, _, err := s.Scan(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range top {
			if p.PID == pid {
				attributed += p.DeltaWriteBytes
				units[p.Unit] = true
			}
			if p.PID == os.Getpid() && exited {
				selfWrite += p.DeltaWriteBytes
			}
		}
		for _, e := range events {
			if e.PID != pid {
				continue
			}
			switch e.Kind {
			case process.Exec:
				if e.Comm == "hog" && e.Unit == "memdiag-diskio-test.service" {
					sawExec = true
				}
			case process.Exit:
				e := e
				exit = &e
			}
		}
	}
	t.Logf("hog pid %d: attributed %d bytes written, units %v, exit %+v", pid, attributed, units, exit)
	if lo, hi := uint64(want*9/10), uint64(want*11/10); attributed < lo || attributed > hi {
		t.Errorf("write bytes attributed to the hog = %d, want %d ±10%%", attributed, want)
	}
	if !units["memdiag-diskio-test.service"] {
		t.Errorf("hog's unit in top = %v, want memdiag-diskio-test.service", units)
	}
	if !sawExec {
		t.Error("no exec event for the hog with comm hog and its unit")
	}
	if exit == nil {
		t.Fatal("no exit event for the hog")
	}
	if exit.Comm != "hog" || exit.Unit != "memdiag-diskio-test.service" || exit.WriteBytes < want*9/10 {
		t.Errorf("exit event = %+v; want comm hog, unit memdiag-diskio-test.service, >= 90%% of %d written", exit, want)
	}
	// The test reaped the hog, so the kernel added the hog's I/O to this
	// process's counters; the scanner must not show it again here.
	if selfWrite > 1<<20 {
		t.Errorf("test process (the hog's parent) credited with %d bytes written after the reap; want < 1 MiB", selfWrite)
	}
}
