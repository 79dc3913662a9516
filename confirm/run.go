package confirm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// UndoTimeout bounds putting things back once the run is over.
const UndoTimeout = 30 * time.Second

// CloseState puts back what st holds, with UndoTimeout from now even if
// ctx is cancelled (Ctrl-C, SIGTERM).
func CloseState(ctx context.Context, st *State) error {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), UndoTimeout)
	defer cancel()
	return st.Close(uctx)
}

// RunAndClose runs e, then puts back what its State holds (CloseState).
// A change that could not be put back joins the run's error, saying that
// the state file statePath keeps it for memdiag confirm --restore.
func (e *Experiment) RunAndClose(ctx context.Context, statePath string) ([]Measurement, error) {
	done, runErr := e.Run(ctx)
	if cerr := CloseState(ctx, e.State); cerr != nil {
		runErr = errors.Join(runErr, fmt.Errorf("%w; the state file %s keeps it: run %s", cerr, statePath, RestoreCommand(statePath)))
	}
	return done, runErr
}

// Conclude completes rep with the blocks that ran (done), why the run
// stopped early (runErr) and, from two blocks on, the statistics
// (Analyze with o). It returns the error that decides the exit code:
// runErr (the load failing, an interruption), else the analysis's own.
func Conclude(rep Report, done []Measurement, runErr error, o Options) (Report, error) {
	rep.Blocks = done
	if runErr != nil {
		rep.Stopped = runErr.Error()
	}
	rep.NoVerdict = "too few blocks ran to compare"
	if len(done) >= 2 {
		res, err := Analyze(done, o)
		switch {
		case err == nil:
			rep.Result, rep.NoVerdict = &res, ""
			tooShortToRefute(&rep)
		case runErr == nil:
			rep.NoVerdict, runErr = err.Error(), err
		}
	}
	return rep, runErr
}

// WriteRestored says what Restore put back (undone) from the state file
// path, with the times in loc; existed says whether there was a state
// file. Like the progress lines, it is not checked: what was put back
// stays put back if stdout is gone.
func WriteRestored(w io.Writer, path string, existed bool, undone []Change, loc *time.Location) {
	if !existed {
		fmt.Fprintf(w, "Nothing to restore: no state file at %s (a run given --state FILE keeps it there: give the same --state).\n", path)
		return
	}
	if len(undone) == 0 {
		fmt.Fprintf(w, "Nothing to restore: %s lists no changes.\n", path)
		return
	}
	for _, c := range undone {
		since := "held off"
		if c.Fix != "" {
			since = "the fix " + c.Fix + " in place"
		}
		fmt.Fprintf(w, "Restored %s (%s since %s).\n", c.Job, since, c.At.In(loc).Format(time.RFC3339))
	}
}

// tooShortToRefute turns a refuted verdict inconclusive when the blocks
// were one run of the load each (--block 0) and every A block was
// shorter than the time between the jobs' firings: such blocks may hold
// no firing, so an A no worse than B says nothing about the job (a load
// of a few seconds against a job that fires every 5 minutes). An
// explicit --block shorter than that was warned about before the run
// (Request.WarnShortBlock) and is the user's choice (a test's stand-in
// cron fires more often than its schedule). A confirmed verdict stands:
// a difference was seen.
func tooShortToRefute(rep *Report) {
	if rep.Block > 0 || rep.FiringGap <= 0 || rep.Result == nil || rep.Result.Verdict != Refuted {
		return
	}
	var longest time.Duration
	for _, m := range rep.Blocks {
		if m.Arm == AsIs {
			longest = max(longest, m.Wall)
		}
	}
	if longest >= rep.FiringGap {
		return
	}
	rep.Result.Verdict = Inconclusive
	rep.Result.Reasons = append(rep.Result.Reasons, fmt.Sprintf(
		"not refuted: every A block (one run of the load, the longest %s) was shorter than the time between the job's firings (%s), so an A block may have held no firing; give --block %s or more",
		longest.Round(time.Millisecond), rep.FiringGap, rep.FiringGap))
}
