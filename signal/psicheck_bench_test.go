package signal_test

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/signal"
)

// psiDay is n readings at 1 s of a host under light, steady memory
// pressure, with every activity counter moving: what `memdiag analyze`
// feeds PSICheck from a day's recording (86,400 readings).
func psiDay(n int) ([]time.Time, []*psi.Snapshot, []*lru.VMStat) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	ts, ps, vs := make([]time.Time, n), make([]*psi.Snapshot, n), make([]*lru.VMStat, n)
	for i := range n {
		ts[i] = t0.Add(time.Duration(i) * time.Second)
		line := func(share float64) psi.Line {
			return psi.Line{Avg10: 100 * share, Avg60: 100 * share, Avg300: 100 * share, Total: time.Duration(float64(i) * share * float64(time.Second))}
		}
		full := line(0.01)
		ps[i] = &psi.Snapshot{Memory: &psi.Resource{Some: line(0.02), Full: &full}, IO: &psi.Resource{Some: line(0.05), Full: &full}, CPU: &psi.Resource{Some: line(0.1)}}
		c := uint64(1000 * i)
		vs[i] = &lru.VMStat{PgscanKswapd: &c, PgstealKswapd: &c, WorkingsetRefaultFile: &c, Pgmajfault: &c}
	}
	return ts, ps, vs
}

// TestPSICheckAddAllocatesNothing: once its window's buffer has grown,
// Add keeps the last Span of readings without allocating (it re-sliced
// the window and reallocated it every few readings, ~130 MB for a day),
// and the steady readings contradict nothing.
func TestPSICheckAddAllocatesNothing(t *testing.T) {
	ts, ps, vs := psiDay(400)
	c := signal.NewPSICheck(signal.PSICheckOptions{})
	for i := range 200 {
		c.Add(ts[i], ps[i], vs[i])
	}
	i := 200
	if a := testing.AllocsPerRun(150, func() { c.Add(ts[i], ps[i], vs[i]); i++ }); a != 0 {
		t.Errorf("Add allocates %v times a reading, want 0", a)
	}
	if f := c.Findings(); len(f) != 0 {
		t.Errorf("steady PSI with moving counters: findings %+v, want none", f)
	}
}

// BenchmarkPSICheckAdd: one reading of host PSI and vmstat, as analyze
// adds each sample of a recording.
func BenchmarkPSICheckAdd(b *testing.B) {
	const n = 3600
	ts, ps, vs := psiDay(n)
	c := signal.NewPSICheck(signal.PSICheckOptions{})
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i == n {
			c, i = signal.NewPSICheck(signal.PSICheckOptions{}), 0
		}
		c.Add(ts[i], ps[i], vs[i])
		i++
	}
}
