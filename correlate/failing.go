package correlate

import (
	"time"

	"github.com/memdiag/memdiag/latency"
)

// failingShare is the share of failed requests that makes an interval a
// failing one, and the share of failing intervals (of those with
// requests) that makes the whole load [Failing].
const failingShare = 0.5

// Failing is a load that failed most of the time: in at least
// failingShare of the intervals with requests, at least failingShare of
// the requests failed. Failures are then the run's normal state, not a
// burst above it (the failure-spike rule compares an interval with the
// median interval, which is itself failing), so no failure spike is
// flagged and the report says the service was failing instead of calling
// the run calm. It counts intervals, not requests: a load tool that keeps
// its connections busy sends thousands of refused requests in a short
// outage, and that outage is a spike, not a failing run.
type Failing struct {
	Start time.Time `json:"start"` // start of the first failing interval
	End   time.Time `json:"end"`   // end of the last one
	// Intervals have requests; Failing of them had at least FailingShare
	// of their requests failed.
	Intervals int `json:"intervals"`
	Failing   int `json:"intervals_failing"`
	// Requests and Errors count the requests of every interval.
	Requests int `json:"requests"`
	Errors   int `json:"errors"`
}

// failing returns the Failing finding of the per-interval summaries, nil
// when the load did not fail most of the time.
func failing(ivs []ival, sums []*latency.Summary) *Failing {
	var f Failing
	first, last := -1, -1
	for i, s := range sums {
		if s == nil || s.Count == 0 {
			continue
		}
		f.Intervals++
		f.Requests += s.Count
		f.Errors += s.Errors
		if float64(s.Errors) >= failingShare*float64(s.Count) {
			f.Failing++
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if f.Intervals == 0 || f.Failing == 0 || float64(f.Failing) < failingShare*float64(f.Intervals) {
		return nil
	}
	f.Start, f.End = ivs[first].Start, ivs[last].End
	return &f
}
