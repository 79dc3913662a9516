package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
)

// Each analysis warning reads as the sentence correlate wrote before the
// warnings became kinds; the JSON gives both the sentences and the kinds.
func TestWarningText(t *testing.T) {
	ws := []correlate.Warning{
		{Kind: correlate.WarnNote, Text: "run.jsonl: line 41 is truncated: skipped"},
		{Kind: correlate.WarnTooFewSamples},
		{Kind: correlate.WarnLatencyFileEmpty, LatencyFile: "/tmp/k6.csv"},
		{Kind: correlate.WarnProbeEmpty, Probe: "http://127.0.0.1:8080/"},
		{Kind: correlate.WarnNoLatency},
		{Kind: correlate.WarnNoPSI, Scope: correlate.PSICgroup},
		{Kind: correlate.WarnNoPSI, Scope: correlate.PSIHost},
		{Kind: correlate.WarnNotProjected},
		{Kind: correlate.WarnGrowthLeftOut, Samples: 60, Processes: 10},
	}
	want := []string{
		"run.jsonl: line 41 is truncated: skipped",
		"the recording has fewer than two samples: nothing to analyse",
		"watch followed --latency /tmp/k6.csv but read no request from it (the file never appeared, stayed empty, or its rows were bad: see the recording's warnings); analysing pressure episodes only",
		"the probe of http://127.0.0.1:8080/ recorded no request; analysing pressure episodes only",
		"no latency in the recording and none given: analysing pressure episodes only",
		"the recording has no memory PSI of the recorded cgroup: episodes are bursts of reclaim and disk signals, not measured stalls, and no culprit can be proven to have caused memory pressure",
		"the recording has no memory PSI of the host: episodes are bursts of reclaim and disk signals, not measured stalls, and no culprit can be proven to have caused memory pressure",
		"job schedules were not projected over the recording; jobs are matched only through their processes",
		"in 60 samples more processes were growing than watch records per sample (up to 10 left out of one): each was recorded in turn, so their growth is fitted on fewer points, and one that grew only while left out is not seen",
	}
	r := correlate.Result{Host: "h", Warnings: ws}
	var b bytes.Buffer
	if err := Render(&b, r, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Warnings []string `json:"warnings"`
		Details  []struct {
			Kind, LatencyFile, Probe, Scope, Text string
		} `json:"warning_details"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if strings.Join(doc.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(doc.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if len(doc.Details) != len(ws) || doc.Details[2].Kind != "latency_file_empty" || doc.Details[5].Kind != "no_psi" || doc.Details[5].Scope != "cgroup" {
		t.Errorf("warning_details %+v", doc.Details)
	}
	b.Reset()
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(b.String(), "Note: "+w+"\n") {
			t.Errorf("text lacks %q:\n%s", "Note: "+w, b.String())
		}
	}
}
