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
	// Running, when set, finds the jobs' instances running now: before
	// every block the experiment waits for those to end, at most
	// SettleMax, so that a run started before a hold does not count as
	// B's, nor one that systemd started when a hold ended (see Run) as
	// A's. Waiting, when set, is told before it waits.
	Running   Running
	SettleMax time.Duration
	Waiting   func(b Block, pids []int, max time.Duration)
}

// Run runs every block in order. The jobs are held off only during B
// blocks: held when a B block begins and put back when the next block is
// an A block or the run ends — two B blocks in a row (the ABBA order's
// pair boundary) stay held between them, since starting a timer again
// would let systemd run its job at once (below) into the second. They
// are put back on every way out — the load failing, the context
// cancelled (Ctrl-C, SIGTERM) — with a context of their own, so a
// cancelled run still undoes its changes. It returns the blocks measured
// so far with the first error.
//
// A systemd timer started again after an elapse passed while it was
// stopped fires at once (systemd issues #31231, #40949: it schedules
// from the timer's previous activation, not from the start), so the run
// that the hold put off happens when the hold ends. Before an A block
// that follows a hold, memdiag waits for the jobs' instances running
// then to end, as it does before a B block for those started before the
// hold: that run belongs to neither arm.
func (e *Experiment) Run(ctx context.Context) (done []Measurement, err error) {
	held := false
	defer func() {
		if held {
			err = errors.Join(err, e.release())
		}
	}()
	for _, b := range e.Blocks {
		released := false
		switch {
		case b.Arm == HeldOff && !held:
			if err := e.hold(ctx, b); err != nil {
				return done, err
			}
			held = true
		case b.Arm != HeldOff && held:
			held, released = false, true
			if err := e.release(); err != nil {
				return done, err
			}
		}
		m, berr := e.block(ctx, b, b.Arm == HeldOff || released)
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

// hold makes every change for B block b, undoing those made when one
// fails.
func (e *Experiment) hold(ctx context.Context, b Block) error {
	for _, c := range e.Changes {
		if err := e.State.Hold(ctx, c); err != nil {
			what := "holding " + c.Job + " off"
			if c.Fix != "" {
				what = "putting " + c.Fix + " in place for " + c.Job
			}
			return errors.Join(fmt.Errorf("block %d: %s: %w", b.Index+1, what, err), e.release())
		}
	}
	return nil
}

// block runs one block: first, when settle is set and the jobs'
// instances can be found, it waits for those running now to end
// (Measurement.Settled): before a B block, and before an A block that a
// hold's end begins.
func (e *Experiment) block(ctx context.Context, b Block, settle bool) (m Measurement, err error) {
	var waited time.Duration
	var left []int
	if settle && e.Running != nil {
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
