package mem

import (
	"fmt"
	"strings"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/units"
)

// cgroupNote is the group's state in words: at memory.high, or at its
// limit (what must stay in RAM, the working set, the PSI), then what it
// reached before now and its reclaim protections; "" when none applies.
func cgroupNote(cg *memstate.Cgroup) string {
	var parts []string
	if s := limitNow(cg); s != "" {
		parts = append(parts, s)
	}
	if h := limitHistory(cg); h != "" {
		parts = append(parts, h)
	}
	if p := protections(cg); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// limitNow says what it means that the group is at memory.high or near
// its limit now; "" when it is neither.
func limitNow(cg *memstate.Cgroup) string {
	// Without the group's PSI, say what to watch instead.
	psiText := "no memory.pressure for it (no PSI in this kernel): watch memory.events max and its refaults instead"
	if cg.Version == 1 {
		psiText = "no memory.pressure for it (a v1 group without a v2 twin): watch memory.failcnt and its refaults instead"
	}
	if cg.PSI != nil {
		psiText = fmt.Sprintf("its memory PSI is some avg10=%.2f %%", cg.PSI.Some.Avg10)
	}
	if cg.NearHigh {
		s := fmt.Sprintf("%s of its memory.high (%s): the kernel throttles its allocations and reclaims it there (memory.events high=%d)",
			percent(cg.UsageBytes, *cg.HighBytes), units.FormatBytes(*cg.HighBytes), cg.Events["high"])
		if cg.SwapBytes != nil && *cg.SwapBytes > 0 {
			s += fmt.Sprintf(", %s of it swapped out", units.FormatBytes(*cg.SwapBytes))
		}
		return s + "; " + psiText
	}
	if !cg.NearLimit {
		return ""
	}
	// What the group cannot give back, against its limit.
	unrecl := pinnedText(cg, "limit", *cg.LimitBytes)
	ws := fmt.Sprintf("working set (usage − inactive file) %s", units.FormatBytes(cg.WorkingSetBytes))
	used, cache := percent(cg.UsageBytes, *cg.LimitBytes), units.FormatBytes(cg.CacheBytes)
	switch {
	case cg.MostlyCache && cg.Stalling:
		// That the working set does not fit is said only where the
		// estimate shows it (within 10 % of the limit): a trial's group
		// at 111 MiB of a 240 MiB limit was told it did not fit.
		fit := ", its working set does not fit the limit"
		if float64(cg.WorkingSetBytes) < 0.9*float64(*cg.LimitBytes) {
			fit = " (the working set estimate is under the limit: the stall is reclaim's own cost, or the cache the tasks reuse is larger than it shows)"
		}
		return fmt.Sprintf("%s of its limit, mostly page cache (%s, reclaimable), %s, %s; but %s: reclaiming it stalls the group's tasks%s",
			used, cache, unrecl, ws, psiText, fit)
	case cg.MostlyCache:
		return fmt.Sprintf("%s of its limit, mostly page cache (%s, reclaimable), %s, %s: fine unless reclaiming it stalls the group's tasks; %s",
			used, cache, unrecl, ws, psiText)
	}
	return fmt.Sprintf("%s of its limit, mostly anon/shmem: %s; cache %s, %s: the next allocations reclaim the cache, swap, or OOM-kill; %s",
		used, unrecl, cache, ws, psiText)
}

// limitHistory says what the group reached before now, from the kernel's
// own counters: how many times it hit its limit, the OOM kills, and its
// peak against the limit, then (when not at its limit now) its usage now.
// A usage read now, or a dashboard's samples, can show 80 % of a limit
// the group hit a thousand times. "" when none of it happened.
func limitHistory(cg *memstate.Cgroup) string {
	if !cg.ReachedLimit() {
		return ""
	}
	var parts []string
	n, src, ok := cg.LimitHits()
	switch {
	case ok && n > 0 && cg.LimitBytes == nil:
		parts = append(parts, fmt.Sprintf("it reached a memory limit %s (%s), though it has none now", english.Count(int(n), "time"), src))
	case ok && n > 0:
		parts = append(parts, fmt.Sprintf("it reached its limit %s (%s)", english.Count(int(n), "time"), src))
	}
	if v, has := cg.Events["oom"]; has && cg.Version == 2 && v > 0 {
		parts = append(parts, fmt.Sprintf("%s reclaim could not make room (memory.events oom)", english.Count(int(v), "time")))
	}
	if cg.OOMKills != nil && *cg.OOMKills > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s oom_kill)", english.Count(int(*cg.OOMKills), "OOM kill"),
			map[int]string{1: "memory.oom_control", 2: "memory.events"}[cg.Version]))
	}
	if cg.PeakBytes != nil {
		peak := fmt.Sprintf("its peak was %s (%s)", units.FormatBytes(*cg.PeakBytes), map[int]string{1: "memory.max_usage_in_bytes", 2: "memory.peak"}[cg.Version])
		if cg.LimitBytes != nil {
			peak += ", " + percent(*cg.PeakBytes, *cg.LimitBytes) + " of its limit"
		}
		parts = append(parts, peak)
	}
	s := "since the group was made"
	if cg.Version == 1 {
		s += " (or its counters were last reset)"
	}
	s += ": " + strings.Join(parts, ", ")
	if !cg.NearLimit && cg.LimitBytes != nil {
		s += fmt.Sprintf("; now %s of its limit, which is not what it reached", percent(cg.UsageBytes, *cg.LimitBytes))
	}
	return s
}

