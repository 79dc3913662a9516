package latency

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummarizeNearestRank(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	// Latencies 1..20 ms in shuffled order, the 20 ms one failed.
	var reqs []Request
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(20) {
		ms := time.Duration(i+1) * time.Millisecond
		reqs = append(reqs, Request{Start: t0.Add(ms), Latency: ms, Status: 200, Err: i == 19})
	}
	got := Summarize(reqs, t0, t0.Add(time.Second))
	// The 19 successful ones, 1..19 ms: p50 rank ⌈9.5⌉ = 10, p95 ⌈18.05⌉
	// = 19, p99 ⌈18.81⌉ = 19; mean 190/19 = 10 ms.
	want := Summary{Count: 20, Errors: 1, Mean: 10 * time.Millisecond,
		P50: 10 * time.Millisecond, P95: 19 * time.Millisecond, P99: 19 * time.Millisecond, Max: 19 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
	if got.Latencies() != 19 {
		t.Errorf("Latencies() = %d, want 19", got.Latencies())
	}
	// With the failed one: all 20. Ranks: p50 ⌈10⌉ = 10, p95 ⌈19⌉ = 19,
	// p99 ⌈19.8⌉ = 20; mean 210/20.
	got = SummarizeRequests(reqs, true)
	want = Summary{Count: 20, Errors: 1, WithFailed: true, Mean: 10500 * time.Microsecond,
		P50: 10 * time.Millisecond, P95: 19 * time.Millisecond, P99: 20 * time.Millisecond, Max: 20 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SummarizeRequests with failed (-want +got):\n%s", diff)
	}
	// Only failures: counted, no latency.
	dead := []Request{{Start: t0.Add(time.Millisecond), Latency: 300 * time.Microsecond, Err: true}}
	if got := SummarizeRequests(dead, false); got != (Summary{Count: 1, Errors: 1}) || got.Latencies() != 0 {
		t.Errorf("all failed: %+v, want count 1, errors 1, no latency", got)
	}

	// 200 requests: p99 is rank 198, not the maximum.
	reqs = reqs[:0]
	for i := 1; i <= 200; i++ {
		reqs = append(reqs, Request{Start: t0.Add(time.Millisecond), Latency: time.Duration(i) * time.Millisecond})
	}
	got = Summarize(reqs, t0, t0.Add(time.Second))
	if got.P99 != 198*time.Millisecond || got.P95 != 190*time.Millisecond || got.P50 != 100*time.Millisecond || got.Max != 200*time.Millisecond {
		t.Errorf("200 requests: %+v, want p50 100ms p95 190ms p99 198ms max 200ms", got)
	}

	one := []Request{{Start: t0.Add(time.Second), Latency: 2500 * time.Millisecond}}
	got = Summarize(one, t0, t0.Add(time.Second))
	want = Summary{Count: 1, Mean: 2500 * time.Millisecond, P50: 2500 * time.Millisecond, P95: 2500 * time.Millisecond, P99: 2500 * time.Millisecond, Max: 2500 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("one request (-want +got):\n%s", diff)
	}
	if got := Summarize(one, t0.Add(time.Second), t0.Add(2*time.Second)); got != (Summary{}) {
		t.Errorf("request exactly at from counted: %+v", got)
	}
}

func TestBucket(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	edges := []time.Time{t0, t0.Add(10 * time.Second), t0.Add(20 * time.Second)}
	at := func(d time.Duration, lat time.Duration, err bool) Request {
		return Request{Start: t0.Add(d), Latency: lat, Err: err}
	}
	reqs := []Request{
		at(0, time.Hour, false),                        // at edges[0]: before the first interval
		at(20*time.Second+1, time.Hour, false),         // after the last edge
		at(10*time.Second, 30*time.Millisecond, false), // at edges[1]: first interval
		at(time.Second, 10*time.Millisecond, true),
		at(10*time.Second+1, 2*time.Second, true), // just after edges[1]: second interval
		at(20*time.Second, 4*time.Second, false),  // at edges[2]: second interval
	}
	// Failed requests count, their latency does not.
	want := []Summary{
		{Count: 2, Errors: 1, Mean: 30 * time.Millisecond, P50: 30 * time.Millisecond, P95: 30 * time.Millisecond, P99: 30 * time.Millisecond, Max: 30 * time.Millisecond},
		{Count: 2, Errors: 1, Mean: 4 * time.Second, P50: 4 * time.Second, P95: 4 * time.Second, P99: 4 * time.Second, Max: 4 * time.Second},
	}
	if diff := cmp.Diff(want, bucket(reqs, edges)); diff != "" {
		t.Errorf("Bucket (-want +got):\n%s", diff)
	}
	// Bucket agrees with Summarize over each interval.
	for i := 1; i < len(edges); i++ {
		if diff := cmp.Diff(want[i-1], Summarize(reqs, edges[i-1], edges[i])); diff != "" {
			t.Errorf("Summarize interval %d (-want +got):\n%s", i, diff)
		}
	}
	if got := bucket(reqs, edges[:1]); got != nil {
		t.Errorf("Bucket with one edge = %v, want nil", got)
	}
}

func BenchmarkBucket(b *testing.B) {
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(3, 4))
	reqs := make([]Request, 100_000) // ~1 h of a 30 req/s load test
	for i := range reqs {
		reqs[i] = Request{Start: t0.Add(time.Duration(r.Int64N(int64(time.Hour)))), Latency: time.Duration(r.Int64N(int64(time.Second)))}
	}
	edges := make([]time.Time, 361) // 10 s samples
	for i := range edges {
		edges[i] = t0.Add(time.Duration(i) * 10 * time.Second)
	}
	for b.Loop() {
		bucket(reqs, edges)
	}
}

func TestBucketIntervalsLocust(t *testing.T) {
	imp := importFixture(t, "locust_stats_history.csv", ImportOptions{})
	// Two 5 s intervals over the file's Aggregated rows at …631-…635
	// (lines 5, 8, 11, 14, 17) and …636-…640 (lines 20, 23, 26, 29, 32).
	edges := []time.Time{time.Unix(1795988630, 0), time.Unix(1795988635, 0), time.Unix(1795988640, 0)}
	got := BucketIntervals(imp.Intervals, "Aggregated", edges)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// Counts: 4+4+4+4+4 and 4+4+4+4+4; errors 1+2+0+0+1, 0+1+1+2+2.
	// Means: (8027665+5248006+4433674+6019007+5081583)·4/20 and
	// (4185927+3946800+5003452+10513015+2193315)·4/20 ns.
	want := []Summary{
		{Count: 20, Errors: 4, Mean: 5761987, P50: ms(5), P95: ms(7), P99: ms(7), Max: ms(7)},
		{Count: 20, Errors: 6, Mean: 5168501, P50: ms(5), P95: ms(13), P99: ms(16), Max: ms(16)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BucketIntervals (-want +got):\n%s", diff)
	}
}
