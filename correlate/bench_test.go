package correlate

import (
	"math/rand/v2"
	"testing"
	"time"
)

func BenchmarkAnalyzeUnion(b *testing.B) {
	var t testing.T
	rec := unionCase().build(&t)
	for b.Loop() {
		Analyze(rec, Options{Project: testProject})
	}
}

// manyTimes is 29 h of episodes every 7 minutes with up to 20 s of
// jitter, plus 50 at random times: 300 in all.
func manyTimes() []time.Time {
	rng := rand.New(rand.NewPCG(3, 4))
	var ts []time.Time
	for i := range 250 {
		ts = append(ts, t0.Add(time.Duration(i)*7*time.Minute+time.Duration(rng.IntN(20))*time.Second))
	}
	for range 50 {
		ts = append(ts, t0.Add(time.Duration(rng.IntN(24*3600))*time.Second))
	}
	return ts
}

func TestEstimatePeriodMany(t *testing.T) {
	p := estimatePeriod(manyTimes(), t0, t0.Add(30*time.Hour), 2*time.Minute)
	if p == nil || p.Period < 7*time.Minute-2*time.Second || p.Period > 7*time.Minute+2*time.Second || p.Matched < 250 {
		t.Fatalf("period = %+v, want 7m matching at least the 250 scheduled times", p)
	}
}

func BenchmarkEstimatePeriod300(b *testing.B) {
	ts := manyTimes()
	for b.Loop() {
		estimatePeriod(ts, t0, t0.Add(30*time.Hour), 2*time.Minute)
	}
}

// BenchmarkEstimatePeriodSpikes is the latency-spike period search of the
// bench day (bench/analyze.sh): ~490 spike starts, 24 of them hourly and
// the rest at random, over 24 h at 1 s (minimum period 4 s).
func BenchmarkEstimatePeriodSpikes(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	var ts []time.Time
	for h := range 24 {
		ts = append(ts, t0.Add(time.Duration(h)*time.Hour+5*time.Minute))
	}
	for range 465 {
		ts = append(ts, t0.Add(time.Duration(rng.IntN(24*3600))*time.Second))
	}
	for b.Loop() {
		estimatePeriod(ts, t0, t0.Add(24*time.Hour), 4*time.Second)
	}
}

// BenchmarkBeforeOnsetLongRun: the effect-before-cause rule on one spike
// run of 8,000 intervals (a failure burst judged against the whole
// recording's median can last hours) across 399 episodes; a review
// measured the first version of the rule at 20.7 s here.
func BenchmarkBeforeOnsetLongRun(b *testing.B) {
	const n, step = 8000, time.Second
	ivs := make([]ival, n)
	spikes := make([]bool, n)
	lat := make([]float64, n)
	for i := range ivs {
		ivs[i].Start = t0.Add(time.Duration(i) * step)
		ivs[i].End = ivs[i].Start.Add(step)
		spikes[i], lat[i] = true, 1e9
	}
	var spans [][2]int
	for s := 20; s+3 < n; s += 20 {
		spans = append(spans, [2]int{s, s + 2})
	}
	b.ReportAllocs()
	for b.Loop() {
		beforeOnset(ivs, spikes, lat, nil, spans, step+step/4, Options{LatencyMADFactor: 4})
	}
}
