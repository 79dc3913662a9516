package confirm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/memdiag/memdiag/latency"
)

// Verdict is the experiment's answer.
type Verdict string

// Verdicts.
const (
	// Confirmed: holding the job off lowered the metric by at least the
	// smallest effect that matters, and chance alone is unlikely to explain it.
	Confirmed Verdict = "confirmed"
	// Refuted: with 95 % confidence, holding the job off gains less than
	// the smallest effect that matters.
	Refuted Verdict = "refuted"
	// Inconclusive: neither; more pairs or longer blocks may decide.
	Inconclusive Verdict = "inconclusive"
)

// Metric names what the verdict is computed on.
type Metric string

// Metrics.
const (
	// P99Latency is each block's 99th percentile probe latency, in seconds.
	P99Latency Metric = "p99_latency_seconds"
	// MemoryStall is each block's share of wall time some task stalled on
	// memory (PSI memory "some", 0..1), used when there is no probe.
	MemoryStall Metric = "memory_some_stall_share"
)

// Options tune [Analyze]. Zero values take the defaults.
type Options struct {
	// MinRelative is the smallest effect that matters, as a share of arm
	// A's mean (default 0.10: holding the job off must gain 10 %).
	MinRelative float64
	// SpikeOver is the latency above which a request is a spike; default
	// analyze's rule applied to every request of the run, both arms
	// pooled: above 3 × their median and above median + 4 × 1.4826 × MAD.
	SpikeOver time.Duration
	// Resamples is the number of bootstrap resamples (default 10000).
	Resamples int
	// Seed seeds the bootstrap, so a result can be recomputed exactly.
	Seed uint64
	// Alpha is the largest p-value that confirms (default 0.05).
	Alpha float64
}

// Floors under the smallest effect that matters, so that a quiet A arm
// (a p99 of 2 ms, no stall at all) does not make noise significant.
const (
	minP99Effect   = 0.001 // seconds
	minStallEffect = 0.005 // share of wall time: half a percentage point
)

// PairDiff is one pair's values of the metric and their difference. Pair
// counts from 1, as the JSON's blocks[].pair does.
type PairDiff struct {
	Pair int     `json:"pair"`
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	Diff float64 `json:"a_minus_b"`
}

// Result is the statistics of an experiment. Effect, CI and MinEffect are
// in the metric's unit (seconds or a share of wall time); a positive
// effect means the metric was lower with the job held off.
type Result struct {
	Metric    Metric     `json:"metric"`
	Pairs     []PairDiff `json:"pairs"`
	MeanA     float64    `json:"mean_a"`
	MeanB     float64    `json:"mean_b"`
	Effect    float64    `json:"effect"`   // mean of A−B over pairs
	Relative  float64    `json:"relative"` // Effect / MeanA; 0 when MeanA is 0
	CILow     float64    `json:"ci_low"`   // 95 % bootstrap percentile interval of Effect
	CIHigh    float64    `json:"ci_high"`
	P         float64    `json:"p"` // one-sided sign-flip permutation p-value of Effect > 0
	Exact     bool       `json:"p_exact"`
	MinEffect float64    `json:"min_effect"`
	// SpikeOver is the spike threshold; SpikesA and SpikesB the requests
	// over it in each arm, summed over blocks.
	SpikeOver time.Duration `json:"spike_over_ns"`
	SpikesA   int           `json:"spikes_a"`
	SpikesB   int           `json:"spikes_b"`
	// StallA and StallB are each arm's memory "some" stall share over all
	// its blocks (total stall / total wall time).
	StallA  float64  `json:"memory_stall_a"`
	StallB  float64  `json:"memory_stall_b"`
	Verdict Verdict  `json:"verdict"`
	Reasons []string `json:"reasons"`
}

