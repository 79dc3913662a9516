package correlate

import (
	"math/rand/v2"
	"testing"

	"math"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
)

// refEstimatePeriod is estimatePeriod as it was before it was made
// faster (commit 7162084), to check that the faster one finds the same.
// It finds the schedule start + k·period that best matches
// times (sorted or not) within [from, to], or nil when none matches at
// least 3 times with a score of 0.7 (see [Period]). Periods between
// minPeriod and half of to−from are tried. A time counts as on the
// schedule within 10 % of the period; a missed or an extra time lowers the
// score (F1 of precision and recall) but does not hide the schedule, and
// two schedules offset by half their period are found as one of half the
// period.
func refEstimatePeriod(times []time.Time, from, to time.Time, minPeriod time.Duration) *Period {
	n := len(times)
	span := to.Sub(from).Seconds()
	maxP := span / 2
	minP := minPeriod.Seconds()
	if minP <= 0 {
		minP = span / 100
	}
	if n < periodMinHits || maxP < minP {
		return nil
	}
	// Work on sorted offsets; idx maps them back to the caller's indexes.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return times[a].Compare(times[b]) })
	x := make([]float64, n)
	for i, j := range idx {
		x[i] = times[j].Sub(from).Seconds()
	}

	cands := []float64{}
	for p := minP; p <= maxP; p *= 1.01 {
		cands = append(cands, p)
	}
	// Differences between near neighbours (up to 4 apart) propose periods;
	// with every pair, many episodes would make the search quadratic in
	// candidates as well as in matching.
	for i := range x {
		for j := i + 1; j < n && j <= i+4; j++ {
			d := math.Abs(x[j] - x[i])
			for k := 1.0; k <= 4; k++ {
				if p := d / k; p >= minP && p <= maxP {
					cands = append(cands, p)
				}
			}
		}
	}
	// Candidates within 0.2 % of each other score alike: keep one.
	slices.Sort(cands)
	uniq := cands[:0]
	for _, p := range cands {
		if len(uniq) == 0 || p > uniq[len(uniq)-1]*1.002 {
			uniq = append(uniq, p)
		}
	}
	var best fit
	for _, p := range uniq {
		f := refEvalPeriod(x, p, span)
		if f.better(best) {
			best = f
		}
	}
	if best.hits == 0 {
		return nil
	}
	// Refine by least squares over the matched times, then score again.
	if p, a, ok := leastSquares(x, best); ok && p >= minP && p <= maxP {
		if f := refEvalAnchored(x, p, a, span); f.hits >= best.hits {
			best = f
		}
	}
	if best.hits < periodMinHits || best.score < periodMinScore {
		return nil
	}
	res := &Period{
		Period:   secs(best.p),
		Matched:  best.hits,
		Expected: best.expected,
		Missed:   best.expected - best.hits,
		Extra:    n - best.hits,
		Score:    math.Round(best.score*1000) / 1000,
	}
	if res.Missed < 0 {
		res.Missed = 0
	}
	jit := 0.0
	for _, m := range best.members {
		res.Members = append(res.Members, idx[m.i])
		jit = math.Max(jit, math.Abs(x[m.i]-best.a-float64(m.k)*best.p))
	}
	slices.Sort(res.Members)
	res.Jitter = secs(jit)
	tol := periodTolerance * best.p
	first := best.a + math.Ceil((-tol-best.a)/best.p)*best.p
	res.Phase = from.Add(secs(first))
	return res
}

// evalPeriod scores period p with the best phase anchored on one of the
// times and re-centred on its matches.
func refEvalPeriod(x []float64, p, span float64) fit {
	var best fit
	// Anchor on at most 60 of the times, spread over the recording.
	step := max(1, len(x)/60)
	for ai := 0; ai < len(x); ai += step {
		a := x[ai]
		f := refEvalAnchored(x, p, a, span)
		if len(f.members) > 0 {
			sum := 0.0
			for _, m := range f.members {
				sum += x[m.i] - f.a - float64(m.k)*p
			}
			if g := refEvalAnchored(x, p, a+sum/float64(len(f.members)), span); g.hits >= f.hits {
				f = g
			}
		}
		if f.better(best) {
			best = f
		}
	}
	return best
}

