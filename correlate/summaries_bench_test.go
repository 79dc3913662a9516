package correlate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/latency"
)

// BenchmarkSummariesRequests: summaries over an hour at 1 s and 100,000
// requests (a tenth of the bench day's rate), the path that held the
// peak of analyze's heap when it copied requests into buckets
// (docs/benchmarks.md, round three). Reports allocations.
func BenchmarkSummariesRequests(b *testing.B) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	ivs := make([]ival, 3600)
	for i := range ivs {
		ivs[i].Start = t0.Add(time.Duration(i) * time.Second)
		ivs[i].End = ivs[i].Start.Add(time.Second)
		ivs[i].Dt = time.Second
	}
	reqs := make([]latency.Request, 100_000)
	for k := range reqs {
		reqs[k] = latency.Request{
			Start:   t0.Add(time.Duration(k) * 36 * time.Millisecond),
			Latency: time.Duration(1+k%97) * time.Millisecond,
			Status:  200,
		}
	}
	o := Options{Requests: latency.RequestsOf(reqs)}
	b.ReportAllocs()
	for b.Loop() {
		out := summaries(nil, ivs, o)
		if out[1] == nil || out[1].Count != 28 {
			b.Fatalf("interval 1: %+v", out[1])
		}
	}
}
