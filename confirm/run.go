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
	if len(done) >= 2 {
		res, err := Analyze(done, o)
		if err == nil {
			rep.Result = &res
		} else if runErr == nil {
			runErr = err
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
