package correlate

import (
	"time"

	"github.com/memdiag/memdiag/record"
)

// VictimWaits is how long the victim process's threads waited on memory
// in an episode and the interval before it, from its delay accounting
// (record.Sample.VictimDelay: taskstats by TGID, counted while
// kernel.task_delayacct is 1; Documentation/accounting/
// delay-accounting.rst). Seconds, summed over its threads: two threads
// waiting 1 s at once are 2 s.
type VictimWaits struct {
	PID int `json:"pid"`
	// ReclaimS is the wait in direct reclaim (freepages_delay_total).
	ReclaimS float64 `json:"reclaim_s"`
	// ThrashingS is the wait for recently evicted pages read back
	// (thrashing_delay_total).
	ThrashingS float64 `json:"thrashing_s"`
	// SwapinS is the wait for pages read from swap (swapin_delay_total).
	SwapinS float64 `json:"swapin_s"`
	// CompactS is the wait in memory compaction (compact_delay_total).
	CompactS float64 `json:"compact_s"`
	// Intervals is how many of the episode's intervals (and the one
	// before it) had the victim's delays at both ends.
	Intervals int `json:"intervals"`
}

// MemoryS is the victim's whole wait on memory.
func (w *VictimWaits) MemoryS() float64 { return w.ReclaimS + w.ThrashingS + w.SwapinS + w.CompactS }

// maxWaiters bounds an interval's plausible wait: as if this many
// threads waited through the whole interval. A larger rise is the
// kernel's artifact of kernel.task_delayacct switched on while a thread
// was already waiting: the wait's start was never stamped, so its end
// adds the time since boot (seen here: 6 h 47 min of block I/O wait in
// one 1 s interval on a host up 3 h 23 min, right after
// --enable-delayacct). Such a rise is dropped, not counted.
const maxWaiters = 1024

// waitDelta is one interval of dt's rise of the victim's cumulative
// delays; nil where either end lacks them or the victim's PID changed.
func waitDelta(prev, cur *record.TaskDelays, dt time.Duration) *record.TaskDelays {
	if prev == nil || cur == nil || prev.PID != cur.PID {
		return nil
	}
	bound := uint64(max(dt, 0)) * maxWaiters
	sub := func(a, b uint64) uint64 {
		if b < a || b-a > bound {
			return 0 // a counter that fell, or the switch's artifact: not a wait
		}
		return b - a
	}
	return &record.TaskDelays{PID: cur.PID,
		ReclaimNS: sub(prev.ReclaimNS, cur.ReclaimNS), ThrashingNS: sub(prev.ThrashingNS, cur.ThrashingNS),
		SwapinNS: sub(prev.SwapinNS, cur.SwapinNS), CompactNS: sub(prev.CompactNS, cur.CompactNS),
		BlkioNS: sub(prev.BlkioNS, cur.BlkioNS)}
}

// victimWaits sums each episode's victim waits over the intervals the
// chain reads too: the episode's and the one before it (a job fills the
// cache, then the victim stalls). nil for an episode none of whose
// intervals had them.
func victimWaits(sr *Series, eps []Episode) []*VictimWaits {
	out := make([]*VictimWaits, len(eps))
	if !sr.victimDelays {
		return out
	}
	sec := func(ns uint64) float64 { return round3(time.Duration(ns).Seconds()) }
	episodeWindows(sr, eps, func(ep, k int) {
		if k >= len(sr.vdelays) || sr.vdelays[k] == nil {
			return
		}
		d := sr.vdelays[k]
		w := out[ep]
		if w == nil {
			w = &VictimWaits{PID: d.PID}
			out[ep] = w
		}
		w.Intervals++
		w.ReclaimS += sec(d.ReclaimNS)
		w.ThrashingS += sec(d.ThrashingNS)
		w.SwapinS += sec(d.SwapinNS)
		w.CompactS += sec(d.CompactNS)
	})
	for _, w := range out {
		if w != nil {
			w.ReclaimS, w.ThrashingS, w.SwapinS, w.CompactS = round3(w.ReclaimS), round3(w.ThrashingS), round3(w.SwapinS), round3(w.CompactS)
		}
	}
	return out
}
