package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// The crash tests run the real binary as root (every process's I/O and
// the kernel's process events, a tmpfs mount) and end it the ways a
// recorder ends in the field: SIGKILL, SIGTERM, SIGHUP, a reader that goes
// away (watch | head), a full disk, a wrapped command that exits between
// two ticks. They take no e2e lock: they create no pressure and judge no
// host-wide signal.

// watchProc is a running `memdiag watch`.
type watchProc struct {
	c        *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

func startWatch(t *testing.T, bin string, args ...string) *watchProc {
	t.Helper()
	w := &watchProc{c: exec.Command(bin, append([]string{"watch"}, args...)...), done: make(chan struct{})}
	w.c.Stdout, w.c.Stderr = &w.out, &w.err
	if err := w.c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := w.c.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			w.code = ee.ExitCode()
		}
		close(w.done)
	}()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default: // only the process this test started, by its PID
			_ = w.c.Process.Kill()
			<-w.done
		}
	})
	return w
}

// wait waits for the watch to end, at most d.
func (w *watchProc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(d):
		t.Fatalf("watch still running after %s\nstderr:\n%s", d, w.err.String())
	}
	t.Logf("watch %s: exit %d\nstderr:\n%s", strings.Join(w.c.Args[1:], " "), w.code, w.err.String())
}

// waitSamples waits until the watch has printed its start line and
// slept past its first samples.
func waitStarted(t *testing.T, w *watchProc) {
	t.Helper()
	for i := 0; i < 200 && !strings.Contains(w.errText(), "recording to"); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if !strings.Contains(w.errText(), "recording to") {
		t.Fatalf("watch did not start:\n%s", w.errText())
	}
}

func (w *watchProc) errText() string { return w.err.String() }

// contiguous fails the test unless the samples are numbered 0..n-1.
func contiguous(t *testing.T, name string, ss []record.Sample) {
	t.Helper()
	for i, s := range ss {
		if s.Seq != i {
			t.Fatalf("%s: sample %d has seq %d: a sample in the middle was lost", name, i, s.Seq)
		}
	}
}

// TestWatchE2ECrash runs the crash tests below against one build of the
// binary. They need root: every process's I/O and the kernel's process
// events, a tmpfs mount, kernel.task_delayacct.
func TestWatchE2ECrash(t *testing.T) {
	testenv.RequireRoot(t, "process events, a tmpfs mount, kernel.task_delayacct")
	bin := testenv.BuildMemdiag(t)
	for _, c := range []struct {
		name string
		run  func(*testing.T, string)
	}{
		{"SIGKILLLosesAtMostOneInterval", crashSIGKILLLosesAtMostOneInterval},
		{"SIGTERMAndSIGHUPLoseNothing", crashSIGTERMAndSIGHUPLoseNothing},
		{"SIGPIPERecordingGoesOn", crashSIGPIPERecordingGoesOn},
		{"DiskFull", crashDiskFull},
		{"CommandExitKeepsLastEvents", crashCommandExitKeepsLastEvents},
		{"DelayAcctRestored", crashDelayAcctRestored},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, bin) })
	}
}

// SIGKILL at a random moment loses at most the interval in progress, from
// a plain and from a .gz recording: every sample before the kill is
// readable, and the last one is at most one interval (plus the time one
// sample takes to collect) before the kill.
func crashSIGKILLLosesAtMostOneInterval(t *testing.T, bin string) {
	const interval = 400 * time.Millisecond
	// The time a sample takes to collect and write on a busy 2-core CI
	// host, checked by hand: 20–80 ms here.
	const slack = 300 * time.Millisecond
	seed := time.Now().UnixNano()
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for _, name := range []string{"killed.jsonl", "killed.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), name)
			w := startWatch(t, bin, "--interval", interval.String(), "--out", rec, "--no-timers", "-q")
			waitStarted(t, w)
			time.Sleep(time.Second + time.Duration(rng.Int64N(int64(2*time.Second))))
			killedAt := time.Now()
			if err := w.c.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			w.wait(t, 10*time.Second)
			r, err := record.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			if r.End != nil {
				t.Errorf("a SIGKILLed recorder wrote an end line: %+v", r.End)
			}
			if len(r.Samples) < 2 {
				t.Fatalf("%d samples after %s of recording", len(r.Samples), killedAt.Sub(r.Header.Start))
			}
			contiguous(t, name, r.Samples)
			last := r.Samples[len(r.Samples)-1].Time
			if lost := killedAt.Sub(last); lost > interval+slack {
				t.Errorf("last readable sample %s before the kill (%d samples); want at most one interval (%s) + %s", lost, len(r.Samples), interval, slack)
			} else {
				t.Logf("%d samples; the last %s before the kill", len(r.Samples), lost.Round(time.Millisecond))
			}
		})
	}
}

