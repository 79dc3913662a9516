package analysis

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
)

// TestFleet: each host of the Prometheus data is analyzed as Series
// analyzes its samples, in host-name order, with the latency imported for
// its own header, and what its sources lack added to its result.
func TestFleet(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 25, 0, 0, time.UTC)
	host := func(some ...float64) fleet.Series {
		return fleet.Series{
			exposition.Samples:                      {"": {10, 11, 12}},
			"memdiag_psi_memory_some_seconds_total": {`scope="host"`: some},
			"memdiag_file_lru_bytes":                {`scope="host"`: {8 << 20, 4 << 20, 4 << 20}},
		}
	}
	d := &fleet.Data{URL: "http://prom:9090", Step: time.Second, Times: []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)},
		Hosts: map[string]fleet.Series{"web-2": host(1.5, 1.75, 2), "web-1": host(0, 0, 0)}}
	var imported []string
	o := Options{Import: func(h *record.Header) (*latency.Imported, error) {
		imported = append(imported, h.Host)
		return nil, nil
	}}
	results, hosts, err := Fleet(d, o)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"web-1", "web-2"}, imported); d != "" {
		t.Errorf("imports for (-want +got):\n%s", d)
	}
	if len(results) != 2 || len(hosts) != 2 {
		t.Fatalf("%d results, %d hosts; want 2 and 2", len(results), len(hosts))
	}
	for i, name := range []string{"web-1", "web-2"} {
		h := d.Recording(name)
		sr := correlate.NewSeries(h.Rec.Header)
		for j := range h.Rec.Samples {
			sr.Add(&h.Rec.Samples[j])
		}
		want, _, err := Series(sr, nil, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := results[i]
		if got.Host != name || hosts[i].Name != name {
			t.Errorf("result %d is of %q (host %q), want %q", i, got.Host, hosts[i].Name, name)
		}
		if got.Res.Intervals != want.Intervals || len(got.Res.Episodes) != len(want.Episodes) || want.Intervals != 2 {
			t.Errorf("%s: %d intervals, %d episodes; want %d (2) and %d", name, got.Res.Intervals, len(got.Res.Episodes), want.Intervals, len(want.Episodes))
		}
		if len(h.Lacks) == 0 || !slices.Equal(got.Res.Lacks[len(got.Res.Lacks)-len(h.Lacks):], h.Lacks) {
			t.Errorf("%s: lacks %q do not end with the host's %q", name, got.Res.Lacks, h.Lacks)
		}
	}
	bad := errors.New("results file unreadable")
	o.Import = func(*record.Header) (*latency.Imported, error) { return nil, bad }
	if _, _, err := Fleet(d, o); !errors.Is(err, bad) {
		t.Errorf("import failure: err = %v, want %v", err, bad)
	}
}
