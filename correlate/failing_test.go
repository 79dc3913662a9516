package correlate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/latency"
)

// A short outage in which a closed-loop tool sends 200 refused requests a
// second (80 % of all requests) is a failure spike, not a failing load;
// a service down for 70 % of the recording is a failing load, whatever
// the share of requests.
func TestFailingCountsIntervals(t *testing.T) {
	s := unionCase()
	s.noLatency = true
	rec := s.build(t)
	outFrom, outTo := t0.Add(30*time.Minute), t0.Add(35*time.Minute)
	var reqs []latency.Request
	for ts := t0.Add(250 * time.Millisecond); ts.Before(t0.Add(2 * time.Hour)); ts = ts.Add(500 * time.Millisecond) {
		if !ts.Before(outFrom) && ts.Before(outTo) {
			for k := range 100 {
				reqs = append(reqs, latency.Request{Start: ts.Add(time.Duration(k) * time.Millisecond), Latency: 100 * time.Microsecond, Err: true})
			}
			continue
		}
		reqs = append(reqs, latency.Request{Start: ts, Latency: 80 * time.Millisecond, Status: 200})
	}
	res := Analyze(rec, Options{Project: testProject, Requests: latency.RequestsOf(reqs)})
	if res.Failing != nil {
		t.Errorf("a 5 min outage in 2 h is Failing: %+v", *res.Failing)
	}
	if tt := res.Totals; tt.Errors != 60000 || tt.Requests != 60000+13800 {
		t.Fatalf("totals %d of %d failed, want 60000 of 73800", tt.Errors, tt.Requests)
	}
	spiked := false
	for _, sp := range res.LoneSpikes {
		if sp.Start.Before(outTo) && sp.End.After(outFrom) {
			spiked = true
		}
	}
	for _, e := range res.Episodes {
		if e.Spike && e.Start.Before(outTo) && e.End.After(outFrom) {
			spiked = true
		}
	}
	if !spiked {
		t.Errorf("the outage 12:30-12:35 is no spike (lone spikes %d, episodes %d)", len(res.LoneSpikes), len(res.Episodes))
	}

	// Down from 12:36 to the end (84 of 120 minutes), 2 refusals a second.
	for i := range reqs {
		if !reqs[i].Start.Before(t0.Add(36 * time.Minute)) {
			reqs[i] = latency.Request{Start: reqs[i].Start, Latency: time.Millisecond, Err: true}
		}
	}
	res = Analyze(rec, Options{Project: testProject, Requests: latency.RequestsOf(reqs)})
	f := res.Failing
	if f == nil {
		t.Fatal("down for 70 % of the recording: not Failing")
	}
	if !f.Start.Equal(t0.Add(30*time.Minute)) || !f.End.Equal(t0.Add(2*time.Hour)) || 10*f.Failing < 7*f.Intervals || f.Errors != 60000+84*120 {
		t.Errorf("failing = %+v; want 12:30 to 14:00, 70 %% of the intervals, %d errors", *f, 60000+84*120)
	}
}
