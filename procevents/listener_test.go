package procevents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestListenerShortChildren runs children that each live well under a
// second and write a known number of bytes, and checks that every exec and
// exit is received with the child's own write_bytes from taskstats.
func TestListenerShortChildren(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector and taskstats (CAP_NET_ADMIN)")
	l, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.Start(ctx)
	defer func() { cancel(); l.Close(); l.Wait() }()
	time.Sleep(100 * time.Millisecond)

	dir := t.TempDir()
	const n, size = 5, 4 << 20
	var pids []int
	for i := 0; i < n; i++ {
		c := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, fmt.Sprint(i)), "bs=1M", fmt.Sprintf("count=%d", size>>20), "conv=fsync", "status=none")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("dd: %v %s", err, out)
		}
		pids = append(pids, c.Process.Pid)
	}
	time.Sleep(300 * time.Millisecond)
	evs, st := l.Drain()
	if st.LostKernel != 0 || st.LostBuffer != 0 {
		t.Errorf("lost events: %+v", st)
	}
	for _, pid := range pids {
		var exec, exit bool
		for _, e := range evs {
			if e.PID != pid {
				continue
			}
			switch e.Kind {
			case "exec":
				exec = true
				if e.Comm != "dd" {
					t.Errorf("pid %d exec comm %q, want dd", pid, e.Comm)
				}
			case "exit":
				exit = true
				if e.Source != "taskstats" || e.Comm != "dd" {
					t.Errorf("pid %d exit = %+v, want taskstats record of dd", pid, e)
				}
				if e.WriteBytes != size {
					t.Errorf("pid %d wrote %d bytes per taskstats, want %d", pid, e.WriteBytes, size)
				}
			}
		}
		if !exec || !exit {
			t.Errorf("pid %d: exec seen %v, exit seen %v", pid, exec, exit)
		}
	}
	_ = os.RemoveAll(dir)
}
