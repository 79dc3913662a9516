package gatereport

import (
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/timers"
)

// TestReason: the words for each reason a threshold was not judged, as
// gate wrote them before it returned them as data (issue 26).
func TestReason(t *testing.T) {
	ths, err := gate.ParseAll([]string{"memory.full.stall<1%", "swap.out<1MiB"})
	if err != nil {
		t.Fatal(err)
	}
	missing := &gate.SignalMissing{Metric: ths[0].Metric, FirstError: "psi: /proc/pressure/memory: permission denied"}
	for _, c := range []struct {
		r    gate.Result
		want string
	}{
		{gate.Result{Threshold: ths[0], Status: gate.Pass}, ""},
		{gate.Result{Threshold: ths[0], Why: gate.Unjudged{Kind: gate.MissingSignal, Missing: missing}},
			`no memory PSI (/proc/pressure/memory, "full" line); first collector error: psi: /proc/pressure/memory: permission denied`},
		{gate.Result{Threshold: ths[0], Why: gate.Unjudged{Kind: gate.NoSamples}}, "no samples"},
		{gate.Result{Threshold: ths[0], Why: gate.Unjudged{Kind: gate.OneSample}}, "only one sample; a run needs at least two to measure a change"},
		{gate.Result{Threshold: ths[0], Why: gate.Unjudged{Kind: gate.NoInterval}}, "no sampling interval with positive length"},
		{gate.Result{Threshold: ths[1], Covered: time.Second, Why: gate.Unjudged{Kind: gate.PartlyCovered, Span: 3 * time.Second}},
			"held over the 1s of the run that had the signal, but 2s of 3s had none"},
		{gate.Result{Threshold: ths[1], Why: gate.Unjudged{Kind: gate.CutShort, Ended: "no end line"}},
			"held over what was recorded, but the recording ended abnormally (no end line)"},
		{gate.Result{Threshold: ths[0], Why: gate.Unjudged{Kind: gate.SuspectPSI}}, "not judged (--suspect-psi fail): the memory PSI contradicts itself"},
		{gate.Result{Threshold: ths[1], Why: gate.Unjudged{Kind: gate.NotStarted}}, "the run did not start: other thresholds' signals are missing"},
	} {
		if got := Reason(&c.r); got != c.want {
			t.Errorf("kind %d: %q, want %q", c.r.Why.Kind, got, c.want)
		}
	}
}

// TestCommandText: how the wrapped command ended, in each of its ways.
func TestCommandText(t *testing.T) {
	ths, err := gate.ParseAll([]string{"memory.full.stall<1%"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		c    gate.CommandResult
		want string
	}{
		{gate.CommandResult{ExitCode: 3}, "exited with code 3"},
		{gate.CommandResult{ExitCode: 137, Signal: "SIGKILL"}, "killed by SIGKILL (exit code 137)"},
		{gate.CommandResult{ExitCode: 143, Signal: "SIGTERM", Abort: &gate.Result{Threshold: ths[0], Status: gate.Fail, Observed: 3.2}},
			"stopped by memdiag (--abort-on-fail: memory.full.stall<1% crossed (observed 3.2%)), exit code 143"},
		{gate.CommandResult{ExitCode: 127, Err: "exec: \"k6\": executable file not found in $PATH"}, "exec: \"k6\": executable file not found in $PATH"},
	} {
		if got := CommandText(&c.c); got != c.want {
			t.Errorf("%+v: %q, want %q", c.c, got, c.want)
		}
	}
}

// TestWarningsNameCredits: a breach credited to a culprit (gate.NoteCulprits)
// is named after the recording's warnings, with its worst moment in the
// recording's zone.
func TestWarningsNameCredits(t *testing.T) {
	ths, err := gate.ParseAll([]string{"memory.some.stall<1%"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	job := timers.Job{Name: "backup.timer", Source: timers.Systemd}
	res := correlate.Result{Interval: time.Second, Location: time.FixedZone("CET", 3600),
		Episodes: []correlate.Episode{{Start: t0, End: t0.Add(10 * time.Second)}},
		Culprits: []correlate.Culprit{{Name: "backup.timer", Kind: correlate.KindTimer, Job: &job, Episodes: []int{0}, Confidence: 0.9}}}
	w := t0.Add(5 * time.Second)
	rep := &gate.Report{Warnings: []string{"line 9: truncated"}, Results: []gate.Result{
		{Threshold: ths[0], Status: gate.Fail, Worst: &gate.Moment{Start: w, End: w.Add(time.Second)}},
	}}
	gate.NoteCulprits(rep, res)
	want := []string{"line 9: truncated",
		"memory.some.stall<1%: its worst moment (13:00:05–13:00:06) fell in an episode memdiag analyze credits to backup.timer (timer, high confidence 0.90); see memdiag analyze for the evidence"}
	if got := Warnings(rep); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q; want %q", got, want)
	}
	if len(rep.Warnings) != 1 {
		t.Errorf("the report's own warnings changed: %q", rep.Warnings)
	}
}
