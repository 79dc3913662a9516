package diskio

import (
	"os/exec"
	"testing"
	"time"

	"github.com/memdiag/memdiag/process"
)

// TestScanKeepsFilesOpen checks the procfs mode of the scanner: a
// process's stat and io stay open between scans, are closed when it
// exits (its exit still reported), and Close releases the rest.
func TestScanKeepsFilesOpen(t *testing.T) {
	s, err := NewProcScanner("/proc", ProcScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.keepOpen {
		t.Fatal("keepOpen = false on /proc, want true (procfs)")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	now := time.Now()
	for i := 0; i < 2; i++ { // baseline, then a scan that re-reads kept files
		now = now.Add(time.Second)
		if _, _, _, err := s.Scan(now); err != nil {
			t.Fatal(err)
		}
	}
	st := s.procs[pid]
	if st == nil || st.statFD < 0 || st.ioFD < 0 {
		t.Fatalf("state of the child %d = %+v, want stat and io kept open", pid, st)
	}
	held := 0
	for _, p := range s.procs {
		for _, fd := range []int{p.statFD, p.ioFD} {
			if fd >= 0 {
				held++
			}
		}
	}
	if held != s.nOpen {
		t.Errorf("%d descriptors held by process states, nOpen = %d", held, s.nOpen)
	}

	cmd.Process.Kill()
	cmd.Wait()
	now = now.Add(time.Second)
	_, evs, _, err := s.Scan(now)
	if err != nil {
		t.Fatal(err)
	}
	var exited bool
	for _, e := range evs {
		if e.PID == pid && e.Kind == process.Exit && e.Comm == "sleep" {
			exited = true
		}
	}
	if !exited {
		t.Errorf("no exit event for the reaped child %d in %+v", pid, evs)
	}
	if s.procs[pid] != nil {
		t.Errorf("the reaped child %d is still tracked", pid)
	}
	held = 0
	for _, p := range s.procs {
		for _, fd := range []int{p.statFD, p.ioFD} {
			if fd >= 0 {
				held++
			}
		}
	}
	if held != s.nOpen {
		t.Errorf("after the exit: %d descriptors held by process states, nOpen = %d", held, s.nOpen)
	}
	s.Close()
	if s.nOpen != 0 || s.rootfd != -1 {
		t.Errorf("after Close: nOpen = %d, rootfd = %d; want 0 and -1", s.nOpen, s.rootfd)
	}
}
