package memstate

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/units"
)

// Thresholds of assess. Any one of them met over the interval means the
// kernel is under memory pressure.
const (
	// pressureStallShare is the PSI memory "some" stall share of wall time
	// from which memory counts as a problem: 1 % means tasks lost 10 ms per
	// second waiting for memory.
	pressureStallShare = 0.01
	// pressureRefaultsPerSec is the refault rate, in pages per second, from
	// which the cache is thrashing (256 pages = 1 MiB/s with 4 KiB pages).
	pressureRefaultsPerSec = 256
	// lowAvailableShare: below this share of MemTotal available, the host
	// itself counts as short of memory.
	lowAvailableShare = 0.10
)

// Verdict says in plain words which memory is the problem.
type Verdict struct {
	// UsedWithCacheBytes is MemTotal − MemFree: what a dashboard's "used"
	// shows when it counts page cache.
	UsedWithCacheBytes uint64 `json:"used_with_cache_bytes"`
	// ReclaimableBytes is MemAvailable − MemFree: page cache and slab the
	// kernel estimates it can take back without swapping.
	ReclaimableBytes uint64 `json:"reclaimable_bytes"`
	// InUseBytes is MemTotal − MemAvailable: memory the kernel does not
	// count as available (anon, shmem, unreclaimable kernel memory, and the
	// watermark reserves MemAvailable holds back).
	InUseBytes uint64 `json:"in_use_bytes"`
	// UnderPressure is nil when no interval was measured.
	UnderPressure *bool    `json:"under_pressure,omitempty"`
	Reasons       []string `json:"reasons,omitempty"` // the signals that crossed a threshold
	Sentence      string   `json:"sentence"`
}

// assess turns the host figures and the activity over an interval into a
// Verdict. An Activity with a zero Interval leaves UnderPressure nil.
func assess(h Host, a Activity) Verdict {
	v := Verdict{
		UsedWithCacheBytes: sub(h.TotalBytes, h.FreeBytes),
		ReclaimableBytes:   sub(h.AvailableBytes, h.FreeBytes),
		InUseBytes:         sub(h.TotalBytes, h.AvailableBytes),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A \"used\" figure that counts cache would show %s of %s (%s); %s of it is page cache and slab the kernel gives back on demand, so %s is not available for reuse",
		FormatBytes(v.UsedWithCacheBytes), FormatBytes(h.TotalBytes), percent(v.UsedWithCacheBytes, h.TotalBytes),
		FormatBytes(v.ReclaimableBytes), FormatBytes(v.InUseBytes))
	b.WriteString(" (processes' anon memory, shmem, kernel memory and reserves).")
	if a.Interval <= 0 {
		b.WriteString(" Pressure was not measured (no interval between two reads).")
		v.Sentence = b.String()
		return v
	}
	secs := a.Interval.Seconds()
	if a.StallSome != nil && *a.StallSome >= pressureStallShare {
		v.Reasons = append(v.Reasons, fmt.Sprintf("PSI memory some %.1f %%", *a.StallSome*100))
	}
	if a.Allocstalls > 0 || a.DirectScanPages > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("direct reclaim (%d stalls, %d pages scanned)", a.Allocstalls, a.DirectScanPages))
	}
	if a.LimitScanPages > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("cgroup-limit reclaim (%d pages scanned)", a.LimitScanPages))
	}
	if float64(a.RefaultPages)/secs >= pressureRefaultsPerSec {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%.0f refaults/s", float64(a.RefaultPages)/secs))
	}
	if a.OOMKills > 0 {
		v.Reasons = append(v.Reasons, english.Count(int(a.OOMKills), "OOM kill"))
	}
	under := len(v.Reasons) > 0
	v.UnderPressure = &under
	over := a.Interval.Round(100 * time.Millisecond)
	hostShort := a.Allocstalls > 0 || a.DirectScanPages > 0 || a.KswapdScanPages > 0 ||
		float64(h.AvailableBytes) < lowAvailableShare*float64(h.TotalBytes)
	switch {
	case under && !hostShort && h.TotalBytes > 0:
		fmt.Fprintf(&b, " Over the last %s memory was under pressure (%s), but the host is not short of it (%s available, no host-wide reclaim): the pressure comes from cgroup limits.",
			over, strings.Join(v.Reasons, ", "), FormatBytes(h.AvailableBytes))
	case under:
		fmt.Fprintf(&b, " Over the last %s the kernel was under memory pressure: %s.", over, strings.Join(v.Reasons, ", "))
	default:
		psiText := "PSI unavailable"
		if a.StallSome != nil {
			psiText = fmt.Sprintf("PSI memory some %.1f %%", *a.StallSome*100)
		}
		fmt.Fprintf(&b, " Over the last %s the kernel was not under memory pressure (%s, %d refaults, no direct reclaim), so the cache is not the problem.",
			over, psiText, a.RefaultPages)
	}
	v.Sentence = b.String()
	return v
}

// explain adds to the sentence what the cgroups and the OOM kills say:
// the groups within 10 % of their limit (or at memory.high), and the
// kills in the log — which of them were a cgroup's limit and which the
// host running out — or, without a readable log, the kernel's count.
func (v *Verdict) explain(cgs []Cgroup, oom OOMReport, loc *time.Location) {
	var near []string
	for _, c := range cgs {
		if !c.NearLimit && !c.NearHigh {
			continue
		}
		// Name what must stay in RAM even when the rest is cache.
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
		near = append(near, fmt.Sprintf("%s (%s of its %s, %s)", c.Path, percent(c.UsageBytes, *lim), of, what))
	}
	if n := len(near); n > 0 {
		if n > 3 {
			near = append(near[:3], fmt.Sprintf("%d more", n-3))
		}
		v.Sentence += fmt.Sprintf(" %s near the limit: %s.", english.Count(n, "cgroup"), strings.Join(near, ", "))
	}
	// Groups below their limit now that reached it before: a usage read
	// now, or a dashboard's samples, would not show it.
	var before []string
	for _, c := range cgs {
		if c.NearLimit || c.LimitBytes == nil || !c.ReachedLimit() {
			continue
		}
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
		before = append(before, fmt.Sprintf("%s (now %s of its limit; %s)", c.Path, percent(c.UsageBytes, *c.LimitBytes), strings.Join(what, ", ")))
	}
	if n := len(before); n > 0 {
		if n > 3 {
			before = append(before[:3], fmt.Sprintf("%d more", n-3))
		}
		verb := "reached its limit before and is below it now"
		if n > 1 {
			verb = "reached their limits before and are below them now"
		}
		v.Sentence += fmt.Sprintf(" %s %s: %s.", english.Count(n, "cgroup"), verb, strings.Join(before, ", "))
	}
	switch k := oom.Kills; {
	case len(k) > 0:
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
		v.Sentence += fmt.Sprintf(" The kernel log has %s (%s)%s %s (PID %d)%s at %s.",
			english.Count(len(k), "OOM kill"), kinds, lead, last.Comm, last.PID, in, when)
	case oom.VMStatOOMKills != nil && *oom.VMStatOOMKills > 0:
		v.Sentence += fmt.Sprintf(" The kernel counted %s since boot (/proc/vmstat oom_kill) but its log does not say which.",
			english.Count(int(*oom.VMStatOOMKills), "OOM kill"))
	}
}

// FormatBytes writes n with a binary (IEC) unit and one decimal: it is
// units.FormatBytes, kept here for this package's callers.
func FormatBytes(n uint64) string { return units.FormatBytes(n) }

// percent writes a/b as a whole percentage, "-" when b is zero.
func percent(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", float64(a)*100/float64(b))
}
