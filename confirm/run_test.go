package confirm

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestConclude: two blocks or more are analysed; the run's own error
// decides the exit and is said as why the run stopped.
func TestConclude(t *testing.T) {
	done := blocksFromP99([]float64{600, 640, 580, 620, 650}, []float64{500, 520, 490, 510, 520})
	rep, err := Conclude(Report{Job: "pmlogger_check.timer"}, done, nil, Options{})
	if err != nil || rep.Result == nil || rep.Result.Verdict != Confirmed || len(rep.Blocks) != 10 || rep.Stopped != "" {
		t.Fatalf("whole run: err %v, result %v, %d blocks, stopped %q; want confirmed over 10 blocks", err, rep.Result, len(rep.Blocks), rep.Stopped)
	}
	stop := errors.Join(ErrLoadFailed, errors.New("exit status 3"))
	rep, err = Conclude(Report{}, done[:1], stop, Options{})
	if !errors.Is(err, ErrLoadFailed) || rep.Result != nil || rep.Stopped != stop.Error() || len(rep.Blocks) != 1 {
		t.Errorf("one block then the load failed: err %v, result %v, stopped %q", err, rep.Result, rep.Stopped)
	}
}

// TestRunAndClosePutsBack: the held line is put back and the state file
// removed once the run ends, even when its context was cancelled.
func TestRunAndClosePutsBack(t *testing.T) {
	e, file, state := newExperiment(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	e.RunBlock = func(_ context.Context, b Block) (Measurement, error) {
		if b.Arm == HeldOff {
			cancel()
			return Measurement{}, context.Canceled
		}
		return Measurement{Block: b}, nil
	}
	got, err := e.RunAndClose(ctx, state)
	if !errors.Is(err, context.Canceled) || len(got) != 1 {
		t.Errorf("RunAndClose = %d blocks, %v; want 1 and the cancellation", len(got), err)
	}
	if b, _ := os.ReadFile(file); string(b) != pcpCron {
		t.Errorf("file after the run:\n%s", b)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state left: %v", err)
	}
}

func TestWriteRestored(t *testing.T) {
	var b strings.Builder
	WriteRestored(&b, "/var/lib/memdiag/confirm.state", true, nil, time.UTC)
	if got, want := b.String(), "Nothing to restore: /var/lib/memdiag/confirm.state lists no changes.\n"; got != want {
		t.Errorf("nothing undone: %q, want %q", got, want)
	}
	b.Reset()
	WriteRestored(&b, "/var/lib/memdiag/confirm.state", false, nil, time.UTC)
	if got, want := b.String(), "Nothing to restore: no state file at /var/lib/memdiag/confirm.state (a run given --state FILE keeps it there: give the same --state).\n"; got != want {
		t.Errorf("no file: %q, want %q", got, want)
	}
	if got := RestoreCommand("/tmp/s"); got != "memdiag confirm --restore --state /tmp/s" {
		t.Errorf("RestoreCommand(/tmp/s) = %q", got)
	}
	if got := RestoreCommand(DefaultStatePath); got != "memdiag confirm --restore" {
		t.Errorf("RestoreCommand(default) = %q", got)
	}
	b.Reset()
	at := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	WriteRestored(&b, "s", true, []Change{{Job: "cron.d/pcp-pmlogger:8", At: at}}, time.FixedZone("CET", 3600))
	if got, want := b.String(), "Restored cron.d/pcp-pmlogger:8 (held off since 2026-12-01T07:00:00+01:00).\n"; got != want {
		t.Errorf("one undone: %q, want %q", got, want)
	}
}
