package confirm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/psi"
)

func TestPlanAlternatesOrder(t *testing.T) {
	got, err := Plan(4)
	if err != nil {
		t.Fatal(err)
	}
	var order strings.Builder
	for i, b := range got {
		if b.Index != i || b.Pair != i/2 {
			t.Errorf("block %d: index %d pair %d", i, b.Index, b.Pair)
		}
		order.WriteString(string(b.Arm))
	}
	if order.String() != "ABBAABBA" {
		t.Errorf("order %s, want ABBAABBA", order.String())
	}
	if _, err := Plan(0); err == nil {
		t.Error("Plan(0): no error")
	}
}

// blocksFromP99 builds an experiment whose pair i has the given A and B
// p99 latencies (ms): each block holds 100 requests at 20 ms and one at
// the p99, so the nearest-rank p99 (rank 100 of 101) is 20 ms unless the
// slow request is at rank 100 — two slow requests make it the p99.
func blocksFromP99(a, b []float64) []Measurement {
	var out []Measurement
	mk := func(pair int, arm Arm, p99 float64) Measurement {
		lat := make([]time.Duration, 0, 100)
		for range 98 {
			lat = append(lat, 20*time.Millisecond)
		}
		slow := time.Duration(p99 * float64(time.Millisecond))
		lat = append(lat, slow, slow)
		return Measurement{Block: Block{Pair: pair, Arm: arm}, Wall: 10 * time.Second, Latencies: lat, HasPSI: true}
	}
	for i := range a {
		if i%2 == 0 { // Plan's order: AB BA AB …
			out = append(out, mk(i, AsIs, a[i]), mk(i, HeldOff, b[i]))
		} else {
			out = append(out, mk(i, HeldOff, b[i]), mk(i, AsIs, a[i]))
		}
	}
	return out
}

