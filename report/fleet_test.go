package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/internal/format"
)

// TestRenderFleet: analyze --prometheus's output for two hosts read from
// memdiag's metrics, web-2 with one stall (PSI some +5 s in a 10 s step),
// web-1 calm: each host's report, the fleet's line and the resolution
// note, with the scrape interval measured (15s) or not (assumed the
// step).
func TestRenderFleet(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 25, 0, 0, time.UTC)
	host := func(some ...float64) fleet.Series {
		return fleet.Series{
			exposition.Samples:                      {"": {10, 11, 12, 13, 14, 15}},
			"memdiag_psi_memory_some_seconds_total": {`scope="host"`: some},
			"memdiag_file_lru_bytes":                {`scope="host"`: {8 << 20, 4 << 20, 4 << 20, 4 << 20, 4 << 20, 4 << 20}},
		}
	}
	var times []time.Time
	for i := range 6 {
		times = append(times, t0.Add(time.Duration(i)*10*time.Second))
	}
	d := &fleet.Data{URL: "http://prom:9090", Step: 10 * time.Second, Scrape: 15 * time.Second, Times: times, Warnings: []string{"a warning"},
		Hosts: map[string]fleet.Series{"web-2": host(0, 0, 5, 5.1, 5.2, 5.3), "web-1": host(0, 0, 0, 0, 0, 0)}}
	results, hosts, err := analysis.Fleet(d, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fl := Fleet{Data: d, From: t0, To: t0.Add(time.Minute), Results: results, Hosts: hosts, Align: time.Minute,
		Aligned: fleet.Align(results, time.Minute)}
	if len(fl.Aligned) != 1 || len(fl.Aligned[0].Hosts) != 1 || fl.Aligned[0].Hosts[0] != "web-2" {
		t.Fatalf("aligned %+v, want web-2's one episode", fl.Aligned)
	}
	for f, ext := range map[format.Format]string{format.Table: "txt", format.Markdown: "md", format.JSON: "json"} {
		var b bytes.Buffer
		if err := RenderFleet(&b, fl, f, Options{Width: 100}); err != nil {
			t.Fatal(err)
		}
		golden(t, "fleet."+ext, b.Bytes())
	}
	d.Scrape, fl.Aligned = 0, nil
	var b bytes.Buffer
	if err := RenderFleet(&b, fl, format.Table, Options{Width: 100}); err != nil {
		t.Fatal(err)
	}
	golden(t, "fleet-no-scrape.txt", b.Bytes())
	if err := RenderFleet(&b, fl, format.CSV, Options{}); err == nil {
		t.Error("RenderFleet wrote CSV; want an error")
	}
}
