package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/internal/delayacct"
	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/internal/supervise"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
)

// Session is one recording run, from the first collector opened to the
// end line: its sources and header, the /metrics listener, the wrapped
// command, the sampler, the last sample and the summary. Start it, Run it
// into a Sink, Close it.
type Session struct {
	opts    Options
	Header  *record.Header
	Sources *Sources
	// Summary totals the run for the end summary (Options.Summarize);
	// nil otherwise, so that a recorder running for months keeps none.
	Summary *record.Summary
	// MetricsURL is the /metrics URL served (Options.ListenAddr), or "".
	MetricsURL string
	exp        *exposition.Exporter
	observers  []func(s *record.Sample, final bool)
	closers    []func() // run last first by Close
	// abOut keeps the last abTail bytes of the command's standard output
	// when the command is ab (its end-of-run report: record.End.AB).
	abOut *tail
}

// Sink is where a session's samples go: one recording (*record.Writer)
// or a store's segments (*Segments).
type Sink interface {
	WriteHeader(h *record.Header) error
	WriteSample(s *record.Sample) error
	Close(reason string) error
}

// Outcome is how a run ended.
type Outcome struct {
	// Reason is the end line's: "duration", "signal: SIGINT", "write
	// error", "command exited", with ": command …" when one was run.
	Reason string
	// Command is the wrapped command's result; nil when none was run.
	Command *supervise.Result
	// Err is the write error that ended the run, or the sink's Close
	// error; nil when the recording is whole.
	Err error
}

// CommandStartError is a wrapped command that could not start: nothing
// was recorded (exit 4, like a shell's 127).
type CommandStartError struct{ Err error }

func (e *CommandStartError) Error() string { return "could not start: " + e.Err.Error() }
func (e *CommandStartError) Unwrap() error { return e.Err }

// Start opens everything that can fail on bad input before the first
// sample: delay accounting (Options.EnableDelayAcct), every source
// (BuildSources), then the /metrics listener (Options.ListenAddr: an
// address that cannot be bound is an error here). On error, what was
// opened is closed again.
func Start(ctx context.Context, o Options) (*Session, error) {
	s := &Session{opts: o}
	if err := s.delayAcct(); err != nil {
		s.Close()
		return nil, err
	}
	srcs, hdr, err := BuildSources(ctx, &s.opts)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Sources, s.Header = srcs, hdr
	s.closers = append(s.closers, srcs.Close)
	if srcs.Fatal != nil {
		s.Close()
		return nil, srcs.Fatal
	}
	if o.Summarize {
		s.Summary = record.NewSummary(hdr)
	}
	if o.ListenAddr != "" {
		url, err := s.Listen(ctx, exposition.ListenOptions{Addr: o.ListenAddr, WebConfigFile: o.WebConfigFile, ErrLog: o.Stderr})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.MetricsURL = url
	}
	return s, nil
}

// delayAcct says and undoes the delay accounting a killed run left on
// (Options.DelayAcctLeftover), then turns it on for the run
// (Options.EnableDelayAcct); Close restores it.
func (s *Session) delayAcct() error {
	o := &s.opts
	da := delayacct.PathsFor(o.Root, filepath.Join(o.Root, "proc"))
	if o.DelayAcctLeftover && o.Stderr != nil {
		if note := delayacct.Leftover(da); note != "" {
			fmt.Fprintln(o.Stderr, "memdiag: warning:", note)
		}
	}
	if !o.EnableDelayAcct {
		return nil
	}
	restore, err := delayacct.Set(da, true, o.now())
	if err != nil {
		if hostenv.As(err) == nil {
			err = &hostenv.Unavailable{Path: da.Sysctl, Need: "switching delay accounting on", Hint: "needs root", Err: err}
		}
		return fmt.Errorf("--enable-delayacct: %w", err)
	}
	// Restored by Close, on every return and a panic of the caller's
	// goroutine; a SIGKILL leaves the state file for the next run.
	s.closers = append(s.closers, restore)
	return nil
}

// Listen serves /metrics on lo.Addr from the session's samples until
// Close, and returns the URL it serves. An address that cannot be bound,
// or a bad web configuration, is an error before the first sample.
func (s *Session) Listen(ctx context.Context, lo exposition.ListenOptions) (string, error) {
	s.exp = exposition.New(*s.Header, exposition.Options{Now: s.opts.Now})
	srv, err := exposition.Listen(ctx, lo, s.exp)
	if err != nil {
		s.exp = nil
		return "", err
	}
	s.closers = append(s.closers, func() { _ = srv.Close() })
	return srv.URL(), nil
}

// Exporter is the session's exporter: the one Listen serves, or, when
// Listen was not called, one that serves nothing and runs the same
// once-a-minute analysis (watch's forecast line reads it). Call it before
// Run.
func (s *Session) Exporter() *exposition.Exporter {
	if s.exp == nil {
		s.exp = exposition.New(*s.Header, exposition.Options{Now: s.opts.Now})
	}
	return s.exp
}

// Observe adds a listener that sees each sample once it is written;
// final is true for the last sample, taken after the run ended.
func (s *Session) Observe(fn func(smp *record.Sample, final bool)) {
	s.observers = append(s.observers, fn)
}

