package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/internal/testutil"
)

// TestAnalyzeEndsOnSignalWhileReading: analyze reading a recording from a
// FIFO whose writer stalls (a zcat that hangs, a pipe never closed) ends
// when its context is cancelled — what Ctrl-C and SIGTERM do — with exit
// 130, instead of waiting for the writer forever.
func TestAnalyzeEndsOnSignalWhileReading(t *testing.T) {
	rec, err := os.ReadFile(writeRecording(t))
	if err != nil {
		t.Fatal(err)
	}
	endsWhileReading(t, rec[:len(rec)/2], func(fifo string) []string { return []string{"analyze", fifo} }) // the header and some samples, then a stall
}

// endsWhileReading runs memdiag with args(fifo), where fifo's writer
// writes data and then stalls, cancels the command's context once it
// has read all of data (what SIGINT does), and wants exit 130 within 30
// s.
func endsWhileReading(t *testing.T, data []byte, args func(fifo string) []string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "in")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	drained := make(chan struct{})
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.Write(data) // part of the input, then a stall
		if fifoDrained(w, release) {
			close(drained)
		}
		<-release
	}()
	ios, _, _, _ := iostreams.Test()
	endsOnCancel(t, ios, args(fifo), func(ended <-chan struct{}) {
		select {
		case <-drained: // all read: memdiag reads on, or waits for more
		case <-ended:
			t.Fatalf("%s ended before it read all of %s", args(fifo)[0], fifo)
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s did not read the %d bytes written to %s in 2 min", args(fifo)[0], len(data), fifo)
		}
	})
}

