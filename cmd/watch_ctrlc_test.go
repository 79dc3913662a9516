package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// TestWatchCtrlCLetsCommandFinish: a Ctrl-C typed in the terminal goes
// to memdiag and to the command it wraps (they share the terminal's
// foreground process group), and a load tool ends on it by writing its
// results (hey -o csv). memdiag must let it: wait for it to end by
// itself instead of sending SIGTERM at once (which killed hey 2 ms after
// the Ctrl-C, before it wrote a line). Here the command, a shell whose
// INT trap takes 0.5 s to write its "results", runs under watch on a
// real pseudo-terminal, and the Ctrl-C is the terminal's (^C written to
// the pty: its line discipline signals the foreground group).
func TestWatchCtrlCLetsCommandFinish(t *testing.T) {
	t.Parallel() // its own processes and terminal
	bin := testenv.BuildMemdiag(t)
	dir := t.TempDir()
	ready, saved, rec := filepath.Join(dir, "ready"), filepath.Join(dir, "saved"), filepath.Join(dir, "r.jsonl")
	script := `trap 'sleep 0.5; echo saved > "$2"; exit 0' INT; echo ready > "$1"; while :; do sleep 0.2; done`
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	c := exec.Command(bin, "watch", "--interval", "200ms", "--out", rec, "--no-timers", "-q", "--", "sh", "-c", script, "sh", ready, saved)
	var errOut bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = tty, tty, &errOut
	// Its own session, the pty its controlling terminal, its process
	// group the terminal's foreground one: as in a shell.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(ptmx) }() // the terminal's output, unread
	t.Cleanup(func() {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // still running only when the test failed
		if t.Failed() {
			t.Logf("stderr %q", errOut.String())
		}
	})
	for i := 0; ; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if i == 2400 { // 2 min: a hang's bound
			t.Fatalf("the command never started; stderr %q", errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := ptmx.Write([]byte{3}); err != nil { // ^C
		t.Fatal(err)
	}
	var werr error
	select {
	case werr = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("watch still running 2 min after Ctrl-C")
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		t.Errorf("watch exit %d after Ctrl-C, want 0", ee.ExitCode())
	}
	if b, err := os.ReadFile(saved); err != nil || strings.TrimSpace(string(b)) != "saved" {
		t.Errorf("the command's results after Ctrl-C: %q, %v; want them written (it was given the time to end)", b, err)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	const want = "signal: SIGINT: command exit code 0 (it ended by itself after memdiag received SIGINT)"
	if r.End == nil || r.End.Reason != want {
		t.Errorf("end line %+v, want reason %q", r.End, want)
	}
	if !strings.Contains(errOut.String(), "the command got the Ctrl-C too") {
		t.Errorf("stderr %q does not say it waits for the command", errOut.String())
	}
}