func TestAnalyzeConfirmed(t *testing.T) {
	// Five pairs; holding the job off lowers p99 by 100, 120, 90, 110, 130 ms.
	a := []float64{600, 640, 580, 620, 650}
	b := []float64{500, 520, 490, 510, 520}
	r, err := Analyze(blocksFromP99(a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Metric != P99Latency {
		t.Fatalf("metric %s", r.Metric)
	}
	wantDiffs := []float64{0.100, 0.120, 0.090, 0.110, 0.130}
	for i, p := range r.Pairs {
		if math.Abs(p.Diff-wantDiffs[i]) > 1e-9 {
			t.Errorf("pair %d diff %g, want %g", i, p.Diff, wantDiffs[i])
		}
	}
	// Mean of the diffs: 550 ms / 5 = 110 ms; A's mean 618 ms.
	if math.Abs(r.Effect-0.110) > 1e-9 || math.Abs(r.MeanA-0.618) > 1e-9 {
		t.Errorf("effect %g mean A %g, want 0.110 and 0.618", r.Effect, r.MeanA)
	}
	// Every diff positive: only the identity reaches the observed sum, p = 1/32.
	if r.P != 1.0/32 || !r.Exact {
		t.Errorf("p %g exact %v, want 1/32 exact", r.P, r.Exact)
	}
	// Bootstrap of the mean of five values with sd 15.8 ms: SE ≈ 6.3 ms
	// (with the bootstrap's n, not n−1), so about 110 ± 12 ms.
	if r.CILow < 0.095 || r.CILow > 0.105 || r.CIHigh < 0.115 || r.CIHigh > 0.125 {
		t.Errorf("CI [%g, %g], want about [0.098, 0.122]", r.CILow, r.CIHigh)
	}
	// Smallest effect that matters: 10 % of 618 ms.
	if math.Abs(r.MinEffect-0.0618) > 1e-9 {
		t.Errorf("min effect %g, want 0.0618", r.MinEffect)
	}
	if r.Verdict != Confirmed {
		t.Errorf("verdict %s (%v), want confirmed", r.Verdict, r.Reasons)
	}
	// Spike threshold: 3 × the median of all requests (20 ms; their MAD
	// is 0, so the deviation rule gives 20 ms); every block has two
	// requests over 60 ms.
	if r.SpikeOver != 60*time.Millisecond || r.SpikesA != 10 || r.SpikesB != 10 {
		t.Errorf("spikes over %v: A %d B %d, want 60ms, 10, 10", r.SpikeOver, r.SpikesA, r.SpikesB)
	}
}

func TestAnalyzeRefuted(t *testing.T) {
	// A decoy: differences of +1, −2, +0.5, −1, +1.5 ms around 200 ms.
	a := []float64{201, 198, 200.5, 199, 201.5}
	b := []float64{200, 200, 200, 200, 200}
	r, err := Analyze(blocksFromP99(a, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Effect-0.0) > 1e-9 {
		t.Errorf("effect %g, want 0", r.Effect)
	}
	// The observed sum is 0. Of the 32 sign sets, as many sum above 0 as
	// below, and Z sum to exactly 0: those whose plus signs pick values of
	// {1, 2, 0.5, 1, 1.5} (ms) summing to 3 — {1,2} twice, {0.5,1,1.5}
	// twice — so Z = 4 and p = (14 + 4)/32.
	if want := 18.0 / 32; r.P != want {
		t.Errorf("p %g, want %g", r.P, want)
	}
	if r.CIHigh >= r.MinEffect || r.Verdict != Refuted {
		t.Errorf("CI high %g min %g verdict %s, want refuted", r.CIHigh, r.MinEffect, r.Verdict)
	}
}

func TestAnalyzeInconclusive(t *testing.T) {
	t.Run("noisy", func(t *testing.T) {
		a := []float64{650, 400, 700, 450, 510}
		b := []float64{500, 500, 500, 500, 500}
		r, err := Analyze(blocksFromP99(a, b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Diffs 150, −100, 200, −50, 10 ms: mean 42 ms.
		if math.Abs(r.Effect-0.042) > 1e-9 || r.Verdict != Inconclusive {
			t.Errorf("effect %g verdict %s, want 0.042 inconclusive", r.Effect, r.Verdict)
		}
		if r.CILow > 0 || r.CIHigh < r.MinEffect {
			t.Errorf("CI [%g, %g] should hold 0 and %g", r.CILow, r.CIHigh, r.MinEffect)
		}
	})
	t.Run("too few pairs", func(t *testing.T) {
		r, err := Analyze(blocksFromP99([]float64{600, 620, 640}, []float64{500, 500, 500}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.P != 1.0/8 || r.Verdict != Inconclusive {
			t.Fatalf("p %g verdict %s, want 1/8 inconclusive", r.P, r.Verdict)
		}
		if !strings.Contains(r.Reasons[0], "3 pairs can neither confirm nor refute") || !strings.Contains(r.Reasons[0], "use 5 pairs") {
			t.Errorf("reason %q", r.Reasons[0])
		}
	})
	// A decoy's differences, but two pairs: its interval lies below the
	// smallest effect that matters, yet two pairs are no 95 % interval
	// (the trial of 2026-12-07 saw REFUTED from one pair).
	t.Run("too few pairs to refute", func(t *testing.T) {
		r, err := Analyze(blocksFromP99([]float64{201, 198}, []float64{200, 200}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.CIHigh >= r.MinEffect || r.Verdict != Inconclusive || !strings.Contains(r.Reasons[0], "2 pairs can neither confirm nor refute") {
			t.Errorf("CI high %g min %g verdict %s %q, want inconclusive for too few pairs", r.CIHigh, r.MinEffect, r.Verdict, r.Reasons)
		}
	})
}

func TestAnalyzeMemoryStallWithoutProbe(t *testing.T) {
	// No probe: the metric is PSI memory "some" share. A blocks stalled
	// 1.2 s of 10 s, B blocks 0.1 s: a 11-point effect in every pair.
	var bl []Measurement
	for p := range 5 {
		bl = append(bl,
			Measurement{Block: Block{Pair: p, Arm: AsIs}, Wall: 10 * time.Second, MemorySome: 1200 * time.Millisecond, HasPSI: true},
			Measurement{Block: Block{Pair: p, Arm: HeldOff}, Wall: 10 * time.Second, MemorySome: 100 * time.Millisecond, HasPSI: true})
	}
	r, err := Analyze(bl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Metric != MemoryStall || math.Abs(r.Effect-0.11) > 1e-9 || r.CILow != r.CIHigh {
		t.Errorf("metric %s effect %g CI [%g, %g], want stall 0.11 with a point interval", r.Metric, r.Effect, r.CILow, r.CIHigh)
	}
	if math.Abs(r.StallA-0.12) > 1e-9 || math.Abs(r.StallB-0.01) > 1e-9 || r.Verdict != Confirmed {
		t.Errorf("stall A %g B %g verdict %s", r.StallA, r.StallB, r.Verdict)
	}
	// Without PSI either, there is nothing to compare.
	for i := range bl {
		bl[i].HasPSI = false
	}
	if _, err := Analyze(bl, Options{}); err == nil || !strings.Contains(err.Error(), "--probe") {
		t.Errorf("err %v, want one naming --probe", err)
	}
}

func TestAnalyzeReproducible(t *testing.T) {
	bl := blocksFromP99([]float64{650, 400, 700, 450, 510}, []float64{500, 500, 500, 500, 500})
	r1, _ := Analyze(bl, Options{Seed: 7})
	r2, _ := Analyze(bl, Options{Seed: 7})
	if diff := cmp.Diff(r1, r2); diff != "" {
		t.Errorf("same seed, different result (-first +second):\n%s", diff)
	}
}

func TestMeasure(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	reqs := []latency.Request{
		{Start: t0, Latency: 30 * time.Millisecond, Status: 200},
		{Start: t0, Latency: 10 * time.Millisecond, Status: 200},
		{Start: t0, Latency: 5 * time.Second, Err: true},
	}
	before := &psi.Resource{Some: psi.Line{Total: 1000 * time.Microsecond}, Full: &psi.Line{Total: 400 * time.Microsecond}}
	after := &psi.Resource{Some: psi.Line{Total: 251000 * time.Microsecond}, Full: &psi.Line{Total: 100400 * time.Microsecond}}
	m := Measure(Block{Index: 3, Pair: 1, Arm: AsIs}, t0, 5*time.Second, reqs, before, after)
	want := []time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	if diff := cmp.Diff(want, m.Latencies); diff != "" {
		t.Errorf("latencies (-want +got):\n%s", diff)
	}
	if m.Errors != 1 || m.MemorySome != 250*time.Millisecond || m.MemoryFull != 100*time.Millisecond {
		t.Errorf("errors %d some %v full %v", m.Errors, m.MemorySome, m.MemoryFull)
	}
	if m.StallShare() != 0.05 || m.P99() != 30*time.Millisecond || m.Spikes(20*time.Millisecond) != 1 {
		t.Errorf("share %g p99 %v spikes %d", m.StallShare(), m.P99(), m.Spikes(20*time.Millisecond))
	}
	if n := Measure(Block{}, t0, time.Second, nil, nil, after); n.HasPSI || n.P99() != 0 {
		t.Errorf("without PSI before: %+v", n)
	}
}
