package gate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// TestNoteCulprits: a breach whose worst moment falls in an episode the
// culprit model credits to a job gets a note naming it; a moment outside
// the credited episodes, or a passing threshold, gets none.
func TestNoteCulprits(t *testing.T) {
	ths, err := ParseAll([]string{"memory.some.stall<1%", "oom_kills==0"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	job := timers.Job{Name: "backup.timer", Source: timers.Systemd}
	res := correlate.Result{Interval: time.Second, Location: time.UTC,
		Episodes: []correlate.Episode{{Start: t0, End: t0.Add(10 * time.Second)}},
		Culprits: []correlate.Culprit{{Name: "backup.timer", Kind: correlate.KindTimer, Job: &job, Episodes: []int{0}, Confidence: 0.9}}}
	w := t0.Add(5 * time.Second)
	rep := &Report{Results: []Result{
		{Threshold: ths[0], Status: Fail, Worst: &Moment{Start: w, End: w.Add(time.Second)}},
		{Threshold: ths[1], Status: Pass, Worst: &Moment{Start: w, End: w.Add(time.Second)}},
	}}
	NoteCulprits(rep, res)
	want := "memory.some.stall<1%: its worst moment (12:00:05–12:00:06) fell in an episode memdiag analyze credits to backup.timer (timer, high confidence 0.90); see memdiag analyze for the evidence"
	if len(rep.Warnings) != 1 || rep.Warnings[0] != want {
		t.Errorf("warnings = %q; want [%q]", rep.Warnings, want)
	}
	rep.Warnings = nil
	rep.Results[0].Worst = &Moment{Start: t0.Add(time.Minute), End: t0.Add(61 * time.Second)}
	NoteCulprits(rep, res)
	if len(rep.Warnings) != 0 {
		t.Errorf("a moment outside the credited episode got %q", rep.Warnings)
	}
}