// SIGTERM and SIGHUP end like Ctrl-C (SIGINT): a final sample after the signal,
// the end line naming it, every sample readable, exit 0. With a command
// wrapped, memdiag stops it and does not call it failed.
func crashSIGTERMAndSIGHUPLoseNothing(t *testing.T, bin string) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		cmd  []string
	}{
		{syscall.SIGINT, "SIGINT", nil},
		{syscall.SIGTERM, "SIGTERM", nil},
		{syscall.SIGHUP, "SIGHUP", nil},
		{syscall.SIGTERM, "SIGTERM", []string{"--", "sleep", "60"}},
	} {
		t.Run(fmt.Sprintf("%s%v", tc.name, tc.cmd), func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "r.jsonl.gz")
			w := startWatch(t, bin, append([]string{"--interval", "200ms", "--out", rec, "--no-timers", "-q"}, tc.cmd...)...)
			waitStarted(t, w)
			time.Sleep(1200 * time.Millisecond)
			sentAt := time.Now()
			if err := w.c.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			w.wait(t, 20*time.Second)
			if w.code != 0 {
				t.Errorf("exit %d after %s, want 0", w.code, tc.name)
			}
			r, err := record.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Warnings) > 0 {
				t.Errorf("warnings reading the recording: %q", r.Warnings)
			}
			if r.End == nil || !strings.HasPrefix(r.End.Reason, "signal: "+tc.name) || r.End.Samples != len(r.Samples) {
				t.Fatalf("end line %+v with %d samples readable; want reason %q and every sample", r.End, len(r.Samples), "signal: "+tc.name)
			}
			contiguous(t, tc.name, r.Samples)
			if last := r.Samples[len(r.Samples)-1].Time; last.Before(sentAt) {
				t.Errorf("last sample at %s, before the signal at %s: no final sample", last.Format(time.StampMilli), sentAt.Format(time.StampMilli))
			}
			if tc.cmd != nil && !strings.Contains(r.End.Reason, "command exit code 143 (memdiag sent SIGTERM: memdiag received SIGTERM)") {
				t.Errorf("end reason %q: want the command stopped by memdiag with SIGTERM", r.End.Reason)
			}
			if !strings.Contains(w.errText(), "Recorded ") {
				t.Errorf("no summary on stderr:\n%s", w.errText())
			}
		})
	}
}

// watch | head -3: the reader goes away; memdiag is not killed by SIGPIPE,
// stops its live rows and records to the end of --duration.
func crashSIGPIPERecordingGoesOn(t *testing.T, bin string) {
	rec := filepath.Join(t.TempDir(), "r.jsonl.gz")
	c := exec.Command(bin, "watch", "--interval", "100ms", "--duration", "2s", "--out", rec, "--no-timers")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	c.Stderr = &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// head -3: read three lines, then close the pipe.
	br := bufio.NewReader(stdout)
	for range 3 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatalf("reading live rows: %v\nstderr:\n%s", err, errOut.String())
		}
	}
	stdout.Close()
	err = c.Wait()
	t.Logf("stderr:\n%s", errOut.String())
	if err != nil {
		t.Fatalf("watch | head: %v (killed by SIGPIPE?)", err)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	// 2 s at 100 ms: samples at 0, 100 ms, … 2 s.
	if r.End == nil || r.End.Reason != "duration" || gridSlots(r.Samples) != 21 || r.End.Samples != len(r.Samples) {
		t.Fatalf("end %+v, %d samples (%d with the missed); want duration and 21", r.End, len(r.Samples), gridSlots(r.Samples))
	}
	contiguous(t, "r.jsonl.gz", r.Samples)
	if !strings.Contains(errOut.String(), "stdout was closed (broken pipe): live rows stopped") {
		t.Errorf("stderr does not say the live rows stopped:\n%s", errOut.String())
	}
}

// A full disk (a 64 KiB tmpfs mounted by the test) stops the recording
// with an error that says how many samples are readable, and exactly
// those are: nothing written before is lost.
func crashDiskFull(t *testing.T, bin string) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "memdiag-test-diskfull", dir).CombinedOutput(); err != nil {
		testenv.Unmet(t, fmt.Sprintf("mount tmpfs: %v: %s", err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	re := regexp.MustCompile(`(\d+) of (\d+) samples are readable in`)
	for _, name := range []string{"full.jsonl", "full.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			rec := filepath.Join(dir, name)
			defer os.Remove(rec) // room for the next case
			w := startWatch(t, bin, "--interval", "20ms", "--out", rec, "--no-timers", "-q", "--top", "50")
			w.wait(t, time.Minute)
			if w.code != exitError {
				t.Fatalf("exit %d, want %d (write error)", w.code, exitError)
			}
			m := re.FindStringSubmatch(w.errText())
			if m == nil || !strings.Contains(w.errText(), "no space left on device") {
				t.Fatalf("stderr does not say how many samples are readable:\n%s", w.errText())
			}
			readable, _ := strconv.Atoi(m[1])
			written, _ := strconv.Atoi(m[2])
			r, err := record.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			// At most the sample being written when the disk filled is
			// lost, and none when its data reached the file before the
			// flush that failed (gzip; record.Writer.ReadBack): seen in CI
			// as "307 of 307 samples are readable", all 307 read back.
			if readable < 2 || len(r.Samples) != readable || (written != readable+1 && written != readable) {
				t.Errorf("%d samples read back; memdiag said %d of %d readable", len(r.Samples), readable, written)
			}
			contiguous(t, name, r.Samples)
			if r.End != nil {
				t.Errorf("end line %+v written to a full disk?", r.End)
			}
			// analyze says so before anything else, with the same count.
			_, out, _ := runBinary(t, bin, "analyze", rec)
			if want := fmt.Sprintf("recording cut short, %d samples readable: no end line", readable); !strings.Contains(out, want) {
				t.Errorf("analyze does not say %q:\n%s", want, out)
			}
		})
	}
}

