package report

import (
	"fmt"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/report/psinote"
)

// warningText is the sentence of an analysis warning (correlate.Warning):
// what the analysis could not do and what it did instead; times are in
// loc.
func warningText(w correlate.Warning, loc *time.Location) string {
	switch w.Kind {
	case correlate.WarnTooFewSamples:
		return "the recording has fewer than two samples: nothing to analyse"
	case correlate.WarnLatencyFileEmpty:
		return fmt.Sprintf("watch followed --latency %s but read no request from it (the file never appeared, stayed empty, or its rows were bad: see the recording's warnings); analysing pressure episodes only", w.LatencyFile)
	case correlate.WarnProbeEmpty:
		return fmt.Sprintf("the probe of %s recorded no request; analysing pressure episodes only", w.Probe)
	case correlate.WarnNoLatency:
		return "no latency in the recording and none given: analysing pressure episodes only"
	case correlate.WarnNoPSI:
		return fmt.Sprintf("the recording has no memory PSI of %s: episodes are bursts of reclaim and disk signals, not measured stalls, and no culprit can be proven to have caused memory pressure", psiScopeName(w.Scope))
	case correlate.WarnNotProjected:
		return "job schedules were not projected over the recording; jobs are matched only through their processes"
	case correlate.WarnGrowthLeftOut:
		return fmt.Sprintf("in %d samples more processes were growing than watch records per sample (up to %d left out of one): each was recorded in turn, so their growth is fitted on fewer points, and one that grew only while left out is not seen", w.Samples, w.Processes)
	case correlate.WarnSuspectPSI:
		if w.SuspectPSI != nil {
			scope := "the host"
			if w.Cgroup != "" {
				scope = "cgroup " + w.Cgroup
			}
			return psinote.Sentence(*w.SuspectPSI, scope, w.Kernel, loc)
		}
	case correlate.WarnNote:
		return w.Text
	}
	// A kind this version does not know: say so rather than drop it.
	if w.Text != "" {
		return w.Text
	}
	return "analysis warning " + string(w.Kind)
}

// warningTexts is warningText of each warning, never nil.
func warningTexts(ws []correlate.Warning, loc *time.Location) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = warningText(w, loc)
	}
	return out
}

// psiScopeName names the memory PSI an analysis reads, as prose: "the
// host", "the recorded cgroup", or "the host or the cgroup" (--psi-scope
// any).
func psiScopeName(s correlate.PSIScope) string {
	switch s {
	case correlate.PSICgroup:
		return "the recorded cgroup"
	case correlate.PSIAny:
		return "the host or the cgroup"
	}
	return "the host"
}
