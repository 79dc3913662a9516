// Package supervise runs the command that `memdiag watch -- CMD` and
// `memdiag gate -- CMD` wrap, under one policy for both:
//
//   - The command inherits memdiag's stdin, stdout and stderr (the streams
//     given in [Options]) and its process group, so a Ctrl-C typed in the
//     terminal reaches it directly, as it would without memdiag.
//   - When memdiag stops first (a signal, --duration), [Child.Stop] sends
//     SIGTERM to the command and to every process it started, still
//     running (its descendants by /proc/PID/stat ppid, read before the
//     signal: `sh -c 'vegeta …'` must not leave vegeta running under
//     init), waits up to [Grace] for the command to exit, and then sends
//     SIGKILL to whatever of them is left. Not by process group: the
//     command shares memdiag's, so that the terminal's Ctrl-C reaches it.
//     After that Ctrl-C ([InForeground]) the caller first gives the
//     command up to [Grace] to end by itself ([Child.Await]): a load tool
//     writes its results as it ends on Ctrl-C.
//   - The exit code is the command's own, or 128+N when signal N killed it,
//     as a shell reports it. A command memdiag stopped, or that ended after
//     memdiag itself was told to stop, did not fail ([Result.Failed]).
package supervise

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Grace is how long [Child.Stop] waits after SIGTERM before SIGKILL.
const Grace = 10 * time.Second

// StopSignal is what [Child.Stop] sends first.
const StopSignal = syscall.SIGTERM

// Options are the command and the streams it gets.
type Options struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Grace overrides [Grace] (tests).
	Grace time.Duration
	// DieWithParent has the kernel send the command StopSignal when
	// memdiag dies (PR_SET_PDEATHSIG), SIGKILL included, so that it does
	// not run on unsupervised: confirm's load, which would go on loading
	// the host after a killed experiment. Only the command itself gets
	// the signal, not processes it started.
	DieWithParent bool
}

// Result is how the command ended.
type Result struct {
	Args     []string
	ExitCode int    // the command's exit status; 128+N when signal N killed it
	Signal   string // the signal that killed it ("SIGTERM"), or ""
	// StoppedBy says why memdiag ended the command ("duration",
	// "interrupt", "SIGTERM", ...); "" when it ended by itself.
	StoppedBy string
	// Sent: memdiag sent it StopSignal. Without, a command with a
	// StoppedBy ended by itself after memdiag was told to stop (the
	// terminal's Ctrl-C reaches both).
	Sent   bool
	Killed bool // it outlived the grace period and got SIGKILL
}

// Failed reports whether the command failed on its own: a non-zero exit
// or a signal memdiag did not cause.
func (r Result) Failed() bool { return r.StoppedBy == "" && r.ExitCode != 0 }

// Describe says how the command ended, for reports and end lines:
// "exit code 0", "exit code 137 (killed by SIGKILL)", or, when memdiag
// ended it, "exit code 143 (memdiag sent SIGTERM: --duration was over)".
// A signal memdiag sent is never called a kill of the command's own.
func (r Result) Describe() string {
	s := fmt.Sprintf("exit code %d", r.ExitCode)
	switch {
	case r.StoppedBy != "" && !r.Sent:
		s += " (it ended by itself after " + stopWhy(r.StoppedBy) + ")"
	case r.StoppedBy != "":
		s += " (memdiag sent " + unix.SignalName(StopSignal) + ": " + stopWhy(r.StoppedBy)
		if r.Killed {
			s += "; SIGKILL after the grace period"
		}
		s += ")"
	case r.Signal != "":
		s += " (killed by " + r.Signal + ")"
	}
	return s
}

// stopWhy words a StoppedBy reason for Describe.
func stopWhy(why string) string {
	switch {
	case why == "duration":
		return "--duration was over"
	case strings.HasPrefix(why, "signal: "):
		return "memdiag received " + strings.TrimPrefix(why, "signal: ")
	case why == "write error":
		return "the recording could not be written"
	case strings.HasPrefix(why, "abort-on-fail: "):
		return "--abort-on-fail: " + strings.TrimPrefix(why, "abort-on-fail: ")
	}
	return why
}

// Child is a started command.
type Child struct {
	cmd   *exec.Cmd
	grace time.Duration
	done  chan struct{}
	res   Result
}