// `watch -- CMD` with CMD exiting between two ticks (5 s interval, CMD
// runs ~0.7 s): the process it starts just before it exits, and its own
// exit, are in the final sample; the end line has CMD's exit code.
func crashCommandExitKeepsLastEvents(t *testing.T, bin string) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "tailmarker")
	src, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, src, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "r.jsonl")
	w := startWatch(t, bin, "--interval", "5s", "--out", rec, "--no-timers", "-q", "--events", "on",
		"--", "sh", "-c", "sleep 0.7; "+marker+"; exit 3")
	w.wait(t, 30*time.Second)
	if w.code != exitCommand || !strings.Contains(w.errText(), "the wrapped command failed: sh: exit code 3") {
		t.Errorf("exit %d, want %d with the command's code 3 named", w.code, exitCommand)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if r.End == nil || r.End.Reason != "command exited: command exit code 3" {
		t.Errorf("end line %+v", r.End)
	}
	if len(r.Samples) != 2 {
		t.Fatalf("%d samples, want 2: one at the start, the final one after the command exited", len(r.Samples))
	}
	var exec_, exit bool
	var shExit bool
	for _, s := range r.Samples {
		for _, e := range s.Events {
			switch {
			case e.Comm == "tailmarker" && e.Kind == process.Exec:
				exec_ = true
			case e.Comm == "tailmarker" && e.Kind == process.Exit:
				exit = true
			case e.Comm == "sh" && e.Kind == process.Exit && e.PPID == w.c.Process.Pid:
				shExit = true
			}
		}
	}
	if !exec_ || !exit || !shExit {
		t.Errorf("final sample events: tailmarker exec %v, exit %v; the command's own exit %v; want all\n%+v", exec_, exit, shExit, r.Samples[len(r.Samples)-1].Events)
	}
}

// --enable-delayacct turns kernel.task_delayacct on and back off on
// SIGTERM; after a SIGKILL it stays on, and the next watch says so and
// restores it.
func crashDelayAcctRestored(t *testing.T, bin string) {
	const sysctl = "/proc/sys/kernel/task_delayacct"
	read := func() string {
		b, err := os.ReadFile(sysctl)
		if err != nil {
			testenv.Unmet(t, err.Error())
		}
		return strings.TrimSpace(string(b))
	}
	if read() != "0" {
		testenv.Unmet(t, "kernel.task_delayacct is already on; this test needs it off")
	}
	t.Cleanup(func() {
		if read() != "0" {
			_ = os.WriteFile(sysctl, []byte("0"), 0o644)
			t.Error("kernel.task_delayacct left on; set back to 0")
		}
		_ = os.Remove("/run/memdiag/task_delayacct.json")
	})
	dir := t.TempDir()
	args := func(name string) []string {
		return []string{"--interval", "200ms", "--out", filepath.Join(dir, name), "--no-timers", "-q", "--enable-delayacct"}
	}
	on := func(w *watchProc) {
		waitStarted(t, w)
		if v := read(); v != "1" {
			t.Fatalf("kernel.task_delayacct = %s while recording with --enable-delayacct", v)
		}
	}

	w := startWatch(t, bin, args("term.jsonl")...)
	on(w)
	_ = w.c.Process.Signal(syscall.SIGTERM)
	w.wait(t, 20*time.Second)
	if v := read(); v != "0" {
		t.Errorf("after SIGTERM kernel.task_delayacct = %s, want 0 restored", v)
	}

	w = startWatch(t, bin, args("kill.jsonl")...)
	on(w)
	killedPID := w.c.Process.Pid
	_ = w.c.Process.Signal(syscall.SIGKILL)
	w.wait(t, 20*time.Second)
	if v := read(); v != "1" {
		t.Fatalf("after SIGKILL kernel.task_delayacct = %s; nothing could restore it, want 1", v)
	}
	w = startWatch(t, bin, "--interval", "200ms", "--duration", "400ms", "--out", filepath.Join(dir, "next.jsonl"), "--no-timers", "-q")
	w.wait(t, 20*time.Second)
	if !strings.Contains(w.errText(), "kernel.task_delayacct was left at 1 by a memdiag run (pid "+strconv.Itoa(killedPID)) {
		t.Errorf("the next run does not say delay accounting was left on:\n%s", w.errText())
	}
	if !strings.Contains(w.errText(), "restored it to 0") || read() != "0" {
		t.Errorf("not restored: kernel.task_delayacct = %s\n%s", read(), w.errText())
	}
}