// pinnedText says what reclaim cannot take from a group at its limit,
// in the words of free(1) and below: how much must stay in RAM (anon and
// shmem beyond what swap can take, and unreclaimable kernel memory),
// against the limit, and why; or that nothing must, when swap can take
// all the anon and shmem.
func pinnedText(cg *memstate.Cgroup, of string, lim uint64) string {
	held := cg.UnreclaimableBytes // anon + shmem
	var why []string
	switch {
	case held == 0:
	case cg.SwapRoomBytes >= held:
		why = append(why, fmt.Sprintf("swap can take all its anon %s and shmem %s, with %s free for it",
			units.FormatBytes(cg.AnonBytes), units.FormatBytes(cg.ShmemBytes), units.FormatBytes(cg.SwapRoomBytes)))
	default:
		var swap string
		switch {
		case cg.SwapRoomBytes > 0:
			swap = "swap can take only " + units.FormatBytes(cg.SwapRoomBytes) + " of them"
		case cg.Swappiness != nil && *cg.Swappiness == 0:
			swap = "its memory.swappiness is 0"
		case cg.SwapLimitBytes != nil && *cg.SwapLimitBytes == 0:
			swap = "the group may not use swap"
		case cg.SwapLimitBytes != nil && *cg.SwapLimitBytes <= derefBytes(cg.SwapBytes):
			swap = fmt.Sprintf("its swap allowance of %s is used up", units.FormatBytes(*cg.SwapLimitBytes))
		default:
			swap = "no swap is free"
		}
		why = append(why, fmt.Sprintf("its anon %s and shmem %s can only go to swap, and %s",
			units.FormatBytes(cg.AnonBytes), units.FormatBytes(cg.ShmemBytes), swap))
	}
	if k := cg.PinnedBytes - (held - min(held, cg.SwapRoomBytes)); k > 0 {
		why = append(why, units.FormatBytes(k)+" is kernel memory that cannot be freed")
	}
	if cg.PinnedBytes == 0 {
		if len(why) == 0 {
			return "nothing must stay in RAM"
		}
		return "nothing must stay in RAM (" + strings.Join(why, "; ") + ")"
	}
	return fmt.Sprintf("%s must stay in RAM (%s of the %s: %s)", units.FormatBytes(cg.PinnedBytes), percent(cg.PinnedBytes, lim), of, strings.Join(why, "; "))
}

// protections says which reclaim protections the group has, "" if none.
func protections(cg *memstate.Cgroup) string {
	var p []string
	if cg.MinBytes != nil {
		p = append(p, "memory.min "+units.FormatBytes(*cg.MinBytes)+" (never reclaimed below it)")
	}
	if cg.LowBytes != nil {
		p = append(p, "memory.low "+units.FormatBytes(*cg.LowBytes)+" (reclaimed below it only when nothing unprotected is left)")
	}
	if cg.SoftLimitBytes != nil {
		p = append(p, "memory.soft_limit_in_bytes "+units.FormatBytes(*cg.SoftLimitBytes)+" (under host pressure reclaimed down to it first)")
	}
	if len(p) == 0 {
		return ""
	}
	return "protections: " + strings.Join(p, ", ")
}