// Analyze compares the blocks of an experiment pair by pair. The metric
// is p99 latency when every block has probe requests, else the memory
// stall share (every block needs PSI then). Blocks are matched by Pair;
// a pair lacking either arm is left out.
func Analyze(blocks []Measurement, o Options) (Result, error) {
	o = o.withDefaults()
	r := Result{Metric: MemoryStall}
	if withLatency(blocks) {
		r.Metric = P99Latency
	} else if !withPSI(blocks) {
		return r, fmt.Errorf("nothing to compare: the blocks had no probe requests (give --probe URL) and no memory PSI in each (proc/pressure/memory, of --root when given, was not readable: it needs kernel 4.20+ with PSI on)")
	}
	r.Pairs = pairDiffs(blocks, r.Metric)
	if len(r.Pairs) == 0 {
		return r, fmt.Errorf("no complete pair of A and B blocks")
	}
	r.SpikeOver = o.SpikeOver
	if r.SpikeOver == 0 {
		r.SpikeOver = spikeThreshold(blocks)
	}
	r.tally(blocks)
	diffs := make([]float64, len(r.Pairs))
	var sumA, sumB float64
	for i, p := range r.Pairs {
		diffs[i] = p.Diff
		sumA += p.A
		sumB += p.B
	}
	n := float64(len(r.Pairs))
	r.MeanA, r.MeanB, r.Effect = sumA/n, sumB/n, mean(diffs)
	if r.MeanA > 0 {
		r.Relative = r.Effect / r.MeanA
	}
	r.CILow, r.CIHigh = bootstrapCI(diffs, o.Resamples, o.Seed, 0.95)
	r.P, r.Exact = signFlipP(diffs, o.Seed)
	floor := minStallEffect
	if r.Metric == P99Latency {
		floor = minP99Effect
	}
	r.MinEffect = math.Max(o.MinRelative*r.MeanA, floor)
	r.Verdict, r.Reasons = decide(r, o.Alpha)
	return r, nil
}

func (o Options) withDefaults() Options {
	if o.MinRelative <= 0 {
		o.MinRelative = 0.10
	}
	if o.Resamples <= 0 {
		o.Resamples = 10000
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.05
	}
	return o
}

// decide applies the verdict rules of docs/confirm.md.
func decide(r Result, alpha float64) (Verdict, []string) {
	n := len(r.Pairs)
	// Too few pairs to confirm are too few to refute too: the bootstrap
	// of one pair is that pair's difference, of two or three a handful of
	// values, no 95 % interval.
	enough := math.Pow(0.5, float64(n)) <= alpha
	switch {
	case r.P <= alpha && r.CILow > 0 && r.Effect >= r.MinEffect:
		return Confirmed, []string{fmt.Sprintf("the effect's 95%% interval is above 0, p = %.3g ≤ %.2g, and the effect is at least the smallest that matters", r.P, alpha)}
	case r.CIHigh < r.MinEffect && enough:
		return Refuted, []string{"the effect's 95% interval lies below the smallest effect that matters"}
	}
	var why []string
	if !enough {
		why = append(why, fmt.Sprintf("%d pairs can neither confirm nor refute: the smallest sign-flip p is %.3g > %.2g, and their interval is no 95 %% interval; use %d pairs or more",
			n, math.Pow(0.5, float64(n)), alpha, int(math.Ceil(math.Log2(1/alpha)))))
	} else if r.P > alpha {
		why = append(why, fmt.Sprintf("p = %.3g > %.2g: chance could explain the difference", r.P, alpha))
	}
	switch {
	case r.CIHigh >= r.MinEffect && r.CILow <= 0:
		why = append(why, "the effect's 95% interval holds both 0 and the smallest effect that matters")
	case r.Effect < r.MinEffect && r.CILow > 0 && r.P <= alpha:
		why = append(why, "the effect is real but smaller than the smallest that matters")
	case r.Effect < r.MinEffect && r.CILow > 0:
		why = append(why, "the effect's interval is above 0, but the effect is smaller than the smallest that matters")
	}
	if len(why) == 0 {
		why = append(why, "the effect's interval reaches the smallest effect that matters but is not clear of 0")
	}
	return Inconclusive, why
}

func withLatency(blocks []Measurement) bool {
	for _, b := range blocks {
		if len(b.Latencies) == 0 {
			return false
		}
	}
	return len(blocks) > 0
}

func withPSI(blocks []Measurement) bool {
	for _, b := range blocks {
		if !b.HasPSI {
			return false
		}
	}
	return len(blocks) > 0
}

// value is a block's metric in the metric's unit.
func value(b Measurement, m Metric) float64 {
	if m == P99Latency {
		return b.P99().Seconds()
	}
	return b.StallShare()
}

