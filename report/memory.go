package report

import (
	"fmt"
	"strings"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/report/mem"
)

// memoryText writes the OOM kills and the processes whose anonymous
// memory grew steadily, each with its evidence lines nested under it,
// after the verdict; nothing when there are none.
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
			switch {
			case scope != "host":
				scope = "cgroup " + scope
			case r.PSIScope == correlate.PSICgroup:
				// The episodes are the group's stall; this onset is the
				// whole machine's, perhaps another tenant's.
				scope = "host-wide, not the analysed group's"
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
	var waited []*correlate.Episode
	for i := range r.Episodes {
		if w := r.Episodes[i].VictimWaits; w != nil && w.MemoryS() > 0 {
			waited = append(waited, &r.Episodes[i])
		}
	}
	if len(waited) > 0 {
		b.WriteString("\n")
		heading("The victim's waits on memory")
		for _, e := range waited {
			fmt.Fprintf(b, "%sepisode at %s: %s\n", bullet, episodeTime(r, e), victimWaitsText(e.VictimWaits))
		}
	}
	if len(r.OOMKills) > 0 {
		b.WriteString("\n")
		heading("OOM kills")
		for _, k := range r.OOMKills {
			fmt.Fprintf(b, "%s%s: %s\n", bullet, in(r, k.Time).Format(timeLayout(r)), oomText(k))
		}
	}
	if len(r.Growth) > 0 {
		b.WriteString("\n")
		heading("Memory growth")
		for _, g := range mem.DescribeGrowth(r.Growth) {
			fmt.Fprintf(b, "%s%s (pid %d): anonymous memory grew %.0f MiB/h (R² %.2f) over %s, %s → %s\n",
				bullet, g.Comm, g.PID, g.AnonSlope, g.AnonR2, correlate.FormatDuration(g.Observed),
				memstate.FormatBytes(g.AnonFirstBytes), memstate.FormatBytes(g.AnonLastBytes))
			for _, l := range g.Evidence {
				fmt.Fprintf(b, "  %s%s\n", bullet, l)
			}
		}
		fmt.Fprintf(b, "\n%s\n", mem.LeakOrRetention)
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

// exitedNamed is how many of the processes that exited in an OOM kill's
// interval the text names; the JSON has them all.
const exitedNamed = 3

// oomText says what an interval's OOM kills were: the victims the kernel
// log named (with their memory cgroup), else the processes that exited
// then, and whether the kills were in the --cgroup group analysed.
func oomText(k correlate.OOMKill) string {
	what := english.Count(k.Count, "OOM kill")
	outside := k.Group != "" && k.InGroup != nil && *k.InGroup == 0
	if len(k.Victims) > 0 {
		var vs []string
		all := k.Group != ""
		for _, v := range k.Victims {
			s := fmt.Sprintf("%s (PID %d)", v.Comm, v.PID)
			if v.Cgroup != "" {
				s += " in " + v.Cgroup
			}
			if v.OOMCgroup != "" && v.OOMCgroup != v.Cgroup {
				s += " (limit of " + v.OOMCgroup + ")"
			}
			all = all && v.OutsideScope
			vs = append(vs, s)
		}
		what += ": killed " + strings.Join(vs, ", ")
		if all || outside {
			what += "; outside the analysed group " + k.Group
		}
		return what
	}
	switch {
	case outside:
		// Its own counter did not rise: another group's kill, and the
		// processes that happened to exit then say nothing about it.
		return what + " outside the analysed group " + k.Group + " (its oom_kill did not rise); the recording does not name the victim"
	case k.Group != "" && k.InGroup != nil:
		what += fmt.Sprintf(", %d in the analysed group", *k.InGroup)
	}
	if n := len(k.Exited); n > 0 {
		ex := k.Exited
		if n > exitedNamed {
			// A busy host's interval can see dozens exit (28 in the
			// new-user trial, 240 columns): the first few, then the count.
			ex = append(ex[:exitedNamed:exitedNamed], fmt.Sprintf("%d more (JSON: oom_kills[].exited)", n-exitedNamed))
		}
		what += "; the recording does not name the victim; exited then: " + strings.Join(ex, ", ")
	}
	return what
}
