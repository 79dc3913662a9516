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
	// Anchor on at most 60 of the times, spread over the recording.
	step := max(1, len(x)/60)
	for ai := 0; ai < len(x); ai += step {
		a := x[ai]
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

// evalAnchored scores the schedule a + k·p; x must be sorted.
func evalAnchored(x []float64, p, a, span float64) fit {
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
