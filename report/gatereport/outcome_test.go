package gatereport

import (
	"testing"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/signal"
)

// TestGateOutcome: the closing sentence of each outcome, in gate's order
// of precedence (a failed command first, then no data, then a breach).
func TestOutcome(t *testing.T) {
	ths, err := gate.ParseAll([]string{"oom_kills==0", "swap.out<64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	rep := &gate.Report{Results: []gate.Result{
		{Threshold: ths[0], Status: gate.Fail, Observed: 2},
		{Threshold: ths[1], Status: gate.Pass, Observed: 1 << 20},
	}}
	if got, want := Outcome(rep), "threshold breached: oom_kills==0 (observed 2)"; rep.Outcome() != gate.OutcomeBreach || got != want {
		t.Errorf("breach: outcome %d, %q; want %d, %q", rep.Outcome(), got, gate.OutcomeBreach, want)
	}
	rep.Results[1] = gate.Result{Threshold: ths[1], Status: gate.NoData, Why: gate.Unjudged{Kind: gate.OneSample}}
	rep.SuspectPSI = make([]signal.PSISuspect, 1)
	if got, want := Outcome(rep), "could not judge swap.out<64MiB: only one sample; a run needs at least two to measure a change (the judged PSI is suspect: see the warning)"; rep.Outcome() != gate.OutcomeNoData || got != want {
		t.Errorf("no data: outcome %d, %q; want %d, %q", rep.Outcome(), got, gate.OutcomeNoData, want)
	}
	rep.Command = &gate.CommandResult{Args: []string{"k6", "run"}, ExitCode: 137, Signal: "SIGKILL"}
	if got, want := Outcome(rep), "the wrapped command failed: k6 run: killed by SIGKILL (exit code 137)"; rep.Outcome() != gate.OutcomeCommandFailed || got != want {
		t.Errorf("command: outcome %d, %q; want %d, %q", rep.Outcome(), got, gate.OutcomeCommandFailed, want)
	}
	pass := &gate.Report{Results: []gate.Result{{Threshold: ths[0], Status: gate.Pass}}}
	if pass.Outcome() != gate.OutcomePass || Outcome(pass) != "" {
		t.Errorf("pass: outcome %d, %q", pass.Outcome(), Outcome(pass))
	}
}

// TestVerdict: the one-line verdict of each kind of run.
func TestVerdict(t *testing.T) {
	ths, err := gate.ParseAll([]string{"oom_kills==0", "swap.out<64MiB", "memory.some.stall<1%"})
	if err != nil {
		t.Fatal(err)
	}
	rep := &gate.Report{Results: []gate.Result{{Threshold: ths[0], Status: gate.Pass}}}
	for _, c := range []struct {
		results []gate.Status
		command *gate.CommandResult
		want    string
	}{
		{[]gate.Status{gate.Pass}, nil, "PASS: the threshold held"},
		{[]gate.Status{gate.Pass, gate.Pass, gate.Pass}, nil, "PASS: all 3 thresholds held"},
		{[]gate.Status{gate.Pass}, &gate.CommandResult{Args: []string{"./load.sh"}, ExitCode: 3}, "FAIL: the command failed: exited with code 3"},
		{[]gate.Status{gate.Fail, gate.NoData, gate.Pass}, nil, "FAIL: 1 of 3 thresholds breached; 1 of 3 thresholds could not be judged (no data)"},
	} {
		rep.Results, rep.Command = nil, c.command
		for i, st := range c.results {
			rep.Results = append(rep.Results, gate.Result{Threshold: ths[i], Status: st})
		}
		if got := Verdict(rep); got != c.want {
			t.Errorf("Verdict = %q, want %q", got, c.want)
		}
	}
}
