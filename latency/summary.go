package latency

import (
	"slices"
	"sort"
	"time"
)

// Summarize summarises the requests that started in the interval
// (from, to]: a request exactly at from belongs to the previous interval,
// one exactly at to to this one, so consecutive intervals never count a
// request twice. Count is every request, Errors the failed ones (Err);
// Mean and the percentiles are those of the successful requests only: a
// refused connection answers in microseconds and would pass for a fast
// service (see [SummarizeRequests] to include them).
//
// Percentiles use the nearest-rank method: Pp is the value at rank
// ⌈p/100 × N⌉ (1-based) of the N latencies sorted ascending, so it is
// always a latency that was measured (no interpolation), P100 is Max, and
// with N < 100 P99 is also Max. Mean is rounded down to the nanosecond.
func Summarize(reqs []Request, from, to time.Time) Summary {
	var in []Request
	for _, q := range reqs {
		if q.Start.After(from) && !q.Start.After(to) {
			in = append(in, q)
		}
	}
	return SummarizeRequests(in, false)
}

// SummarizeRequests summarises reqs, whatever their times: Count is all of
// them, Errors the failed ones, and Mean and the percentiles cover the
// successful ones, or all of them with withFailed (a timeout's latency is
// then the timeout). With no latency to summarise they are zero: check
// [Summary.Latencies].
func SummarizeRequests(reqs []Request, withFailed bool) Summary {
	var lat []time.Duration
	errs := 0
	for _, q := range reqs {
		if q.Err {
			errs++
			if !withFailed {
				continue
			}
		}
		lat = append(lat, q.Latency)
	}
	s := summarize(lat, errs)
	s.Count = len(reqs)
	if withFailed {
		s.WithFailed = true
	}
	return s
}

// Latencies is how many requests Mean and the percentiles cover: Count
// with WithFailed, else the successful ones.
func (s Summary) Latencies() int {
	if s.WithFailed {
		return s.Count
	}
	return s.Count - s.Errors
}

// bucket summarises requests by start time into the intervals between
// consecutive edges: result i covers (edges[i], edges[i+1]], like
// [Summarize]. It returns len(edges)-1 summaries (nil for fewer than two
// edges); edges must be ascending. Requests outside (edges[0],
// edges[len-1]] are not counted. Pass the recording's sample times to get
// one Summary per sampling interval.
func bucket(reqs []Request, edges []time.Time) []Summary {
	if len(edges) < 2 {
		return nil
	}
	per := make([][]Request, len(edges)-1)
	for _, q := range reqs {
		// First edge not before q.Start: q is in (edges[i-1], edges[i]].
		i := sort.Search(len(edges), func(i int) bool { return !edges[i].Before(q.Start) })
		if i == 0 || i == len(edges) {
			continue
		}
		per[i-1] = append(per[i-1], q)
	}
	out := make([]Summary, len(per))
	for i := range per {
		out[i] = SummarizeRequests(per[i], false)
	}
	return out
}

func summarize(lat []time.Duration, errs int) Summary {
	if len(lat) == 0 {
		return Summary{Errors: errs}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	return Summary{
		Count:  len(lat),
		Errors: errs,
		Mean:   sum / time.Duration(len(lat)),
		P50:    NearestRank(lat, 50),
		P95:    NearestRank(lat, 95),
		P99:    NearestRank(lat, 99),
		Max:    lat[len(lat)-1],
	}
}

// NearestRank returns the p-th percentile of sorted (ascending, non-empty)
// by the nearest-rank method: the value at 1-based rank ⌈p/100 × N⌉,
// computed in integers so 95 % of 20 is exactly rank 19.
func NearestRank(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	rank := (p*n + 99) / 100 // ⌈p·n/100⌉
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// BucketIntervals summarises per-interval rows (Locust's stats history)
// into the intervals between consecutive edges, like bucket: result i
// covers the rows named name ("Aggregated" for all requests) whose End
// is in (edges[i], edges[i+1]]. Count and Errors are sums and Mean is
// the count-weighted mean, all exact. P50, P95, P99 and Max are the
// largest of the rows' values: the rows carry percentiles over their own
// windows (often 10 s, overlapping), which cannot be merged exactly, so
// the worst one is kept — a spike shows, but the value is an upper bound
// of the interval's percentile, not the percentile.
func BucketIntervals(rows []IntervalStat, name string, edges []time.Time) []Summary {
	if len(edges) < 2 {
		return nil
	}
	out := make([]Summary, len(edges)-1)
	sums := make([]float64, len(out)) // Σ mean·count, ns
	for _, r := range rows {
		if r.Name != name {
			continue
		}
		i := sort.Search(len(edges), func(i int) bool { return !edges[i].Before(r.End) })
		if i == 0 || i == len(edges) {
			continue
		}
		s := &out[i-1]
		s.Count += r.Count
		s.Errors += r.Errors
		sums[i-1] += float64(r.Mean) * float64(r.Count)
		s.P50, s.P95, s.P99, s.Max = max(s.P50, r.P50), max(s.P95, r.P95), max(s.P99, r.P99), max(s.Max, r.Max)
	}
	for i := range out {
		if out[i].Count > 0 {
			out[i].Mean = time.Duration(sums[i] / float64(out[i].Count))
		}
	}
	return out
}
