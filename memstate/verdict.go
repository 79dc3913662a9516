package memstate

import (
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

// Verdict is which memory is the problem, as figures and the thresholds
// the interval crossed; report/mem writes it in words (Sentence, Reasons).
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
	UnderPressure *bool `json:"under_pressure,omitempty"`
	// Crossed are the thresholds the interval crossed, in the order they
	// are named; UnderPressure is true when there is one.
	Crossed []Crossing `json:"-"`
	// HostShort: the host itself ran short of memory over the interval
	// (direct or kswapd reclaim, or less than 10 % of MemTotal
	// available), so pressure is not from cgroup limits alone.
	HostShort bool `json:"-"`
	// Reasons and Sentence are the verdict in words, written by
	// report/mem before it renders the report; memstate leaves them empty.
	Reasons  []string `json:"reasons,omitempty"`
	Sentence string   `json:"sentence"`
}

// Crossing is one threshold of assess that an interval crossed.
type Crossing int

// The thresholds, in the order a verdict names them.
const (
	CrossPSI           Crossing = iota // PSI memory some ≥ 1 % of wall time
	CrossDirectReclaim                 // any allocstall or pgscan_direct
	CrossLimitReclaim                  // any reclaim at cgroup limits
	CrossRefaults                      // ≥ 256 refaults/s
	CrossOOMKills                      // any oom_kill
)

// assess turns the host figures and the activity over an interval into a
// Verdict. An Activity with a zero Interval leaves UnderPressure nil.
func assess(h Host, a Activity) Verdict {
	v := Verdict{
		UsedWithCacheBytes: sub(h.TotalBytes, h.FreeBytes),
		ReclaimableBytes:   sub(h.AvailableBytes, h.FreeBytes),
		InUseBytes:         sub(h.TotalBytes, h.AvailableBytes),
	}
	if a.Interval <= 0 {
		return v
	}
	// In the order a verdict names them (the constants' order).
	for c, crossed := range []bool{
		CrossPSI:           a.StallSome != nil && *a.StallSome >= pressureStallShare,
		CrossDirectReclaim: a.Allocstalls > 0 || a.DirectScanPages > 0,
		CrossLimitReclaim:  a.LimitScanPages > 0,
		CrossRefaults:      float64(a.RefaultPages)/a.Interval.Seconds() >= pressureRefaultsPerSec,
		CrossOOMKills:      a.OOMKills > 0,
	} {
		if crossed {
			v.Crossed = append(v.Crossed, Crossing(c))
		}
	}
	under := len(v.Crossed) > 0
	v.UnderPressure = &under
	v.HostShort = a.Allocstalls > 0 || a.DirectScanPages > 0 || a.KswapdScanPages > 0 ||
		float64(h.AvailableBytes) < lowAvailableShare*float64(h.TotalBytes)
	return v
}

// FormatBytes writes n with a binary (IEC) unit and one decimal: it is
// units.FormatBytes, kept here for this package's callers.
func FormatBytes(n uint64) string { return units.FormatBytes(n) }
