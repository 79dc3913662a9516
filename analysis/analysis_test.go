package analysis

import (
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// TestRecordingIsAnalyze: without a results file, the pipeline's result
// is correlate.Analyze of the whole recording (the verdict gate
// --recording notes). The recording is correlate's union fixture, two
// timers offset on one period (correlate/testdata/SOURCE): 12 episodes,
// 2 culprits.
func TestRecordingIsAnalyze(t *testing.T) {
	const path = "../correlate/testdata/union.jsonl.gz"
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := 0
	got, trace, err := Recording(r, path, func() { done++ }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if done != 1 || trace != nil {
		t.Errorf("done called %d times, trace %v; want once and no trace", done, trace)
	}
	rec, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := correlate.Analyze(rec, correlate.Options{Project: timers.Project})
	if got.Intervals != want.Intervals || len(got.Episodes) != len(want.Episodes) || len(got.Culprits) != len(want.Culprits) || len(want.Culprits) == 0 {
		t.Errorf("got %d intervals, %d episodes, %d culprits; want %d, %d, %d",
			got.Intervals, len(got.Episodes), len(got.Culprits), want.Intervals, len(want.Episodes), len(want.Culprits))
	}
	for i := range min(len(got.Culprits), len(want.Culprits)) {
		if got.Culprits[i].Name != want.Culprits[i].Name || got.Culprits[i].Confidence != want.Culprits[i].Confidence {
			t.Errorf("culprit %d: %s %.3f, want %s %.3f", i, got.Culprits[i].Name, got.Culprits[i].Confidence, want.Culprits[i].Name, want.Culprits[i].Confidence)
		}
	}
}