// Close releases the sources, stops the listener and restores delay
// accounting. It is safe to call more than once.
func (s *Session) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Run records into sink until the duration is over, ctx is done, the
// wrapped command exits or a write fails: it writes the header, starts
// the command, samples every interval, stops the command if it still
// runs, takes the last sample and closes sink with the end line. The
// error is for a run that never started (the header could not be
// written; a *CommandStartError); the Outcome says how a run ended.
func (s *Session) Run(ctx context.Context, sink Sink) (out Outcome, err error) {
	o := &s.opts
	if len(o.Command) > 0 {
		// The command starts right after the header is written: its start
		// anchors a results file that holds only offsets (hey).
		s.Header.CommandStart = o.now()
		s.Sources.CommandStarted(s.Header.CommandStart)
	}
	if sg, ok := sink.(*Segments); ok {
		sg.attach(s)
	}
	if err := sink.WriteHeader(s.Header); err != nil {
		sink.Close("error")
		return out, err
	}
	closed := false
	defer func() {
		// A panic here still ends the recording with its end line (the
		// caller's deferred Close restores delay accounting), then goes on.
		if r := recover(); r != nil {
			if !closed {
				_ = sink.Close(fmt.Sprintf("panic: %v", r))
			}
			panic(r)
		}
	}()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	child, err := s.startCommand(cancel)
	if err != nil {
		closed = true
		sink.Close("command failed to start")
		return out, &CommandStartError{Err: err}
	}
	out = s.sample(ctx, runCtx, sink, child)
	closed = true
	s.keepAB(sink)
	if err := sink.Close(out.Reason); err != nil && out.Err == nil {
		out.Err = err
	}
	return out, nil
}

// startCommand starts the command after -- (nil when there is none); its
// exit cancels the run.
func (s *Session) startCommand(cancel func()) (*supervise.Child, error) {
	o := &s.opts
	if len(o.Command) == 0 {
		return nil, nil
	}
	stdout := o.Stdout
	if RunsAB(o.Command) {
		// ab counts its failed and non-2xx requests only in its report on
		// standard output; its -g file has no status (docs/latency.md).
		s.abOut = &tail{max: abTail}
		stdout = s.abOut
		if o.Stdout != nil {
			stdout = io.MultiWriter(o.Stdout, s.abOut)
		}
	}
	child, err := supervise.Start(supervise.Options{Args: o.Command, Stdin: o.Stdin, Stdout: stdout, Stderr: o.Stderr})
	if err != nil {
		return nil, err
	}
	go func() { <-child.Done(); cancel() }()
	return child, nil
}

// sample runs the sampler until runCtx ends, stops the command, drains
// the sources and takes the last sample.
func (s *Session) sample(ctx, runCtx context.Context, sink Sink, child *supervise.Child) Outcome {
	o := &s.opts
	// --duration is a whole number of intervals (rounded up): the
	// sample due at exactly --duration is the last one.
	sampler := &record.Sampler{Sources: s.Sources.List, Interval: o.Interval, Logger: o.Logger, Now: o.Now, Limit: Limit(o.Duration, o.Interval)}
	final := false
	// The service says its gaps on its log as they happen; watch's and
	// gate's verdicts state them at the end.
	var gaps *gapLog
	if _, ok := sink.(*Segments); ok && o.Stderr != nil {
		gaps = &gapLog{w: o.Stderr}
	}
	emit := func(smp *record.Sample) error {
		if err := sink.WriteSample(smp); err != nil {
			return err
		}
		if gaps != nil && smp.Gap != nil {
			gaps.add(smp.Gap)
		}
		if s.Summary != nil {
			s.Summary.Add(smp)
		}
		if s.exp != nil {
			s.exp.Observe(smp)
		}
		for _, fn := range s.observers {
			fn(smp, final)
		}
		return nil
	}
	writeErr := sampler.Run(runCtx, emit)
	if gaps != nil {
		gaps.flush()
	}
	out := s.stop(ctx, child, writeErr)
	// Requests still in flight in the probe and a followed results file
	// are handed over before the last sample.
	s.Sources.Drain()
	// The last sample: what happened after the last tick (the command's
	// exit, its children's exit events, the last requests) is recorded.
	// A --duration run without a command ended on its last tick.
	if writeErr == nil && (out.Reason != "duration" || child != nil) {
		final = true
		writeErr = sampler.Final(ctx, emit)
	}
	out.Err = writeErr
	return out
}

// stop says why the run ended and stops the command if it still runs.
func (s *Session) stop(ctx context.Context, child *supervise.Child, writeErr error) Outcome {
	reason, stop := "", ""
	switch {
	case writeErr != nil:
		reason, stop = "write error", "write error"
	case StoppedBy(ctx) != "":
		reason = "signal: " + StoppedBy(ctx)
		stop = reason
	case child != nil && child.Exited():
		reason = "command exited"
	default:
		reason, stop = "duration", "duration"
	}
	if child == nil {
		return Outcome{Reason: reason}
	}
	var res supervise.Result
	if stop != "" {
		awaitCtrlC(ctx, child, s.opts.Stderr)
		res = child.Stop(stop)
	} else {
		res = child.Result()
		if sig := SignalledToo(ctx, res); sig != "" {
			reason = "signal: " + sig
			res = child.Stop(reason)
		}
	}
	return Outcome{Reason: fmt.Sprintf("%s: command %s", reason, res.Describe()), Command: &res}
}

