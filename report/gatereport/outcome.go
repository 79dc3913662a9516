package gatereport

import (
	"fmt"
	"strings"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/english"
)

// Outcome is the sentence a judged run ends with on stderr (after
// "memdiag: "): the failed command and how it ended, the thresholds that
// could not be judged and why, or those breached with the observed
// values; "" for a pass. A suspect PSI (--suspect-psi warn) is pointed at.
func Outcome(rep *gate.Report) string { return OutcomeAs(rep, rep.Outcome()) }

// OutcomeAs is Outcome's sentence for the outcome oc the caller judged
// the report by (gate --exit-code command passes a failed command's code
// through, so its breach is the outcome said).
func OutcomeAs(rep *gate.Report, oc gate.Outcome) string {
	suspect := ""
	if len(rep.SuspectPSI) > 0 {
		suspect = " (the judged PSI is suspect: see the warning)"
	}
	var names []string
	switch oc {
	case gate.OutcomeCommandFailed:
		return "the wrapped command failed: " + strings.Join(rep.Command.Args, " ") + ": " + CommandText(rep.Command)
	case gate.OutcomeNoData:
		for _, r := range rep.Results {
			if r.Status == gate.NoData {
				names = append(names, r.Threshold.Expr+": "+Reason(&r))
			}
		}
		return "could not judge " + strings.Join(names, "; ") + suspect
	case gate.OutcomeBreach:
		for _, r := range rep.Results {
			if r.Status == gate.Fail {
				names = append(names, fmt.Sprintf("%s (observed %s)", r.Threshold.Expr, FormatValue(r.Threshold, r.Observed)))
			}
		}
		return "threshold breached: " + strings.Join(names, ", ") + suspect
	}
	return ""
}

// Verdict is the run's one-line outcome: "PASS: all 3 thresholds held",
// "FAIL: 1 of 3 thresholds breached; the command failed: exited with code 3".
func Verdict(r *gate.Report) string {
	n := len(r.Results)
	var parts []string
	if c := r.Count(gate.Fail); c > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d %s breached", c, n, english.Plural(n, "threshold")))
	}
	if c := r.Count(gate.NoData); c > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d %s could not be judged (no data)", c, n, english.Plural(n, "threshold")))
	}
	if r.Command.Failed() {
		parts = append(parts, "the command failed: "+CommandText(r.Command))
	}
	if len(parts) == 0 {
		if n == 1 {
			return "PASS: the threshold held"
		}
		return fmt.Sprintf("PASS: all %d thresholds held", n)
	}
	return "FAIL: " + strings.Join(parts, "; ")
}
