package confirm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memdiag/memdiag/internal/english"
)

// Experiment runs the planned blocks, holding the jobs off for each B
// block and putting them back after.
type Experiment struct {
	Blocks []Block
	// Changes hold the jobs off (or put a fix in place), one per job, made
	// in order; State records each before it is made.
	Changes []Change
	State   *State
	// RunBlock runs the load for one block and measures it.
	RunBlock func(ctx context.Context, b Block) (Measurement, error)
	// Progress, when set, is told each block's measurement as it ends.
	Progress func(Measurement)
	// Undo bounds the time putting things back may take after the run's
	// context is cancelled (default 30 s).
	Undo time.Duration
	// Running, when set, finds the jobs' instances running now: before a
	// B block, once the hold is in place, the experiment waits for those
	// (started before the hold) to end, at most SettleMax, so that they
	// do not count as B's. Waiting, when set, is told before it waits.
	Running   Running
	SettleMax time.Duration
	Waiting   func(b Block, pids []int, max time.Duration)
}

// Run runs every block in order. The jobs are held off only during B
// blocks; they are put back after each, and on every way out — the load
// failing, the context cancelled (Ctrl-C, SIGTERM) — with a context of
// its own, so a cancelled run still undoes its changes. It returns the
// blocks measured so far with the first error.
func (e *Experiment) Run(ctx context.Context) (done []Measurement, err error) {
	for _, b := range e.Blocks {
		m, berr := e.block(ctx, b)
		if berr != nil {
			return done, berr
		}
		done = append(done, m)
		if e.Progress != nil {
			e.Progress(m)
		}
	}
	return done, nil
}

func (e *Experiment) block(ctx context.Context, b Block) (m Measurement, err error) {
	if b.Arm == HeldOff {
		for _, c := range e.Changes {
			if err := e.State.Hold(ctx, c); err != nil {
				what := "holding " + c.Job + " off"
				if c.Fix != "" {
					what = "putting " + c.Fix + " in place for " + c.Job
				}
				return m, errors.Join(fmt.Errorf("block %d: %s: %w", b.Index+1, what, err), e.release())
			}
		}
		defer func() { err = errors.Join(err, e.release()) }()
	}
	var waited time.Duration
	var left []int
	if b.Arm == HeldOff && e.Running != nil {
		if waited, left, err = e.settle(ctx, b); err != nil {
			return m, fmt.Errorf("block %d (%s): %w", b.Index+1, b.Arm, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return m, context.Cause(ctx)
	}
	m, err = e.RunBlock(ctx, b)
	if err != nil {
		return m, fmt.Errorf("block %d (%s): %w", b.Index+1, b.Arm, err)
	}
	m.Settled, m.StillRunning = waited, left
	return m, nil
}

// settle waits for the job's instances running at the hold to end, and
// for a moment of quiet after (Settle), telling Waiting the first time it
// finds one.
func (e *Experiment) settle(ctx context.Context, b Block) (time.Duration, []int, error) {
	limit := e.SettleMax
	if limit <= 0 {
		limit = SettleMax(0)
	}
	told := e.Waiting == nil
	return Settle(ctx, func(ctx context.Context) ([]int, error) {
		pids, err := e.Running(ctx)
		if len(pids) > 0 && !told {
			told = true
			e.Waiting(b, pids, limit)
		}
		return pids, err
	}, limit)
}

// release undoes the hold with a context that outlives the run's.
func (e *Experiment) release() error {
	d := e.Undo
	if d <= 0 {
		d = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := e.State.Release(ctx); err != nil {
		var jobs []string
		for _, c := range e.Changes {
			jobs = append(jobs, c.Job)
		}
		return fmt.Errorf("putting %s back: %w (memdiag confirm --restore retries)", english.List(jobs, "and"), err)
	}
	return nil
}
