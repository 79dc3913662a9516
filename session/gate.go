package session

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/supervise"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
	"github.com/memdiag/memdiag/report/gatereport"
)

// Gate is the run of a live `memdiag gate`: a first sample for the
// preflight, then the sampler loop of watch until the command exits or
// the duration is over, with a last sample after the command. The
// samples are kept for judging and, unless --out is off, recorded; a
// write error stops the recording, not the gate.
//
// Its end lines are its own: "duration", "command exited" (the command's
// result is in the report, not the end line) and "interrupted" for a
// run stopped by a signal, which takes no last sample and is judged by
// nobody.
type Gate struct {
	opts     Options
	Pressure *Pressure
	// Samples are the samples taken so far, the first one first.
	Samples []record.Sample
	sampler *record.Sampler
	rec     *record.Writer // nil: --out off, or stopped by a write error
	reason  string         // the recording's end line
	// AbortWhen, when set, is asked after each sample while the command
	// runs; a breach it returns stops the command (--abort-on-fail), and
	// is kept in GateOutcome.Aborted.
	AbortWhen func(samples []record.Sample) *gate.Result
}

// GateOutcome is how a live gate's run ended.
type GateOutcome struct {
	Command  *supervise.Result // the command's result; nil without one
	StartErr error             // the command could not start
	Aborted  *gate.Result      // the breach for which AbortWhen stopped the command, or nil
}

// StartGate wires gate's sources (PressureSources); a victim's note is
// said on Options.Stderr.
func StartGate(ctx context.Context, o Options) (*Gate, error) {
	p, err := PressureSources(ctx, o.Root, o.Cgroup, o.Victim, func(w string) {
		fmt.Fprintln(o.Stderr, "memdiag: warning:", w)
	})
	if err != nil {
		return nil, err
	}
	return &Gate{
		opts: o, Pressure: p, reason: "interrupted",
		sampler: &record.Sampler{Sources: p.List, Interval: o.Interval, Logger: o.Logger, Now: o.Now},
	}, nil
}

// First takes the first sample, for the preflight.
func (g *Gate) First(ctx context.Context) *record.Sample {
	s := g.sampler.Collect(ctx)
	g.Samples = append(g.Samples[:0], *s)
	return s
}

// Record records the run to out ("": memdiag-YYYYMMDD-HHMMSS.jsonl.gz
// here, as watch; "off": not) with mode, writing the header — watch's,
// for the sources gate runs — and the first sample.
func (g *Gate) Record(ctx context.Context, out string, mode fs.FileMode) error {
	o := &g.opts
	if out == "off" {
		return nil
	}
	if out == "" {
		out = record.DefaultName(o.now())
	}
	w, err := record.CreateMode(out, false, mode)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	first := &g.Samples[0]
	h := HostHeader(ctx, o.Root, first.Time, o.Version)
	h.Interval, h.Cgroup = o.Interval, g.Pressure.Cgroup
	h.CgroupLimit, h.CgroupLimitBytes = g.Pressure.Limit, g.Pressure.LimitBytes
	if o.Victim != "" {
		h.Victim = g.Pressure.Victim.V
		h.Collectors = append(h.Collectors, g.Pressure.Victim.Status)
	}
	if len(o.Command) > 0 {
		args := o.Command
		if !o.KeepCmdline {
			args = redact.Args(args)
		}
		h.Command = []string{strings.Join(args, " ")}
	}
	err = w.WriteHeader(h)
	if err == nil {
		err = w.WriteSample(first)
	}
	if err != nil {
		_ = w.Close("write error")
		return fmt.Errorf("--out: %w", err)
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(o.Stderr, "memdiag: recording to %s (memdiag analyze reads it)\n", abs)
	g.rec = w
	return nil
}

// Run starts the command, if any, and samples every interval until it
// exits or the duration is over, then takes a last sample after the
// command. A command that cannot start gets a last sample too, and is
// in the outcome. The error is ctx's when memdiag was interrupted.
func (g *Gate) Run(ctx context.Context) (GateOutcome, error) {
	o := &g.opts
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out GateOutcome
	var child *supervise.Child
	if len(o.Command) > 0 {
		c, err := supervise.Start(supervise.Options{Args: o.Command, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr})
		if err != nil {
			out.StartErr = err
			_ = g.sampler.Final(ctx, g.emit)
			return out, nil
		}
		child = c
		go func() { <-child.Done(); cancel() }()
	} else {
		g.sampler.Limit = Limit(o.Duration, o.Interval)
	}
	emit := g.emit
	var stopped chan supervise.Result
	if child != nil && g.AbortWhen != nil {
		stopped = make(chan supervise.Result, 1)
		emit = func(s *record.Sample) error {
			err := g.emit(s)
			if out.Aborted == nil && !child.Exited() {
				if r := g.AbortWhen(g.Samples); r != nil {
					out.Aborted = r
					why := gatereport.Crossed(r)
					// Stop waits out the grace period: sampling goes on
					// until the command has exited. Nothing is said
					// before: the command's stderr may be the same
					// writer, copied by exec while it runs.
					go func() { stopped <- child.Stop("abort-on-fail: " + why) }()
				}
			}
			return err
		}
	}
	_ = g.sampler.Run(runCtx, emit)
	sig := StoppedBy(ctx)
	if child != nil && sig == "" && child.Exited() {
		sig = SignalledToo(ctx, child.Result())
	}
	if sig != "" {
		if child != nil {
			awaitCtrlC(ctx, child, o.Stderr)
			child.Stop("signal: " + sig)
		}
		return out, ctx.Err()
	}
	g.reason = "duration"
	if child != nil {
		res := child.Result()
		if out.Aborted != nil {
			res = <-stopped
			g.reason = "command aborted"
			fmt.Fprintf(o.Stderr, "memdiag: --abort-on-fail: %s; stopped the command\n", gatereport.Crossed(out.Aborted))
		}
		out.Command = &res
		// The command's exit and what it left (swap-out, refaults of its
		// last moments) go into a last sample.
		_ = g.sampler.Final(ctx, g.emit)
		if out.Aborted == nil {
			g.reason = "command exited"
		}
	}
	return out, nil
}

// emit keeps a sample and records it; a write error stops the
// recording, not the gate.
func (g *Gate) emit(s *record.Sample) error {
	g.Samples = append(g.Samples, *s)
	if g.rec != nil {
		if err := g.rec.WriteSample(s); err != nil {
			fmt.Fprintf(g.opts.Stderr, "memdiag: warning: recording stopped: %v (samples so far are in %s)\n", err, g.rec.Name())
			_ = g.rec.Close("write error")
			g.rec = nil
		}
	}
	return nil
}

// Close ends the recording with the run's end line.
func (g *Gate) Close() {
	if g.rec != nil {
		_ = g.rec.Close(g.reason)
		g.rec = nil
	}
}
