package correlate

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

func TestWaitDelta(t *testing.T) {
	prev := &record.TaskDelays{PID: 7, ReclaimNS: 1e9, ThrashingNS: 5e8, BlkioNS: 2e9}
	cur := &record.TaskDelays{PID: 7, ReclaimNS: 1.3e9, ThrashingNS: 4e8, BlkioNS: 2e9 + uint64(6*time.Hour)}
	d := waitDelta(prev, cur, time.Second)
	// reclaim rose 0.3 s; thrashing fell (not a wait); block I/O rose by
	// the switch's artifact (6 h in 1 s): dropped.
	if d == nil || d.PID != 7 || d.ReclaimNS != 3e8 || d.ThrashingNS != 0 || d.BlkioNS != 0 {
		t.Errorf("waitDelta = %+v", d)
	}
	if waitDelta(prev, &record.TaskDelays{PID: 8, ReclaimNS: 2e9}, time.Second) != nil {
		t.Error("a new victim PID: want no delta")
	}
	if waitDelta(nil, cur, time.Second) != nil || waitDelta(prev, nil, time.Second) != nil {
		t.Error("a missing end: want no delta")
	}
}

// TestVictimWaits: an episode's waits are summed over its intervals and
// the one before it; an interval outside is not counted.
func TestVictimWaits(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	sr := NewSeries(record.Header{Interval: time.Second})
	for i, ns := range []uint64{0, 1e8, 1e8, 6e8, 9e8, 9e8, 1.9e9} {
		sr.Add(&record.Sample{Type: "sample", Seq: i, Time: t0.Add(time.Duration(i) * time.Second),
			VictimDelay: &record.TaskDelays{PID: 42, ReclaimNS: ns, ThrashingNS: ns / 2}})
	}
	// An episode over the intervals ending at 4 s and 5 s: with the one
	// ending at 3 s, reclaim rose 0.5+0.3+0 s.
	eps := []Episode{{Start: t0.Add(3 * time.Second), End: t0.Add(5 * time.Second)}}
	w := victimWaits(sr, eps)[0]
	if w == nil || w.PID != 42 || w.Intervals != 3 || w.ReclaimS != 0.8 || w.ThrashingS != 0.4 || math.Abs(w.MemoryS()-1.2) > 1e-9 {
		t.Errorf("victimWaits = %+v", w)
	}
	if got := victimWaits(NewSeries(record.Header{}), eps)[0]; got != nil {
		t.Errorf("no delays recorded: %+v, want nil", got)
	}
}
