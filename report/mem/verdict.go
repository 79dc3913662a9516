package mem

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/units"
)

// Described is r with its verdict, its OOM kills' causes and its
// cgroups' notes written in words, in the fields JSON carries them in
// (copies: the caller's r is not changed). Kill times are shown in
// r.Time's zone.
func Described(r memstate.Report) memstate.Report {
	r.OOM.Kills = slices.Clone(r.OOM.Kills)
	r.Cgroups = slices.Clone(r.Cgroups)
	r.Verdict.Reasons = reasons(r.Verdict, r.Activity)
	r.Verdict.Sentence = verdictSentence(r.Host, r.Activity, r.Verdict, r.Root) +
		cgroupsSentence(r.Cgroups) + oomSentence(r.OOM, r.Time.Location())
	for i := range r.OOM.Kills {
		r.OOM.Kills[i].Cause = oomCause(&r.OOM.Kills[i])
	}
	for i := range r.Cgroups {
		r.Cgroups[i].Note = cgroupNote(&r.Cgroups[i])
	}
	r.Procs = slices.Clone(r.Procs)
	for i := range r.Procs {
		r.Procs[i].Retention = withReading(r.Procs[i].Retention)
	}
	return r
}

// reasons names each threshold v crossed with its value over a.
func reasons(v memstate.Verdict, a memstate.Activity) []string {
	var out []string
	for _, c := range v.Crossed {
		switch c {
		case memstate.CrossPSI:
			out = append(out, fmt.Sprintf("PSI memory some %.1f %%", *a.StallSome*100))
		case memstate.CrossDirectReclaim:
			out = append(out, fmt.Sprintf("direct reclaim (%d stalls, %d pages scanned)", a.Allocstalls, a.DirectScanPages))
		case memstate.CrossLimitReclaim:
			out = append(out, fmt.Sprintf("cgroup-limit reclaim (%d pages scanned)", a.LimitScanPages))
		case memstate.CrossRefaults:
			out = append(out, fmt.Sprintf("%.0f refaults/s", float64(a.RefaultPages)/a.Interval.Seconds()))
		case memstate.CrossOOMKills:
			out = append(out, english.Count(int(a.OOMKills), "OOM kill"))
		}
	}
	return out
}

// verdictSentence says which memory is in use, and whether the interval
// was under pressure, and from what (v.Reasons, written by reasons); root
// is the tree read when not the live host (mem --root).
func verdictSentence(h memstate.Host, a memstate.Activity, v memstate.Verdict, root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A \"used\" figure that counts cache would show %s of %s (%s); %s of it is page cache and slab the kernel gives back on demand, so %s is not available for reuse",
		units.FormatBytes(v.UsedWithCacheBytes), units.FormatBytes(h.TotalBytes), percent(v.UsedWithCacheBytes, h.TotalBytes),
		units.FormatBytes(v.ReclaimableBytes), units.FormatBytes(v.InUseBytes))
	b.WriteString(" (processes' anon memory, shmem, kernel memory and reserves).")
	switch {
	case v.UnderPressure == nil && root != "":
		fmt.Fprintf(&b, " Pressure was not measured: the files under %s were read once (--interval reads them twice, for a live tree); the PSI averages shown are the file's own.", root)
		return b.String()
	case v.UnderPressure == nil:
		b.WriteString(" Pressure was not measured (no interval between two reads).")
		return b.String()
	}
	over := a.Interval.Round(100 * time.Millisecond)
	why := strings.Join(v.Reasons, ", ")
	switch under := *v.UnderPressure; {
	case under && !v.HostShort && h.TotalBytes > 0:
		fmt.Fprintf(&b, " Over the last %s memory was under pressure (%s), but the host is not short of it (%s available, no host-wide reclaim): the pressure comes from cgroup limits.",
			over, why, units.FormatBytes(h.AvailableBytes))
	case under:
		fmt.Fprintf(&b, " Over the last %s the kernel was under memory pressure: %s.", over, why)
	default:
		psiText := "PSI unavailable"
		if a.StallSome != nil {
			psiText = fmt.Sprintf("PSI memory some %.1f %%", *a.StallSome*100)
		}
		fmt.Fprintf(&b, " Over the last %s the kernel was not under memory pressure (%s, %d refaults, no direct reclaim), so the cache is not the problem.",
			over, psiText, a.RefaultPages)
	}
	return b.String()
}

