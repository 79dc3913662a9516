// Package psinote writes the sentence of a suspect-PSI finding
// (signal.PSISuspect), the one wording analyze, gate and mem print.
package psinote

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/units"
)

// Sentence says what contradicted what in scope ("the host", "cgroup
// /x") on kernel (uname -r; "" when unknown), with times in loc (UTC if
// nil). It starts "suspect PSI".
func Sentence(x signal.PSISuspect, scope, kernel string, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	k := "kernel " + kernel
	if kernel == "" {
		k = "kernel version unknown"
	}
	clock := func(t time.Time) string { return t.In(loc).Format("15:04:05") }
	what := fmt.Sprintf("%s's %s %s", scope, x.Resource, x.Line)
	switch x.Kind {
	case signal.PSIAveragesVsTotal:
		bound := "at most"
		if x.Reported < x.Bound {
			bound = "at least"
		}
		var body string
		if x.SinceBoot {
			body = fmt.Sprintf("%s avg%d read %s at %s, but its total since boot (or the group's creation) allows %s %s",
				what, x.Avg, pct(x.Reported), clock(x.To), bound, pct(x.Bound))
		} else {
			body = fmt.Sprintf("%s avg%d read %s at %s while its total rose %s of the %s before, which allows %s %s",
				what, x.Avg, pct(x.Reported), clock(x.To), pct(x.TotalShare), x.To.Sub(x.From).Round(time.Second), bound, pct(x.Bound))
		}
		if len(x.Also) > 0 {
			body += "; " + strings.Join(x.Also, ", ") + " too"
		}
		return fmt.Sprintf("suspect PSI (%s): %s (%d of %d checks disagree); the averages and total count the same stall time, so one of them is wrong, as a PSI accounting bug of this kernel would make them: what is judged on this PSI is unproven",
			k, body, x.Contradicts, x.Checked)
	case signal.PSIStallWithoutActivity:
		return fmt.Sprintf("suspect PSI (%s): %s total says %s of %s–%s (%s) was stalled, yet none of %d reclaim, refault, swap, major-fault and allocstall counters moved (%s); a memory stall comes from those, so a PSI accounting bug of this kernel is likely (or a cgroup held above memory.high with nothing it can reclaim): what is judged on this PSI is unproven",
			k, what, pct(x.TotalShare), clock(x.From), clock(x.To), x.To.Sub(x.From).Round(time.Second), len(x.Counters), families(x.Counters))
	}
	return fmt.Sprintf("suspect PSI (%s): %s: %s", k, what, x.Kind)
}

// pct is "37.7 %", "99 %".
func pct(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0") + " %"
}

// families shortens counter names to their families: "pgscan_*,
// pgsteal_*, workingset_*, pswpin, pswpout, pgmajfault, allocstall".
func families(names []string) string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		f := n
		for _, p := range []string{"pgscan_", "pgsteal_", "workingset_"} {
			if strings.HasPrefix(n, p) {
				f = p + "*"
			}
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return strings.Join(out, ", ")
}

// LimitNote is ", memory limited to 224.0 MiB with every group under
// /x.slice" (or without the "with" part for the scope's own limit) for
// a cgroup scope, the directory scopeDir, whose memory is bounded by the
// limit of the group limit (a group path: the scope's own or an
// ancestor's), "" without one. A group's memory stall is most often its
// limit reached, not the host short of memory (issue 30.3): analyze and
// gate say it beside the scope. The limit is taken as the scope's own
// when its path ends scopeDir (a group path that repeats its parent's
// name, /a/a under /a, reads as its own).
func LimitNote(scopeDir, limit string, bytes uint64) string {
	if scopeDir == "" || limit == "" {
		return ""
	}
	n := ", memory limited to " + units.FormatBytes(bytes)
	if !strings.HasSuffix(filepath.Clean(scopeDir), filepath.Clean(limit)) {
		n += " with every group under " + limit
	}
	return n
}
