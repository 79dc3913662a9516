package session

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
)

// Judging is what a live gate judges and keeps, besides the sampling
// settings of Options.
type Judging struct {
	Thresholds []*gate.Threshold
	Suspect    gate.SuspectAction // --suspect-psi
	Out        string             // the recording (Gate.Record: "" default name, "off" none)
	Mode       fs.FileMode        // of Out
	// AbortOnFail (--abort-on-fail) judges the run so far after each
	// sample and stops the command at the first breach (Gate.AbortWhen).
	AbortOnFail bool
}

// JudgeLive runs a live gate: it samples the scope before, during (every
// Interval) and after the command or Duration, and judges the samples. A
// live gate records no processes: it cannot tell which job, if any,
// caused a breach, so it names none (analyze a watch recording for that).
//
// When the first sample lacks what a threshold needs, the error is the
// environment's (with the kernel's reasons, gate.EnvDetail) and the
// report, when not nil, is that of the thresholds that could not be
// judged, still to be written so that CI shows why.
func JudgeLive(ctx context.Context, o Options, j Judging) (*gate.Report, error) {
	g, err := StartGate(ctx, o)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	scope := gate.Scope{Cgroup: g.Pressure.Cgroup, Limit: g.Pressure.Limit, LimitBytes: g.Pressure.LimitBytes}
	first := g.First(ctx)
	if err := gate.Preflight(first, scope, j.Thresholds); err != nil {
		var rep *gate.Report
		if ee := (*gate.EnvError)(nil); errors.As(err, &ee) {
			rep = ee.Report(scope, first.Time, j.Thresholds)
		}
		return rep, gate.EnvDetail(ctx, g.Pressure.PSI, scope, j.Thresholds, err)
	}
	if err := g.Record(ctx, j.Out, j.Mode); err != nil {
		return nil, err
	}
	h := &record.Header{PageSize: os.Getpagesize()}
	if j.AbortOnFail {
		g.AbortWhen = func(samples []record.Sample) *gate.Result {
			return gate.FirstFail(h, samples, scope, j.Thresholds)
		}
	}
	out, err := g.Run(ctx)
	if err != nil {
		return nil, err
	}
	if out.StartErr != nil {
		h = nil
	}
	rep := gate.Evaluate(h, g.Samples, scope, j.Thresholds)
	rep.CheckPSI(g.Samples, HostHeader(ctx, o.Root, rep.Start, "").Kernel, j.Suspect)
	rep.Command = out.result(o.Command, o.KeepCmdline)
	// The sampler's gaps: samples late or missed while the run was judged.
	gaps := record.NewGaps(record.Header{Interval: o.Interval})
	for i := range g.Samples {
		gaps.Add(&g.Samples[i])
	}
	if l := gaps.GapLine(); l != "" {
		rep.Lacks = append(rep.Lacks, l)
	}
	return rep, nil
}

// result is the wrapped command's line in the report: redacted unless
// keep, like every command line memdiag writes, with its exit (127 when
// it could not start). nil without a command.
func (out GateOutcome) result(args []string, keep bool) *gate.CommandResult {
	if len(args) == 0 {
		return nil
	}
	res := &gate.CommandResult{Args: args}
	if !keep {
		res.Args = redact.Args(args)
	}
	switch {
	case out.StartErr != nil:
		res.Err, res.ExitCode = "could not start: "+out.StartErr.Error(), 127
	case out.Command != nil:
		res.ExitCode, res.Signal, res.Abort = out.Command.ExitCode, out.Command.Signal, out.Aborted
	}
	return res
}
