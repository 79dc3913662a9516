package confirm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/timers"
)

// heldNow says whether the fixture's pmlogger_check line is commented out.
func heldNow(t *testing.T, file string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), heldPrefix)
}

func newExperiment(t *testing.T, pairs int) (*Experiment, string, string) {
	t.Helper()
	root, file := cronRoot(t)
	env := Env{Root: root}
	c, err := Prepare(context.Background(), checkJob(), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "confirm.state")
	st, err := OpenState(state, env, t0)
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := Plan(pairs)
	return &Experiment{Blocks: blocks, Changes: []Change{c}, State: st}, file, state
}

func TestExperimentHoldsOnlyInB(t *testing.T) {
	e, file, state := newExperiment(t, 2)
	var seen strings.Builder
	e.RunBlock = func(_ context.Context, b Block) (Measurement, error) {
		if held := heldNow(t, file); held != (b.Arm == HeldOff) {
			t.Errorf("block %d (%s): held %v", b.Index, b.Arm, held)
		}
		seen.WriteString(string(b.Arm))
		return Measurement{Block: b}, nil
	}
	got, err := e.Run(context.Background())
	if err != nil || len(got) != 4 || seen.String() != "ABBA" {
		t.Fatalf("run: %d blocks %s %v", len(got), seen.String(), err)
	}
	if err := e.State.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != pcpCron {
		t.Errorf("file after the run:\n%s", b)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state left: %v", err)
	}
}

// Two jobs held off together (--job twice, or a verdict naming two):
// both lines are commented out in every B block and neither in A, and
// the file is back byte for byte after the run.
func TestExperimentHoldsJobsTogether(t *testing.T) {
	root, file := cronRoot(t)
	env := Env{Root: root}
	daily := timers.Job{Name: "cron.d/pcp-pmlogger:6", Source: timers.Cron, File: "etc/cron.d/pcp-pmlogger", Line: 6}
	var cs []Change
	for _, j := range []timers.Job{checkJob(), daily} {
		c, err := Prepare(context.Background(), j, env, t0)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	st, err := OpenState(filepath.Join(root, "confirm.state"), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := Plan(2)
	e := &Experiment{Blocks: blocks, Changes: cs, State: st}
	e.RunBlock = func(_ context.Context, b Block) (Measurement, error) {
		b2, _ := os.ReadFile(file)
		if n := strings.Count(string(b2), heldPrefix); n != map[Arm]int{AsIs: 0, HeldOff: 2}[b.Arm] {
			t.Errorf("block %d (%s): %d lines held off\n%s", b.Index+1, b.Arm, n, b2)
		}
		return Measurement{Block: b}, nil
	}
	if got, err := e.Run(context.Background()); err != nil || len(got) != 4 {
		t.Fatalf("run: %d blocks, %v", len(got), err)
	}
	if err := e.State.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != pcpCron {
		t.Errorf("file after the run:\n%s", b)
	}
}

func TestExperimentPutsBackOnEveryExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(cancel context.CancelCauseFunc) error
		want string
	}{
		{"load fails", func(context.CancelCauseFunc) error {
			return errors.Join(ErrLoadFailed, errors.New("exit status 3"))
		}, "the load failed"},
		{"interrupted", func(cancel context.CancelCauseFunc) error {
			cancel(errors.New("interrupted by SIGTERM"))
			return errors.New("interrupted by SIGTERM")
		}, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, file, _ := newExperiment(t, 3)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			e.RunBlock = func(_ context.Context, b Block) (Measurement, error) {
				if b.Index == 2 { // pair 2's first block: B
					if !heldNow(t, file) {
						t.Error("not held in block 3")
					}
					return Measurement{}, tc.fail(cancel)
				}
				return Measurement{Block: b}, nil
			}
			got, err := e.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "block 3 (B)") {
				t.Fatalf("err %v", err)
			}
			if len(got) != 2 {
				t.Errorf("%d blocks measured, want 2", len(got))
			}
			if heldNow(t, file) {
				t.Error("still held after the run ended")
			}
		})
	}
}

func TestLoadRunBlock(t *testing.T) {
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "pressure"), 0o755); err != nil {
		t.Fatal(err)
	}
	psiFile := "some avg10=0.00 avg60=0.00 avg300=0.00 total=1500\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=700\n"
	if err := os.WriteFile(filepath.Join(proc, "pressure/memory"), []byte(psiFile), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Load{Command: []string{"true"}, ProcRoot: proc, Now: time.Now}
	m, err := l.RunBlock(context.Background(), Block{Index: 1, Pair: 0, Arm: HeldOff})
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasPSI || m.MemorySome != 0 || m.Arm != HeldOff || m.Index != 1 || m.Wall <= 0 {
		t.Errorf("measurement %+v", m)
	}
	l.Command = []string{"sh", "-c", "exit 3"}
	if _, err := l.RunBlock(context.Background(), Block{}); !errors.Is(err, ErrLoadFailed) || !strings.Contains(err.Error(), "3") {
		t.Errorf("failing load: %v", err)
	}
	l.ProcRoot = filepath.Join(proc, "none")
	l.Command = []string{"true"}
	if m, err := l.RunBlock(context.Background(), Block{}); err != nil || m.HasPSI {
		t.Errorf("without PSI: %+v %v", m, err)
	}
}

// TestExperimentKeepsHoldAcrossBB: in AB BA AB the two B blocks of the
// pair boundary are one hold — the timer is stopped twice and started
// twice, never started between two B blocks (systemd would run its job
// at once, into the second: Experiment.Run) — and it is active at the
// end.
func TestExperimentKeepsHoldAcrossBB(t *testing.T) {
	ctx := context.Background()
	var calls []string
	fu := fakeUnits{active: map[string]bool{"pmlogger_check.timer": true}, calls: &calls}
	env := Env{Units: func(context.Context) (UnitControl, error) { return fu, nil }}
	c, err := Prepare(ctx, timers.Job{Name: "pmlogger_check.timer", Source: timers.Systemd, File: "usr/lib/systemd/system/pmlogger_check.timer"}, env, t0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenState(filepath.Join(t.TempDir(), "s"), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := Plan(3)
	var arms strings.Builder
	e := &Experiment{Blocks: blocks, Changes: []Change{c}, State: st, RunBlock: func(_ context.Context, b Block) (Measurement, error) {
		if held := !fu.active["pmlogger_check.timer"]; held != (b.Arm == HeldOff) {
			t.Errorf("block %d (%s): timer stopped %v", b.Index+1, b.Arm, held)
		}
		arms.WriteString(string(b.Arm))
		calls = append(calls, string(b.Arm))
		return Measurement{Block: b}, nil
	}}
	if _, err := e.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := "A stop pmlogger_check.timer replace B B start pmlogger_check.timer replace A A stop pmlogger_check.timer replace B start pmlogger_check.timer replace"
	if arms.String() != "ABBAAB" || strings.Join(calls, " ") != want {
		t.Errorf("blocks %s, calls:\n%s\nwant\n%s", arms.String(), strings.Join(calls, " "), want)
	}
	if !fu.active["pmlogger_check.timer"] {
		t.Error("the timer is left stopped")
	}
}
