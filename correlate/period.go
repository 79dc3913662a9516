package correlate

import (
	"math"
	"slices"
	"time"
)

// Period-search settings (see the package documentation).
const (
	periodTolerance = 0.10 // of the period: how far a time may sit off the schedule
	periodMinScore  = 0.7
	periodMinHits   = 3
)

// EstimatePeriod finds the schedule start + k·period that best matches
// times (sorted or not) within [from, to], or nil when none matches at
// least 3 times with a score of 0.7 (see [Period]). Periods between
// minPeriod and half of to−from are tried. A time counts as on the
// schedule within 10 % of the period; a missed or an extra time lowers the
// score (F1 of precision and recall) but does not hide the schedule, and
// two schedules offset by half their period are found as one of half the
// period.
func EstimatePeriod(times []time.Time, from, to time.Time, minPeriod time.Duration) *Period {
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
	x := make([]float64, n)
	for i, t := range times {
		x[i] = t.Sub(from).Seconds()
	}

	cands := []float64{}
	for p := minP; p <= maxP; p *= 1.01 {
		cands = append(cands, p)
	}
	for i := range x {
		for j := i + 1; j < n; j++ {
			d := math.Abs(x[j] - x[i])
			for k := 1.0; k <= 4; k++ {
				if p := d / k; p >= minP && p <= maxP {
					cands = append(cands, p)
				}
			}
		}
	}
	var best fit
	for _, p := range cands {
		f := evalPeriod(x, p, span)
		if f.better(best) {
			best = f
		}
	}
	if best.hits == 0 {
		return nil
	}
	// Refine by least squares over the matched times, then score again.
	if p, a, ok := leastSquares(x, best); ok && p >= minP && p <= maxP {
		if f := evalAnchored(x, p, a, span); f.hits >= best.hits {
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
		res.Members = append(res.Members, m.i)
		jit = math.Max(jit, math.Abs(x[m.i]-best.a-float64(m.k)*best.p))
	}
	slices.Sort(res.Members)
	res.Jitter = secs(jit)
	tol := periodTolerance * best.p
	first := best.a + math.Ceil((-tol-best.a)/best.p)*best.p
	res.Phase = from.Add(secs(first))
	return res
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

type member struct{ i, k int }

type fit struct {
	p, a     float64 // period and phase (seconds from "from")
	hits     int
	expected int
	score    float64
	resid    float64 // sum of |residual|
	members  []member
}

func (f fit) better(g fit) bool {
	if math.Abs(f.score-g.score) > 1e-9 {
		return f.score > g.score
	}
	return f.hits > 0 && (g.hits == 0 || f.resid < g.resid)
}

// evalPeriod scores period p with the best phase anchored on one of the
// times and re-centred on its matches.
func evalPeriod(x []float64, p, span float64) fit {
	var best fit
	for _, a := range x {
		f := evalAnchored(x, p, a, span)
		if len(f.members) > 0 {
			sum := 0.0
			for _, m := range f.members {
				sum += x[m.i] - f.a - float64(m.k)*p
			}
			if g := evalAnchored(x, p, a+sum/float64(len(f.members)), span); g.hits >= f.hits {
				f = g
			}
		}
		if f.better(best) {
			best = f
		}
	}
	return best
}

// evalAnchored scores the schedule a + k·p.
func evalAnchored(x []float64, p, a, span float64) fit {
	tol := periodTolerance * p
	byK := map[int]member{}
	res := map[int]float64{}
	for i, xi := range x {
		k := int(math.Round((xi - a) / p))
		r := math.Abs(xi - a - float64(k)*p)
		if r > tol {
			continue
		}
		if old, ok := res[k]; ok && old <= r {
			continue
		}
		byK[k], res[k] = member{i, k}, r
	}
	// Schedule points inside the recording; those within tol of its ends
	// count only when matched, since their episode may lie outside it.
	expected := 0
	k0 := int(math.Ceil((-tol - a) / p))
	for k := k0; a+float64(k)*p <= span+tol; k++ {
		pt := a + float64(k)*p
		_, hit := byK[k]
		if hit || (pt > tol && pt < span-tol) {
			expected++
		}
	}
	f := fit{p: p, a: a, hits: len(byK), expected: expected}
	for _, m := range byK {
		f.members = append(f.members, m)
		f.resid += res[m.k]
	}
	slices.SortFunc(f.members, func(a, b member) int { return a.k - b.k })
	if n := len(x) + expected; n > 0 {
		f.score = 2 * float64(f.hits) / float64(n)
	}
	return f
}

// leastSquares fits x = a + k·p over the matched times of f.
func leastSquares(x []float64, f fit) (p, a float64, ok bool) {
	n := float64(len(f.members))
	if n < 2 {
		return 0, 0, false
	}
	var sk, sx, skk, skx float64
	for _, m := range f.members {
		k := float64(m.k)
		sk += k
		sx += x[m.i]
		skk += k * k
		skx += k * x[m.i]
	}
	den := n*skk - sk*sk
	if den == 0 {
		return 0, 0, false
	}
	p = (n*skx - sk*sx) / den
	a = (sx - p*sk) / n
	return p, a, p > 0
}
