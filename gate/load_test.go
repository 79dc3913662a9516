package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/internal/usage"
)

// TestLoad: --threshold's expressions come first, then the file's; a bad
// expression or file is a usage error, a missing file a file error.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("thresholds:\n  - swap.out<64MiB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("thresholds:\n  - memory.bogus<1%\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ths, err := Load(ctx, strings.NewReader(""), []string{"oom_kills==0"}, good)
	if err != nil || len(ths) != 2 || ths[0].Expr != "oom_kills==0" || ths[1].Expr != "swap.out<64MiB" {
		t.Fatalf("Load = %v, %v; want oom_kills==0 then swap.out<64MiB", ths, err)
	}
	ths, err = Load(ctx, strings.NewReader("[\"oom_kills==0\"]"), nil, "-")
	if err != nil || len(ths) != 1 {
		t.Errorf("Load of stdin = %v, %v; want one threshold", ths, err)
	}
	var ue *usage.Error
	if _, err := Load(ctx, nil, []string{"memory.some.stall<"}, ""); !errors.As(err, &ue) {
		t.Errorf("a bad expression: %T %v, want a *usage.Error", err, err)
	}
	if _, err := Load(ctx, nil, nil, bad); !errors.As(err, &ue) || !strings.Contains(err.Error(), bad+":2") {
		t.Errorf("a bad file entry: %T %v, want a *usage.Error naming %s:2", err, err, bad)
	}
	var ne *rootfs.NamedError
	if _, err := Load(ctx, nil, nil, filepath.Join(dir, "gone.yaml")); !errors.As(err, &ne) || errors.As(err, &ue) {
		t.Errorf("a missing file: %T %v, want a *rootfs.NamedError", err, err)
	}
}

// TestThresholdOutcome: a failed command is left out; no data comes
// before a breach, as in Outcome.
func TestThresholdOutcome(t *testing.T) {
	failed := &CommandResult{ExitCode: 3}
	for _, c := range []struct {
		statuses   []Status
		want, with Outcome // without and with the failed command (Outcome)
	}{
		{[]Status{Pass, Pass}, OutcomePass, OutcomeCommandFailed},
		{[]Status{Pass, Fail}, OutcomeBreach, OutcomeCommandFailed},
		{[]Status{Fail, NoData}, OutcomeNoData, OutcomeCommandFailed},
	} {
		rep := &Report{Command: failed}
		for _, s := range c.statuses {
			rep.Results = append(rep.Results, Result{Status: s})
		}
		if got := rep.ThresholdOutcome(); got != c.want {
			t.Errorf("%v: ThresholdOutcome %d, want %d", c.statuses, got, c.want)
		}
		if got := rep.Outcome(); got != c.with {
			t.Errorf("%v: Outcome %d, want %d", c.statuses, got, c.with)
		}
		rep.Command = nil
		if got := rep.Outcome(); got != c.want {
			t.Errorf("%v without a command: Outcome %d, want %d", c.statuses, got, c.want)
		}
	}
}
