package cmd

import (
	"encoding/json"
	"testing"
)

// Comparing a recording with itself changes nothing; the union recording
// has 12 episodes and 47 spike intervals (see correlate's tests).
func TestRunCompare(t *testing.T) {
	code, out, errOut := runCmd(t, "compare", unionRec, unionRec, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var doc struct {
		Before struct {
			Metrics  map[string]*float64 `json:"metrics"`
			Culprits []string            `json:"culprits"`
		} `json:"before"`
		ChangePct map[string]*float64 `json:"change_pct"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Before.Metrics
	if *m["episodes"] != 12 || *m["spike_intervals"] != 47 || len(doc.Before.Culprits) != 2 {
		t.Errorf("before = %v %v", m, doc.Before.Culprits)
	}
	// 50 requests/s in every sample of the synthetic recording.
	if *m["requests_per_s"] != 50 {
		t.Errorf("requests/s = %v, want 50", *m["requests_per_s"])
	}
	if c := doc.ChangePct["mean_ms"]; c == nil || *c != 0 {
		t.Errorf("change of mean = %v, want 0", c)
	}
	if code, _, _ := runCmd(t, "compare", unionRec); code != exitUsage {
		t.Errorf("one argument: exit %d", code)
	}
}
