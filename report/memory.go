package report

import (
	"fmt"
	"strings"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/memstate"
)

// memoryText writes the OOM kills and the processes whose anonymous
// memory grew steadily, after the verdict; nothing when there are none.
func memoryText(b *strings.Builder, r *correlate.Result, heading func(string), bullet string) {
	var onsets []*correlate.Episode
	for i := range r.Episodes {
		if r.Episodes[i].Onset != nil {
			onsets = append(onsets, &r.Episodes[i])
		}
	}
	if len(onsets) > 0 {
		b.WriteString("\n")
		heading("Stall onsets")
		for _, e := range onsets {
			o := e.Onset
			scope := o.Scope
			if scope != "host" {
				scope = "cgroup " + scope
			}
			fmt.Fprintf(b, "%sepisode at %s: %s stall %s within %s crossed at %s (%s, %s)", bullet,
				episodeTime(r, e), o.Kind, correlate.FormatDuration(o.Stall), correlate.FormatDuration(o.Window),
				in(r, o.Time).Format(onsetLayout(r)), scope, o.Mode)
			if len(o.Procs) > 0 {
				var ps []string
				for _, p := range o.Procs[:min(3, len(o.Procs))] {
					n := fmt.Sprintf("%s %d", p.Comm, p.PID)
					if p.Unit != "" {
						n += " (" + p.Unit + ")"
					}
					ps = append(ps, n)
				}
				fmt.Fprintf(b, "; processes then: %s", strings.Join(ps, ", "))
			}
			b.WriteString("\n")
		}
	}
	if len(r.OOMKills) > 0 {
		b.WriteString("\n")
		heading("OOM kills")
		for _, k := range r.OOMKills {
			fmt.Fprintf(b, "%s%s: %s", bullet, in(r, k.Time).Format(timeLayout(r)), english.Count(k.Count, "OOM kill"))
			if len(k.Exited) > 0 {
				fmt.Fprintf(b, "; exited then: %s", strings.Join(k.Exited, ", "))
			}
			b.WriteString("\n")
		}
	}
	if len(r.Growth) > 0 {
		b.WriteString("\n")
		heading("Memory growth")
		for _, g := range r.Growth {
			fmt.Fprintf(b, "%s%s (pid %d): anonymous memory grew %.0f MiB/h (R² %.2f) over %s, %s → %s\n",
				bullet, g.Comm, g.PID, g.AnonSlope, g.AnonR2, correlate.FormatDuration(g.Observed),
				memstate.FormatBytes(g.AnonFirstBytes), memstate.FormatBytes(g.AnonLastBytes))
		}
		fmt.Fprintf(b, "\n%s\n", memstate.LeakOrRetention)
	}
}

// onsetLayout is the format of a stall onset's own moment: to the
// millisecond, with the date when the recording spans days.
func onsetLayout(r *correlate.Result) string {
	if spansDays(r) {
		return "Jan 2 15:04:05.000"
	}
	return "15:04:05.000"
}