// pairDiffs matches each pair's A and B blocks, in pair order.
func pairDiffs(blocks []Measurement, m Metric) []PairDiff {
	type ab struct{ a, b *Measurement }
	by := map[int]*ab{}
	for i := range blocks {
		b := &blocks[i]
		p := by[b.Pair]
		if p == nil {
			p = &ab{}
			by[b.Pair] = p
		}
		if b.Arm == AsIs {
			p.a = b
		} else {
			p.b = b
		}
	}
	keys := make([]int, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []PairDiff
	for _, k := range keys {
		p := by[k]
		if p.a == nil || p.b == nil {
			continue
		}
		a, b := value(*p.a, m), value(*p.b, m)
		out = append(out, PairDiff{Pair: k + 1, A: a, B: b, Diff: a - b})
	}
	return out
}

// tally sums spikes and stall per arm.
func (r *Result) tally(blocks []Measurement) {
	var stall, wall [2]time.Duration
	for _, b := range blocks {
		i := 0
		if b.Arm == HeldOff {
			i = 1
		}
		stall[i] += b.MemorySome
		wall[i] += b.Wall
		if r.SpikeOver > 0 {
			if i == 0 {
				r.SpikesA += b.Spikes(r.SpikeOver)
			} else {
				r.SpikesB += b.Spikes(r.SpikeOver)
			}
		}
	}
	if wall[0] > 0 {
		r.StallA = float64(stall[0]) / float64(wall[0])
	}
	if wall[1] > 0 {
		r.StallB = float64(stall[1]) / float64(wall[1])
	}
}

// spikeThreshold is analyze's spike rule (correlate/doc.go, step 3) on
// single requests: above 3 × the median and above the median plus 4
// robust standard deviations (1.4826 × the median absolute deviation),
// over every request of the run, A and B pooled so neither arm sets it.
func spikeThreshold(blocks []Measurement) time.Duration {
	var all []time.Duration
	for _, b := range blocks {
		all = append(all, b.Latencies...)
	}
	sortDurations(all)
	med := quantile(all, 50)
	dev := make([]time.Duration, len(all))
	for i, l := range all {
		dev[i] = max(l-med, med-l)
	}
	sortDurations(dev)
	mad := quantile(dev, 50)
	return max(3*med, med+time.Duration(4*1.4826*float64(mad)))
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// bootstrapCI is the percentile bootstrap interval at level of the mean
// of xs: resamples draws of len(xs) values with replacement, from a PCG
// generator seeded with seed, the interval between the (1−level)/2 and
// (1+level)/2 quantiles of their means (Efron & Tibshirani 1993, ch. 13).
func bootstrapCI(xs []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 0x6d656d64))
	means := make([]float64, resamples)
	n := len(xs)
	for i := range means {
		var s float64
		for range n {
			s += xs[rng.IntN(n)]
		}
		means[i] = s / float64(n)
	}
	slices.Sort(means)
	at := func(q float64) float64 {
		k := int(math.Floor(q * float64(resamples-1)))
		return means[k]
	}
	return at((1 - level) / 2), at((1 + level) / 2)
}

// maxExactPairs bounds the exact sign-flip enumeration (2^20 sign sets).
const maxExactPairs = 20

// signFlipP is the one-sided p-value of mean(d) > 0 under the null that
// holding the job off changes nothing, so each pair's A−B is as likely
// to have either sign: the share of the 2^n sign assignments whose sum is
// at least the observed one (exact up to maxExactPairs pairs; beyond,
// 100000 random assignments, (k+1)/(draws+1)).
func signFlipP(d []float64, seed uint64) (p float64, exact bool) {
	obs := 0.0
	for _, x := range d {
		obs += x
	}
	const eps = 1e-12
	n := len(d)
	if n <= maxExactPairs {
		k := 0
		for mask := range 1 << n {
			s := 0.0
			for i, x := range d {
				if mask&(1<<i) != 0 {
					s -= x
				} else {
					s += x
				}
			}
			if s >= obs-eps {
				k++
			}
		}
		return float64(k) / float64(int(1)<<n), true
	}
	rng := rand.New(rand.NewPCG(seed, 0x7369676e))
	const draws = 100000
	k := 0
	for range draws {
		s := 0.0
		for _, x := range d {
			if rng.IntN(2) == 1 {
				s -= x
			} else {
				s += x
			}
		}
		if s >= obs-eps {
			k++
		}
	}
	return float64(k+1) / float64(draws+1), false
}

func sortDurations(d []time.Duration) { slices.Sort(d) }

// quantile is the p-th percentile of sorted by latency's nearest-rank
// rule, 0 for no values.
func quantile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return latency.NearestRank(sorted, p)
}