// evalAnchored scores the schedule a + k·p; x must be sorted.
func refEvalAnchored(x []float64, p, a, span float64) fit {
	tol := periodTolerance * p
	f := fit{p: p, a: a}
	// x is sorted, so k never decreases: keep the closest time per k.
	var last member
	lastR, have := 0.0, false
	edgeHits := 0 // matched points within tol of the recording's ends
	flush := func() {
		if !have {
			return
		}
		f.members = append(f.members, last)
		f.resid += lastR
		if pt := a + float64(last.k)*p; pt <= tol || pt >= span-tol {
			edgeHits++
		}
	}
	for i, xi := range x {
		k := int(math.Round((xi - a) / p))
		r := math.Abs(xi - a - float64(k)*p)
		if r > tol {
			continue
		}
		if have && k == last.k {
			if r < lastR {
				last, lastR = member{i, k}, r
			}
			continue
		}
		flush()
		last, lastR, have = member{i, k}, r, true
	}
	flush()
	f.hits = len(f.members)
	// Schedule points strictly inside (tol, span−tol), plus the matched
	// ones near the ends: a point at an end whose episode may lie outside
	// the recording counts only when matched.
	lo := int(math.Floor((tol-a)/p)) + 1
	hi := int(math.Ceil((span-tol-a)/p)) - 1
	if hi >= lo {
		f.expected = hi - lo + 1
	}
	f.expected += edgeHits
	if n := len(x) + f.expected; n > 0 {
		f.score = 2 * float64(f.hits) / float64(n)
	}
	return f
}

// TestEstimatePeriodSameAsBefore: the faster estimatePeriod finds the
// same period, phase, members and score as the one it replaced, on
// schedules with jitter, misses and random extra times, and on random
// times alone.
func TestEstimatePeriodSameAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	span := 30 * time.Hour
	cases := [][]time.Time{manyTimes(), nil, {t0}, {t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}}
	for c := range 24 {
		var ts []time.Time
		period := time.Duration(15+rng.IntN(120)) * time.Minute
		jitter := time.Duration(rng.IntN(int(period/10/time.Second)+1)) * time.Second
		phase := time.Duration(rng.IntN(int(period/time.Second))) * time.Second
		if c%4 != 3 { // every fourth case has no schedule
			for at := phase; at < span; at += period {
				if rng.IntN(10) == 0 {
					continue // a missed firing
				}
				ts = append(ts, t0.Add(at+time.Duration(rng.Int64N(int64(2*jitter)+1))-jitter))
			}
		}
		for range rng.IntN(40) {
			ts = append(ts, t0.Add(time.Duration(rng.Int64N(int64(span)))))
		}
		rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		cases = append(cases, ts)
	}
	for i, ts := range cases {
		for _, minP := range []time.Duration{0, 2 * time.Minute} {
			want := refEstimatePeriod(ts, t0, t0.Add(span), minP)
			got := estimatePeriod(ts, t0, t0.Add(span), minP)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("case %d (%d times, min period %s): -before +now\n%s", i, len(ts), minP, diff)
			}
		}
	}
}

// TestAnchoredSameAsDivision: anchored, which finds each time's nearest
// schedule point by a multiplication and Floor, gives the fit the
// division and math.Round gave (refEvalAnchored), members, residuals and
// score bit for bit: on random times, and on times put exactly half a
// period off the schedule, exactly at the tolerance, and a hair inside
// and outside it, where the two roundings could differ.
func TestAnchoredSameAsDivision(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	for c := range 400 {
		span := 86400.0
		p := span / 100 * (1 + 49*rng.Float64())
		if c%4 == 0 {
			p = math.Round(p) // whole seconds, as schedules mostly are
		}
		a := span * rng.Float64()
		tol := periodTolerance * p
		var x []float64
		for range 50 + rng.IntN(400) {
			k := math.Floor((span*rng.Float64() - a) / p)
			var off float64
			switch rng.IntN(6) {
			case 0:
				off = p / 2
			case 1:
				off = tol
			case 2:
				off = -tol
			case 3:
				off = math.Nextafter(tol, 0)
			case 4:
				off = math.Nextafter(tol, p)
			default:
				off = (rng.Float64()*2 - 1) * p / 2
			}
			x = append(x, a+k*p+off)
		}
		slices.Sort(x)
		want := refEvalAnchored(x, p, a, span)
		got, _ := anchored(x, p, a, span, true)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(fit{}, member{})); diff != "" {
			t.Fatalf("case %d (p %v, a %v): -division +anchored\n%s", c, p, a, diff)
		}
	}
}
