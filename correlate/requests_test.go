package correlate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/latency"
)

// Latency from an imported results file replaces the recording's: requests
// every 500 ms, 80 ms normally and 3 s during the pmlogger bursts.
func TestAnalyzeWithRequests(t *testing.T) {
	s := unionCase()
	s.noLatency = true
	rec := s.build(t)
	var reqs []latency.Request
	slow := 0
	for ts := t0.Add(250 * time.Millisecond); ts.Before(t0.Add(2 * time.Hour)); ts = ts.Add(500 * time.Millisecond) {
		d := 80 * time.Millisecond
		for _, b := range s.bursts {
			if !b.noSignal && !ts.Before(b.at) && ts.Before(b.at.Add(b.dur)) {
				d = 3 * time.Second
			}
		}
		if d > time.Second {
			slow++
		}
		reqs = append(reqs, latency.Request{Start: ts, Latency: d, Status: 200})
	}
	res := Analyze(rec, Options{Project: testProject, Requests: latency.RequestsOf(reqs)})
	if !res.HasLatency {
		t.Fatal("HasLatency = false")
	}
	// 12 bursts of 90 s at 2 requests/s.
	if slow != 12*180 {
		t.Fatalf("built %d slow requests, want %d", slow, 12*180)
	}
	e := res.Episodes[0]
	if !e.Spike || e.LatencyPeak != 3*time.Second {
		t.Errorf("12:05 episode spike %v peak %v, want a 3s spike", e.Spike, e.LatencyPeak)
	}
	// The 12:58 spike of the union case lives only in Sample.Latency, which
	// the requests replace: 12 episodes, not 13.
	if len(res.Episodes) != 12 {
		t.Errorf("%d episodes, want 12", len(res.Episodes))
	}
	tot := res.Totals
	// 14400 requests, 2160 slow (15 %): p99 is 3 s; mean is
	// (12240×80ms + 2160×3s)/14400 = 518 ms.
	if tot.Requests != 14400 || !tot.P99Exact || tot.P99 != 3*time.Second || tot.Mean != 518*time.Millisecond {
		t.Errorf("totals = %+v", tot)
	}
	if tot.RequestsPerSec != 2 {
		t.Errorf("requests/s = %v, want 2", tot.RequestsPerSec)
	}
}

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		s    Signal
		in   string
		want float64
	}{
		{PSISome, "2%", 0.02},
		{PSISome, "0.05", 0.05},
		{DiskIO, "8MiB", 8 << 20},
		{DiskIO, "8MiB/s", 8 << 20},
		{SwapOut, "256KiB", 256 << 10},
		{LRUDrop, "10MB", 10e6},
		{Refault, "200", 200},
		{IOTime, "0.5", 0.5},
		{SwapOut, "off", -1},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.s, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseThreshold(%s, %q) = %v, %v; want %v", tt.s, tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []struct {
		s  Signal
		in string
	}{{PSISome, "150%"}, {DiskIO, "fast"}, {Refault, "-3"}} {
		if _, err := ParseThreshold(bad.s, bad.in); err == nil {
			t.Errorf("ParseThreshold(%s, %q) accepted", bad.s, bad.in)
		}
	}
}

func TestParseSignals(t *testing.T) {
	got, err := ParseSignals("psi, disk-io")
	if err != nil || len(got) != 3 || got[0] != PSISome || got[1] != PSIFull || got[2] != DiskIO {
		t.Errorf("ParseSignals = %v, %v", got, err)
	}
	if _, err := ParseSignals("latency"); err == nil {
		t.Error("ParseSignals(latency) accepted")
	}
}

// Locust's stats history gives per-interval rows, not requests: rows
// ending in a sampling interval are combined, the "Aggregated" row alone
// when there is one.
func TestAnalyzeWithIntervalStats(t *testing.T) {
	s := unionCase()
	s.noLatency = true
	rec := s.build(t)
	var rows []latency.IntervalStat
	for ts := t0.Add(10 * time.Second); !ts.After(t0.Add(2 * time.Hour)); ts = ts.Add(10 * time.Second) {
		p99 := 90 * time.Millisecond
		for _, b := range s.bursts {
			if !b.noSignal && ts.After(b.at) && !ts.After(b.at.Add(b.dur)) {
				p99 = 3 * time.Second
			}
		}
		rows = append(rows,
			latency.IntervalStat{End: ts, Name: "Aggregated", Summary: latency.Summary{Count: 20, Mean: 60 * time.Millisecond, P99: p99, Max: p99}},
			// A per-endpoint row, ignored since the Aggregated one exists.
			latency.IntervalStat{End: ts, Name: "/slow", Summary: latency.Summary{Count: 5, Mean: 9 * time.Second, P99: 9 * time.Second, Max: 9 * time.Second}})
	}
	res := Analyze(rec, Options{Project: testProject, IntervalStats: rows})
	if !res.HasLatency || len(res.Episodes) != 12 || !res.Episodes[0].Spike || res.Episodes[0].LatencyPeak != 3*time.Second {
		t.Fatalf("latency %v, %d episodes, first spike %v peak %v; want 12 episodes, the first a 3s spike",
			res.HasLatency, len(res.Episodes), res.Episodes[0].Spike, res.Episodes[0].LatencyPeak)
	}
	// 3 rows of 20 requests per 30 s interval: 60 per interval, 240
	// intervals; mean 60 ms.
	if res.Totals.Requests != 14400 || res.Totals.Mean != 60*time.Millisecond {
		t.Errorf("totals = %+v, want 14400 requests, 60ms mean", res.Totals)
	}
}