// cgroupsSentence names the groups within 10 % of their limit (or at
// memory.high), then those below it now that reached it before: a usage
// read now, or a dashboard's samples, would not show it.
func cgroupsSentence(cgs []memstate.Cgroup) string {
	var near, before []string
	for _, c := range cgs {
		if c.NearLimit || c.NearHigh {
			near = append(near, nearText(c))
		}
		if !c.NearLimit && c.LimitBytes != nil && c.ReachedLimit() {
			before = append(before, beforeText(c))
		}
	}
	var s string
	if n := len(near); n > 0 {
		s += fmt.Sprintf(" %s near the limit: %s.", english.Count(n, "cgroup"), strings.Join(firstThree(near), ", "))
	}
	if n := len(before); n > 0 {
		verb := "reached its limit before and is below it now"
		if n > 1 {
			verb = "reached their limits before and are below them now"
		}
		s += fmt.Sprintf(" %s %s: %s.", english.Count(n, "cgroup"), verb, strings.Join(firstThree(before), ", "))
	}
	return s
}

// firstThree is the first three of l and "N more" for the rest.
func firstThree(l []string) []string {
	if n := len(l); n > 3 {
		return append(l[:3:3], fmt.Sprintf("%d more", n-3))
	}
	return l
}

// nearText is a group near its limit or memory.high: what must stay in
// RAM even when the rest is cache.
func nearText(c memstate.Cgroup) string {
	of := "limit"
	lim := c.LimitBytes
	if !c.NearLimit {
		of, lim = "memory.high", c.HighBytes
	}
	pinned := pinnedText(&c, of, *lim)
	what := "mostly anon/shmem: " + pinned
	if c.MostlyCache {
		what = "mostly reclaimable cache; " + pinned
	}
	return fmt.Sprintf("%s (%s of its %s, %s)", c.Path, percent(c.UsageBytes, *lim), of, what)
}

// beforeText is a group below its limit now that reached it before.
func beforeText(c memstate.Cgroup) string {
	var what []string
	if n, src, ok := c.LimitHits(); ok && n > 0 {
		what = append(what, fmt.Sprintf("reached it %s (%s)", english.Count(int(n), "time"), src))
	}
	if c.OOMKills != nil && *c.OOMKills > 0 {
		what = append(what, english.Count(int(*c.OOMKills), "OOM kill"))
	}
	if c.PeakBytes != nil {
		what = append(what, "peak "+percent(*c.PeakBytes, *c.LimitBytes))
	}
	return fmt.Sprintf("%s (now %s of its limit; %s)", c.Path, percent(c.UsageBytes, *c.LimitBytes), strings.Join(what, ", "))
}

// oomSentence says what the kernel log has of OOM kills — which of them
// were a cgroup's limit and which the host running out — or, without a
// readable log, the kernel's count.
func oomSentence(oom memstate.OOMReport, loc *time.Location) string {
	k := oom.Kills
	if len(k) == 0 {
		if oom.VMStatOOMKills != nil && *oom.VMStatOOMKills > 0 {
			return fmt.Sprintf(" The kernel counted %s since boot (/proc/vmstat oom_kill) but its log does not say which.",
				english.Count(int(*oom.VMStatOOMKills), "OOM kill"))
		}
		return ""
	}
	memcg := 0
	for _, x := range k {
		if x.Constraint == "memcg" {
			memcg++
		}
	}
	last := k[len(k)-1]
	where := last.TaskCgroup
	if last.OOMCgroup != "" {
		where = last.OOMCgroup
	}
	when := last.SinceBoot.Round(time.Second).String() + " after boot"
	if !last.Time.IsZero() {
		when = last.Time.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	var kinds string
	switch {
	case memcg == len(k) && memcg == 1:
		kinds = "at a cgroup's limit"
	case memcg == len(k):
		kinds = "all at cgroup limits"
	case memcg == 0:
		kinds = "none at a cgroup's limit: the host or a cpuset/mempolicy ran out"
	default:
		kinds = fmt.Sprintf("%d at cgroup limits, %d with the host or a cpuset/mempolicy out of memory", memcg, len(k)-memcg)
	}
	lead := "; the last"
	if len(k) == 1 {
		lead = ":"
	}
	in := " in " + where
	if where == "" {
		in = " (its cgroup is not in the log)"
	}
	return fmt.Sprintf(" The kernel log has %s (%s)%s %s (PID %d)%s at %s.",
		english.Count(len(k), "OOM kill"), kinds, lead, last.Comm, last.PID, in, when)
}

// percent writes a/b as a whole percentage, "-" when b is zero.
func percent(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", float64(a)*100/float64(b))
}
