package correlate

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
)

// PeriodMinHits is how many episodes (or firings) a schedule must match
// to be reported as a period.
const PeriodMinHits = 3

// Period-search settings (see the package documentation).
const (
	periodTolerance = 0.10 // of the period: how far a time may sit off the schedule
	periodMinScore  = 0.7
	periodMinHits   = PeriodMinHits
)

// estimatePeriod finds the schedule start + k·period that best matches
// times (sorted or not) within [from, to], or nil when none matches at
// least 3 times with a score of 0.7 (see [Period]). Periods between
// minPeriod and half of to−from are tried. A time counts as on the
// schedule within 10 % of the period; a missed or an extra time lowers the
// score (F1 of precision and recall) but does not hide the schedule, and
// two schedules offset by half their period are found as one of half the
// period.
func estimatePeriod(times []time.Time, from, to time.Time, minPeriod time.Duration) *Period {
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
	best := bestPeriod(x, uniq, span)
	if best.hits == 0 {
		return nil
	}
	best = evalAnchored(x, best.p, best.a, span) // with its members
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

// bestPeriod is the best of evalPeriod over the candidate periods, the
// first of equals in cands' order, without its members: what a scan of
// cands in order keeping each strictly better fit gives. The search is
// most of what `analyze` spends on a day's hundreds of latency spikes
// (docs/benchmarks.md), so it looks at the most promising candidates
// first, skips those that cannot beat the best found (periodBound), and
// shares them among the cores.
func bestPeriod(x, cands []float64, span float64) fit {
	bounds := make([]float64, len(cands))
	order := make([]int, len(cands))
	var phases []float64
	for i, p := range cands {
		bounds[i], order[i] = periodBound(x, p, span, &phases), i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(bounds[j], bounds[i]) })
	type found struct {
		f   fit
		idx int // in cands; -1: none yet
	}
	// take reports whether f at index i replaces b: strictly better, or
	// as good and earlier in cands.
	take := func(b found, f fit, i int) bool {
		return b.idx < 0 || f.better(b.f) || (!b.f.better(f) && i < b.idx)
	}
	scan := func(w, workers int) found {
		b := found{idx: -1}
		for j := w; j < len(order); j += workers {
			i := order[j]
			if b.idx >= 0 && bounds[i] < b.f.score-1e-9 {
				break // neither this nor any later candidate can be as good
			}
			if f := evalPeriod(x, cands[i], span); take(b, f, i) {
				b = found{f, i}
			}
		}
		return b
	}
	workers := min(runtime.GOMAXPROCS(0), len(cands)/64)
	if workers < 2 || len(x) < 16 {
		workers = 1
	}
	parts := make([]found, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { parts[w] = scan(w, workers) })
	}
	wg.Wait()
	best := found{idx: -1}
	for _, b := range parts {
		if b.idx >= 0 && take(best, b.f, b.idx) {
			best = b
		}
	}
	if best.idx < 0 || best.f.hits == 0 {
		return fit{}
	}
	return best.f
}

// periodBound is an upper bound of the score of period p at any phase
// (evalAnchored's F1). At most H times match: no more than
// min(n, (x_last−x_first)/p + 2), each on its own schedule point, and no
// more than lie within tol of one phase, i.e. in one arc of width 2·tol
// of the circle of phases x mod p. At least span/p − 1.2 schedule points
// lie inside (tol, span−tol). So the score is at most 2H/(n + that).
// phases is scratch space.
func periodBound(x []float64, p, span float64, phases *[]float64) float64 {
	n := float64(len(x))
	if n == 0 {
		return 0
	}
	h := math.Min(n, math.Floor((x[len(x)-1]-x[0])/p)+3)                       // +1 for rounding
	h = math.Min(h, float64(maxInArc(x, p, 2*periodTolerance*p+1e-6, phases))) // 1e-6 s for rounding
	e := math.Max(0, span/p-(1+2*periodTolerance)-1e-6)
	return 2 * h / (n + e)
}

// maxInArc is the most of the phases x mod p that lie in one closed arc
// of width w of the circle of circumference p.
func maxInArc(x []float64, p, w float64, phases *[]float64) int {
	ph := (*phases)[:0]
	for _, v := range x {
		ph = append(ph, v-p*math.Floor(v/p))
	}
	slices.Sort(ph)
	n := len(ph)
	for i := range n { // once more round the circle
		ph = append(ph, ph[i]+p)
	}
	*phases = ph
	best, j := 0, 0
	for i := range n {
		for j < len(ph) && ph[j]-ph[i] <= w {
			j++
		}
		best = max(best, min(j-i, n))
	}
	return best
}

// evalPeriod scores period p with the best phase anchored on one of the
// times and re-centred on its matches. The fit has no members.
func evalPeriod(x []float64, p, span float64) fit {
	var best fit
	// Anchor on at most 60 of the times, spread over the recording.
	step := max(1, len(x)/60)
	for ai := 0; ai < len(x); ai += step {
		a := x[ai]
		f, off := anchored(x, p, a, span, false)
		if f.hits > 0 {
			if g, _ := anchored(x, p, a+off/float64(f.hits), span, false); g.hits >= f.hits {
				f = g
			}
		}
		if f.better(best) {
			best = f
		}
	}
	return best
}

// nearestPoint is the index k of the schedule point a + k·p nearest to
// xi, and xi's distance r from it.
func nearestPoint(xi, p, a float64) (k int, r float64) {
	k = int(math.Round((xi - a) / p))
	return k, math.Abs(xi - a - float64(k)*p)
}

// evalAnchored scores the schedule a + k·p; x must be sorted.
func evalAnchored(x []float64, p, a, span float64) fit {
	f, _ := anchored(x, p, a, span, true)
	return f
}

// anchored is evalAnchored, listing the members only if withMembers;
// off is the sum of the members' signed offsets from the schedule, in
// member order (the re-centring of evalPeriod).
func anchored(x []float64, p, a, span float64, withMembers bool) (f fit, off float64) {
	tol := periodTolerance * p
	f = fit{p: p, a: a}
	// x is sorted, so k never decreases: keep the closest time per k.
	var last member
	lastR, have := 0.0, false
	edgeHits := 0 // matched points within tol of the recording's ends
	flush := func() {
		if !have {
			return
		}
		if withMembers {
			f.members = append(f.members, last)
		}
		f.hits++
		f.resid += lastR
		off += x[last.i] - a - float64(last.k)*p
		if pt := a + float64(last.k)*p; pt <= tol || pt >= span-tol {
			edgeHits++
		}
	}
	inv := 1 / p
	for i, xi := range x {
		// The nearest schedule point by a multiplication and Floor (a
		// machine instruction) instead of a division and math.Round, the
		// loop's cost: the two differ only where (xi-a)/p is within a
		// few ulps of a half-integer, so xi is about p/2 from both points
		// and further than tol from either. A match is computed again as
		// before (nearestPoint), so what counts is bit for bit the same.
		if k := math.Floor((xi-a)*inv + 0.5); math.Abs(xi-a-k*p) > tol*(1+1e-9) {
			continue
		}
		k, r := nearestPoint(xi, p, a)
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
	return f, off
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