// fifoDrained waits until nothing written to w is left unread in the
// pipe (FIONREAD, unix.TIOCINQ on Linux, which pipe_ioctl answers for
// either end: fs/pipe.c), looking every 10 ms; false if release is
// closed first.
func fifoDrained(w *os.File, release <-chan struct{}) bool {
	rc, err := w.SyscallConn()
	if err != nil {
		return false
	}
	for {
		n := -1
		rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
		if n == 0 {
			return true
		}
		select {
		case <-release:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// endsOnCancel runs memdiag with argv and ios, cancels the command's
// context once ready has returned (memdiag reads, or waits to; ready is
// given a channel closed if it has ended, and fails the test then or
// after its own hang bound), and wants exit 130 within 2 min (a hang
// bound: it ends at once). The wait replaces a fixed sleep: a goroutine
// starved of CPU (CI's fresh clone as nobody runs at SCHED_IDLE) may not
// have reached its read in 300 ms, and a cancel before it checks less.
func endsOnCancel(t *testing.T, ios *iostreams.IOStreams, argv []string, ready func(ended <-chan struct{})) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errOut := ios.ErrOut
	done := make(chan int, 1)
	ended := make(chan struct{})
	go func() { done <- execute(ctx, &factory{IO: ios, Now: time.Now, Root: "/"}, argv); close(ended) }()
	ready(ended)
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupt {
			t.Errorf("exit %d, want %d; stderr %s", code, exitInterrupt, errOut)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not end in 2 min after its context was cancelled", argv[0])
	}
}

// TestStdinEndsOnSignalWhileReading (issue 29): every input that can be
// - (standard input), read from a terminal nobody types on or a pipe
// whose writer never writes, ends on Ctrl-C (its context cancelled) with
// exit 130. Before, Go's blocking read of stdin went on until the next
// byte, and SIGINT was honoured only then.
func TestStdinEndsOnSignalWhileReading(t *testing.T) {
	rec := writeRecording(t)
	cases := map[string][]string{
		"analyze REC":              {"analyze", "-"},
		"analyze --latency":        {"analyze", rec, "--latency", "-"},
		"compare BEFORE":           {"compare", "-", rec},
		"compare --latency-before": {"compare", rec, rec, "--latency-before", "-"},
		"gate --recording":         {"gate", "-t", "memory.some.avg10<50%", "--recording", "-"},
		"gate --thresholds":        {"gate", "--thresholds", "-", "--recording", rec},
	}
	for in, f := range testutil.SilentStdins(t) {
		for name, argv := range cases {
			t.Run(in+"/"+name, func(t *testing.T) {
				ios, _, _, _ := iostreams.Test()
				ios.In = f
				endsOnCancel(t, ios, argv, func(ended <-chan struct{}) {
					testutil.WaitPollingOn(t, os.Getpid(), testutil.FdOf(t, f), 2*time.Minute, ended)
				})
			})
		}
	}
}

// fastTimerRoot is a root with one timer firing every 4 s: `timers --to
// 8w` projects and lists a million firings, which takes seconds.
func fastTimerRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	units := filepath.Join(root, "etc/systemd/system")
	if err := os.MkdirAll(filepath.Join(units, "timers.target.wants"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"fast.timer":   "[Timer]\nOnCalendar=*:*:0/4\n\n[Install]\nWantedBy=timers.target\n",
		"fast.service": "[Service]\nExecStart=/bin/true\n",
	} {
		if err := os.WriteFile(filepath.Join(units, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../fast.timer", filepath.Join(units, "timers.target.wants/fast.timer")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestTimersEndsOnSIGINT (issue 31.3): `timers --to 8w` over a million
// firings, sent SIGINT (Ctrl-C) while it projects (about 5 s here) or
// later, ends at once (within a second on a quiet host) with exit 130,
// like every other command.
// Its standard output is a pipe nobody reads until it has ended (a
// pager that waits): whatever phase the 7 s signal finds it in — still
// projecting on a loaded host, rendering, or blocked writing a listing
// larger than the pipe holds — it is still running then, and must end.
// iostreams.TestRenderUnlessDone covers the rendering alone.
func TestTimersEndsOnSIGINT(t *testing.T) {
	t.Parallel() // its own binaries and files: beside the others
	bin := testenv.BuildMemdiag(t)
	root := fastTimerRoot(t)
	for _, after := range []time.Duration{300 * time.Millisecond, 7 * time.Second} {
		t.Run(after.String(), func(t *testing.T) {
			c := exec.Command(bin, "timers", "--root", root, "--base-time", "2026-12-05T12:00:00Z", "--tz", "UTC", "--to", "8w")
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			var errOut bytes.Buffer
			c.Stdout, c.Stderr = pw, &errOut
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			time.Sleep(after)
			select {
			case err := <-done:
				t.Fatalf("timers ended (%v) before SIGINT at %s, with its output unread; stderr %q", err, after, errOut.String())
			default:
			}
			took, err := interruptAndWait(t, c, done)
			n, _ := io.Copy(io.Discard, pr)
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			// It ends within a second here when the host is quiet; the
			// bound asserted is the hang's (the bug: blocked writing to
			// the pipe for good; interruptAndWait's 2 min), not a
			// timing: under a loaded runner 1.03 and 1.15 s were seen,
			// and at SCHED_IDLE on a busy host (the fresh clone as
			// nobody) its end waits for the CPU as long as the host
			// keeps it busy.
			t.Logf("ended %s after SIGINT", took.Round(time.Millisecond))
			if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT &&
				after < time.Second {
				// Killed by the signal itself: it came before memdiag's
				// main set its handler, as for any program interrupted
				// while it starts (timers records nothing to lose). Seen
				// in the fresh clone as nobody (SCHED_IDLE, beside the
				// suite), whose start took more than 300 ms. Not a hang.
				t.Logf("SIGINT at %s came before memdiag's handler was set (a starved start)", after)
				return
			}
			if code != exitInterrupt {
				t.Errorf("exit %d %s after SIGINT (%d bytes of output); want %d; stderr %q",
					code, took.Round(time.Millisecond), n, exitInterrupt, errOut.String())
			}
		})
	}
}

// interruptAndWait sends c SIGINT and returns how long after the signal
// c ended and its end (from done, which receives c.Wait's error); c
// still running 2 min after it is killed and fails the test (a hang:
// it ends at once on a quiet host, in seconds on a starved one).
func interruptAndWait(t *testing.T, c *exec.Cmd, done <-chan error) (time.Duration, error) {
	t.Helper()
	sent := time.Now()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		return time.Since(sent), err
	case <-time.After(2 * time.Minute):
		c.Process.Kill()
		<-done
		t.Fatalf("%s still running 2 min after SIGINT", c.Args[1])
		return 0, nil
	}
}

// TestGateEndsOnSignalWhileReading: gate's --thresholds and --recording
// from a FIFO whose writer stalls after part of the file; cancelling the
// context (what SIGINT does) ends gate with the interrupt exit code.
// Before, both were read without the command's context and gate waited
// for the writer.
func TestGateEndsOnSignalWhileReading(t *testing.T) {
	rec, err := os.ReadFile(writeRecording(t))
	if err != nil {
		t.Fatal(err)
	}
	recPath := writeRecording(t)
	for _, tc := range []struct {
		name string
		data []byte
		args func(fifo string) []string
	}{
		{"thresholds", []byte("memory.some.avg10<50%\n"), func(fifo string) []string {
			return []string{"gate", "--thresholds", fifo, "--recording", recPath}
		}},
		{"recording", rec[:len(rec)/2], func(fifo string) []string {
			return []string{"gate", "-t", "memory.some.avg10<50%", "--recording", fifo}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { endsWhileReading(t, tc.data, tc.args) })
	}
}

// TestLatencyStdinEndsOnSIGINT (issue 29): the built memdiag, `analyze
// REC --latency -` with standard input a terminal nobody types on, sent
// SIGINT while it waits for input there, ends with exit 130 (within a
// second on a quiet host; the bound asserted is the hang's, 2 min, as in
// TestTimersEndsOnSIGINT). The signal is sent once memdiag is seen
// waiting on the terminal (testutil.WaitPollingOn), not after a fixed
// sleep: a start starved of CPU (CI's fresh clone as nobody, at
// SCHED_IDLE beside the suite) may not have reached main's handler in
// 500 ms, and SIGINT's default action would then kill it.
func TestLatencyStdinEndsOnSIGINT(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildMemdiag(t)
	rec := writeRecording(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	c := exec.Command(bin, "analyze", rec, "--latency", "-")
	var out, errOut bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = tty, &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ended := make(chan struct{})
	go func() { done <- c.Wait(); close(ended) }()
	t.Cleanup(func() {
		c.Process.Kill() // still running only when the test failed before SIGINT
		<-ended
		if t.Failed() {
			t.Logf("stderr %q", errOut.String())
		}
	})
	// Blocked waiting on its standard input, fd 0: main's handler is set.
	testutil.WaitPollingOn(t, c.Process.Pid, 0, 2*time.Minute, ended)
	took, err := interruptAndWait(t, c, done)
	t.Logf("ended %s after SIGINT", took.Round(time.Millisecond))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupt {
		t.Errorf("%v %s after SIGINT; want exit %d; stderr %q", err, took.Round(time.Millisecond), exitInterrupt, errOut.String())
	}
}
