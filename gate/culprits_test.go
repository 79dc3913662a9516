package gate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// TestNoteCulprits: a breach whose worst moment falls in an episode the
// culprit model credits to a job is credited to it; a moment outside
// the credited episodes, or a passing threshold, is not. (The words:
// report/gatereport TestWarningsNameCredits.)
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
	if len(rep.Credits) != 1 || rep.Credits[0].Result != 0 || len(rep.Credits[0].Culprits) != 1 ||
		rep.Credits[0].Culprits[0].Name != "backup.timer" || rep.Credits[0].Location != time.UTC || len(rep.Warnings) != 0 {
		t.Errorf("credits = %+v, warnings %q; want result 0 credited to backup.timer", rep.Credits, rep.Warnings)
	}
	rep.Credits = nil
	rep.Results[0].Worst = &Moment{Start: t0.Add(time.Minute), End: t0.Add(61 * time.Second)}
	NoteCulprits(rep, res)
	if len(rep.Credits) != 0 {
		t.Errorf("a moment outside the credited episode got %+v", rep.Credits)
	}
}
