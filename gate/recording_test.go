package gate

import (
	"testing"

	"github.com/memdiag/memdiag/record"
)

// TestJudgeRecording judges correlate's union fixture (synthetic, two
// timers on one period; correlate/testdata/SOURCE): its memory stall
// held under 100 %, and the recording cut to one sample is too short to
// judge.
func TestJudgeRecording(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	ths, err := ParseAll([]string{"memory.some.stall<100%"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := JudgeRecording(rec, "union", ths, SuspectWarn)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Status != Pass {
		t.Errorf("results %+v, want one pass", rep.Results)
	}
	rec.Samples = rec.Samples[:1]
	if _, err := JudgeRecording(rec, "union", ths, SuspectWarn); err == nil {
		t.Error("one sample: no error, want too few samples")
	}
}