// Start starts the command. The error is the one exec gives (not found,
// not executable).
func Start(o Options) (*Child, error) {
	if len(o.Args) == 0 {
		return nil, errors.New("no command")
	}
	c := exec.Command(o.Args[0], o.Args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = o.Stdin, o.Stdout, o.Stderr
	if o.DieWithParent {
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: StopSignal}
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	ch := &Child{cmd: c, grace: o.Grace, done: make(chan struct{}), res: Result{Args: o.Args}}
	if ch.grace <= 0 {
		ch.grace = Grace
	}
	go func() {
		_ = c.Wait() // the outcome is in ProcessState
		ch.res.ExitCode, ch.res.Signal = exitOf(c.ProcessState)
		close(ch.done)
	}()
	return ch, nil
}

// PID is the command's process ID.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Done is closed when the command has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Exited reports whether the command has exited.
func (c *Child) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Stop ends the command if it is still running — StopSignal, then SIGKILL
// after the grace period — and returns how it ended, with why in
// Result.StoppedBy. For a command that had already exited, why is kept
// as given: a command that died of the Ctrl-C the terminal sent to it and
// to memdiag at once was stopped, not failed; pass "" to keep its own
// outcome.
func (c *Child) Stop(why string) Result {
	if !c.Exited() {
		desc := descendants(c.cmd.Process.Pid)
		c.res.Sent = true
		_ = c.cmd.Process.Signal(StopSignal)
		for pid := range desc {
			_ = unix.Kill(pid, StopSignal)
		}
		deadline := time.Now().Add(c.grace)
		t := time.NewTimer(c.grace)
		select {
		case <-c.done:
			t.Stop()
		case <-t.C:
			_ = c.cmd.Process.Kill()
			<-c.done
			c.res.Killed = true
		}
		// The processes it started get the rest of the grace period,
		// then SIGKILL; a PID that is another process by now (reused,
		// other start time) is left alone.
		for len(desc) > 0 {
			for pid, start := range desc {
				if st, ok := StartOf(pid); !ok || st != start {
					delete(desc, pid)
				}
			}
			if len(desc) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for pid := range desc {
			_ = unix.Kill(pid, syscall.SIGKILL)
		}
		if why == "" {
			why = "memdiag stopped"
		}
	}
	<-c.done
	r := c.res
	r.StoppedBy = why
	return r
}

// Await waits up to d for the command to exit by itself, or until cut
// is closed (nil: never), and reports whether it has exited.
func (c *Child) Await(d time.Duration, cut <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
	case <-cut:
	}
	return c.Exited()
}

// InForeground reports whether memdiag's process group is the foreground
// process group of its controlling terminal (TIOCGPGRP of /dev/tty):
// then a Ctrl-C typed there went to the whole group, and the command,
// which shares it, got it too. False without a controlling terminal.
func InForeground() bool {
	f, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer f.Close()
	pg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// Result waits for the command to exit by itself and returns how it ended.
func (c *Child) Result() Result {
	<-c.done
	return c.res
}

// exitOf is the exit code a shell would report: the status, or 128+N
// when signal N killed the process.
func exitOf(ps *os.ProcessState) (code int, signal string) {
	if ps == nil {
		return 127, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

// descendants are the running processes below pid (children, their
// children, …, by /proc/PID/stat ppid), each with its start time.
func descendants(pid int) map[int]uint64 {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil
	}
	type st struct {
		ppid  int
		start uint64
	}
	all := map[int]st{}
	for _, p := range procs {
		if s, err := p.Stat(); err == nil && s.State != "Z" {
			all[p.PID] = st{s.PPID, s.Starttime}
		}
	}
	out := map[int]uint64{}
	in := map[int]bool{pid: true}
	for grew := true; grew; {
		grew = false
		for p, s := range all {
			if in[s.ppid] && !in[p] {
				in[p], out[p], grew = true, s.start, true
			}
		}
	}
	return out
}

// StartOf is a live (not zombie) process's start time, in clock ticks
// since boot (/proc/PID/stat field 22): with the PID it names one process
// even after the PID is reused.
func StartOf(pid int) (uint64, bool) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, false
	}
	s, err := p.Stat()
	if err != nil || s.State == "Z" {
		return 0, false
	}
	return s.Starttime, true
}
