package gatereport

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdiag/memdiag/gate"
)

// Reason says why r was not judged (gate.Result.Why): "" for a judged
// threshold.
func Reason(r *gate.Result) string {
	w := r.Why
	switch w.Kind {
	case gate.MissingSignal:
		if w.Missing != nil {
			return w.Missing.Error()
		}
		return "its signal is missing"
	case gate.NoSamples:
		return "no samples"
	case gate.OneSample:
		return "only one sample; a run needs at least two to measure a change"
	case gate.NoInterval:
		return "no sampling interval with positive length"
	case gate.PartlyCovered:
		return fmt.Sprintf("held over the %s of the run that had the signal, but %s of %s had none",
			r.Covered.Round(time.Millisecond), (w.Span - r.Covered).Round(time.Millisecond), w.Span.Round(time.Millisecond))
	case gate.CutShort:
		return "held over what was recorded, but the recording ended abnormally (" + w.Ended + ")"
	case gate.SuspectPSI:
		return "not judged (--suspect-psi fail): the " + r.Threshold.Metric.Resource + " PSI contradicts itself"
	case gate.NotStarted:
		return "the run did not start: other thresholds' signals are missing"
	}
	return ""
}

// CommandText says how the wrapped command ended: "exited with code 3",
// "killed by SIGKILL (exit code 137)".
func CommandText(c *gate.CommandResult) string {
	switch {
	case c.Err != "":
		return c.Err
	case c.Abort != nil:
		return fmt.Sprintf("stopped by memdiag (--abort-on-fail: %s), exit code %d", Crossed(c.Abort), c.ExitCode)
	case c.Signal != "":
		return fmt.Sprintf("killed by %s (exit code %d)", c.Signal, c.ExitCode)
	}
	return fmt.Sprintf("exited with code %d", c.ExitCode)
}

// Warnings are the report's warnings (a truncated recording line…), then
// one line for each breach whose worst moment fell in an episode analyze
// credits to a culprit (gate.Report.Credits).
func Warnings(rep *gate.Report) []string {
	out := append([]string(nil), rep.Warnings...)
	for _, c := range rep.Credits {
		r := &rep.Results[c.Result]
		var names []string
		for _, cu := range c.Culprits {
			names = append(names, fmt.Sprintf("%s (%s, %s confidence %.2f)", cu.Name, cu.Kind, cu.ConfidenceLabel(), cu.Confidence))
		}
		out = append(out, fmt.Sprintf("%s: its worst moment (%s–%s) fell in an episode memdiag analyze credits to %s; see memdiag analyze for the evidence",
			r.Threshold, r.Worst.Start.In(c.Location).Format("15:04:05"), r.Worst.End.In(c.Location).Format("15:04:05"), strings.Join(names, ", ")))
	}
	return out
}