// awaitCtrlC, when ctx was ended by SIGINT, gives the command the
// Ctrl-C memdiag got when both are in the terminal's foreground process
// group (the command shares memdiag's): the terminal sent it to the
// command too, and a load tool writes its results as it ends on it
// (hey's -o csv; SIGTERM 2 ms later killed hey before it wrote a line).
// It waits up to supervise.Grace for the command to end by itself, or
// for a second Ctrl-C, saying so on stderr; the caller's Stop then sends
// SIGTERM to what is left.
func awaitCtrlC(ctx context.Context, child *supervise.Child, stderr io.Writer) {
	if StoppedBy(ctx) != "SIGINT" || child.Exited() || !supervise.InForeground() {
		return
	}
	var again <-chan struct{}
	var se interface{ Again() <-chan struct{} }
	if errors.As(context.Cause(ctx), &se) {
		again = se.Again()
	}
	if stderr != nil {
		fmt.Fprintf(stderr, "memdiag: the command got the Ctrl-C too: waiting up to %s for it to end (Ctrl-C again: stop it now)\n", supervise.Grace)
	}
	child.Await(supervise.Grace, again)
}

// StoppedBy names the signal that ended ctx ("SIGTERM") when its cause
// has a StopSignal method (cmd's signal handler sets one), "cancelled"
// when ctx ended otherwise, and "" while it runs.
func StoppedBy(ctx context.Context) string {
	var se interface{ StopSignal() syscall.Signal }
	if errors.As(context.Cause(ctx), &se) {
		return unix.SignalName(se.StopSignal())
	}
	if ctx.Err() != nil {
		return "cancelled"
	}
	return ""
}

// SignalledToo returns the signal that stopped memdiag when the command
// died of a stop signal just before memdiag noticed its own: the
// terminal's Ctrl-C reaches both at once, and the command may win the
// race to exit. "" when memdiag was not signalled.
func SignalledToo(ctx context.Context, res supervise.Result) string {
	switch res.Signal {
	case "SIGINT", "SIGTERM", "SIGHUP":
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return StoppedBy(ctx)
}

// Options are the options the session was started with.
func (s *Session) Options() Options { return s.opts }

// SayWarnings says the sources' warnings (Sources.Warnings) on
// Options.Stderr, once, at start.
func (s *Session) SayWarnings() {
	for _, warn := range s.Sources.Warnings {
		fmt.Fprintln(s.opts.Stderr, "memdiag: warning:", warn)
	}
}

// SayMetrics says on Options.Stderr where /metrics is served (--listen),
// with exposition.ListenWarning for an address every network reaches;
// nothing without a listener.
func (s *Session) SayMetrics() {
	if s.MetricsURL == "" {
		return
	}
	fmt.Fprintf(s.opts.Stderr, "memdiag: metrics at %s\n", s.MetricsURL)
	if warn := exposition.ListenWarning(s.opts.ListenAddr, s.opts.WebConfigFile != ""); warn != "" {
		fmt.Fprintf(s.opts.Stderr, "memdiag: warning: %s\n", warn)
	}
}

// abTail is how much of ab's standard output is kept: its end-of-run
// report is the last ~1.5 KiB; -v output before it can be far longer.
const abTail = 64 << 10

// keepAB gives a single recording's end line what ab's report counted
// (record.End.AB) when the command was ab and its output ends with its
// report; an ab that failed before reporting leaves nothing.
func (s *Session) keepAB(sink Sink) {
	w, ok := sink.(*record.Writer)
	if s.abOut == nil || !ok {
		return
	}
	sum, err := latency.ParseABSummary(bytes.NewReader(s.abOut.bytes()), "ab's standard output")
	if err != nil {
		return
	}
	w.SetAB(&sum)
}

// tail is an io.Writer that keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.buf)
}

// RunsAB reports whether argv runs ApacheBench: ab itself, ab behind a
// wrapper (timeout 60 ab …, env X=1 ab …, nice ab …), or a shell's -c
// script with ab as one of its commands (sh -c "ab -g f.tsv … && …").
// Its standard output is then kept (the last abTail bytes) for ab's
// failed and non-2xx counts. A false positive costs only that tail: the
// counts are taken only from text that parses as ab's report.
func RunsAB(argv []string) bool {
	isAB := func(w string) bool { return filepath.Base(w) == "ab" }
	for i, a := range argv {
		if isAB(a) {
			return true
		}
		if i+1 < len(argv) && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") &&
			slices.Contains([]string{"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"}, filepath.Base(argv[0])) {
			// The script: ab as a word of it, between spaces or the
			// shell's separators.
			words := strings.FieldsFunc(argv[i+1], func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(";&|()`$'\"", r) })
			return slices.ContainsFunc(words, isAB)
		}
	}
	return false
}
