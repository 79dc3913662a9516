package supervise

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func start(t *testing.T, o Options) *Child {
	t.Helper()
	c, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExitedByItself(t *testing.T) {
	var out bytes.Buffer
	c := start(t, Options{Args: []string{"sh", "-c", "read x; echo got $x; exit 7"}, Stdin: strings.NewReader("hello\n"), Stdout: &out})
	r := c.Result()
	if r.ExitCode != 7 || r.Signal != "" || r.StoppedBy != "" || !r.Failed() {
		t.Errorf("result = %+v, want exit 7, failed", r)
	}
	// The injected stdin reached the command, its stdout came back.
	if out.String() != "got hello\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if got := r.Describe(); got != "exit code 7" {
		t.Errorf("Describe() = %q", got)
	}
	// Stop after the command ended by itself, with no reason: its own outcome.
	if r2 := c.Stop(""); r2.ExitCode != 7 || r2.StoppedBy != "" {
		t.Errorf("Stop(\"\") = %+v, want %+v", r2, r)
	}
}

func TestKilledBySignalOfItsOwn(t *testing.T) {
	c := start(t, Options{Args: []string{"sh", "-c", "kill -KILL $$"}})
	r := c.Result()
	if r.ExitCode != 137 || r.Signal != "SIGKILL" || !r.Failed() {
		t.Errorf("result = %+v, want 137 SIGKILL failed", r)
	}
	if got := r.Describe(); got != "exit code 137 (killed by SIGKILL)" {
		t.Errorf("Describe() = %q", got)
	}
}

func TestStopTerm(t *testing.T) {
	c := start(t, Options{Args: []string{"sleep", "30"}})
	r := c.Stop("duration")
	if r.ExitCode != 143 || r.Signal != "SIGTERM" || r.StoppedBy != "duration" || r.Killed || r.Failed() {
		t.Errorf("result = %+v, want 143 SIGTERM stopped by duration, not failed", r)
	}
	if got := r.Describe(); got != "exit code 143 (memdiag sent SIGTERM: --duration was over)" {
		t.Errorf("Describe() = %q", got)
	}
}

// A command that ignores SIGTERM is killed after the grace period.
func TestStopKillAfterGrace(t *testing.T) {
	c := start(t, Options{Args: []string{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}, Stdout: &syncReady{ch: make(chan struct{})}, Grace: 300 * time.Millisecond})
	<-c.cmd.Stdout.(*syncReady).ch // the trap is set
	t0 := time.Now()
	r := c.Stop("signal: SIGTERM")
	if r.ExitCode != 137 || r.Signal != "SIGKILL" || !r.Killed || r.StoppedBy != "signal: SIGTERM" || r.Failed() {
		t.Errorf("result = %+v, want SIGKILL after the grace", r)
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("killed after %s, before the 300ms grace", d)
	}
}

func TestStartFails(t *testing.T) {
	if _, err := Start(Options{Args: []string{"/nonexistent/memdiag-test-cmd"}}); err == nil {
		t.Error("Start of a missing program: no error")
	}
}

// syncReady closes ch at the first write.
type syncReady struct {
	ch   chan struct{}
	done bool
}

func (s *syncReady) Write(b []byte) (int, error) {
	if !s.done {
		s.done = true
		close(s.ch)
	}
	return len(b), nil
}

// A shell's child (watch -- sh -c 'vegeta …', then kill -INT to memdiag)
// is stopped with the shell, not left running under init.
func TestStopReachesGrandchild(t *testing.T) {
	ready := &syncReady{ch: make(chan struct{})}
	pidFile := t.TempDir() + "/pid"
	c := start(t, Options{Args: []string{"sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > " + pidFile + "; echo ready; wait"}, Stdout: ready})
	<-ready.ch
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := StartOf(pid); !ok {
		t.Fatalf("sleep %d not running before Stop", pid)
	}
	c.Stop("signal: SIGINT")
	// Gone at once on a quiet host; the bound is a hang's, not a timing:
	// sleep shares the test's CPU priority, and at SCHED_IDLE on a busy
	// host (CI's fresh clone as nobody) the exit the signal asks of it
	// can wait seconds for the CPU (a zombie counts as gone).
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, ok := StartOf(pid); !ok {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the command's child sleep %d still runs after Stop", pid)
}

// TestDieWithParent: a command started with DieWithParent ends when the
// process that started it is killed with SIGKILL (no Stop ever runs); one
// started without it outlives its parent. The parent is this test binary
// run again as a helper (TestDieWithParentHelper).
func TestDieWithParent(t *testing.T) {
	for _, die := range []bool{true, false} {
		helper := exec.Command(os.Args[0], "-test.run=^TestDieWithParentHelper$")
		helper.Env = append(os.Environ(), "MEMDIAG_SUPERVISE_HELPER=1", fmt.Sprintf("MEMDIAG_SUPERVISE_DIE=%v", die))
		out, err := helper.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Fscan(out, &pid); err != nil || pid <= 0 {
			helper.Process.Kill()
			t.Fatalf("the helper did not say its child's PID: %v", err)
		}
		_ = helper.Process.Kill()
		_ = helper.Wait()
		gone := false
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			// The orphan is reparented and reaped by init or a subreaper;
			// until then it is a zombie, which counts as gone.
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil || strings.Contains(string(b), ") Z ") {
				gone = true
				break
			}
			if !die {
				break
			}
		}
		if gone != die {
			t.Errorf("DieWithParent %v: the command gone after its parent's SIGKILL: %v", die, gone)
		}
		if !gone {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestDieWithParentHelper is TestDieWithParent's parent process: it
// starts sleep, prints its PID and waits to be killed.
func TestDieWithParentHelper(t *testing.T) {
	if os.Getenv("MEMDIAG_SUPERVISE_HELPER") != "1" {
		t.Skip("helper of TestDieWithParent")
	}
	c, err := Start(Options{Args: []string{"sleep", "30"}, DieWithParent: os.Getenv("MEMDIAG_SUPERVISE_DIE") == "true"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(c.PID())
	time.Sleep(30 * time.Second)
}

// TestAwait: Await waits for the command to end by itself, up to its
// bound or until cut is closed, and says whether it has; a command that
// ended after memdiag was told to stop, without memdiag's signal, is
// described so (not "memdiag sent SIGTERM").
func TestAwait(t *testing.T) {
	c, err := Start(Options{Args: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Await(50*time.Millisecond, nil) {
		t.Error("Await: sleep 60 ended within 50 ms")
	}
	cut := make(chan struct{})
	close(cut)
	if c.Await(time.Hour, cut) { // returns at once: cut is closed
		t.Error("Await with cut closed: sleep 60 ended")
	}
	if r := c.Stop("signal: SIGINT"); !r.Sent || !strings.Contains(r.Describe(), "memdiag sent SIGTERM") {
		t.Errorf("stopped: %+v, %q; want Sent and memdiag's SIGTERM said", r, r.Describe())
	}
	c, err = Start(Options{Args: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Await(2*time.Minute, nil) { // a hang's bound
		t.Fatal("Await: true did not end")
	}
	r := c.Stop("signal: SIGINT")
	if want := "exit code 0 (it ended by itself after memdiag received SIGINT)"; r.Sent || r.Describe() != want || r.Failed() {
		t.Errorf("ended by itself: %+v, %q; want %q, not failed", r, r.Describe(), want)
	}
}
