package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Source fills its part of a Sample. Sources never print; the Sampler
// reports a failing source once and records each failure in Sample.Errors.
type Source interface {
	Name() string
	Fill(ctx context.Context, s *Sample) error
}

// Sampler reads every Source once per Interval. It numbers the samples it
// takes (Sample.Seq) in order, whichever of Collect, Run and Final takes
// them.
type Sampler struct {
	Sources  []Source
	Interval time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
	// Limit, when > 0, ends Run once the sample due in slot Limit−1 of
	// the grid (at Limit−1 intervals) has been taken, or a later one:
	// watch and gate --duration, Duration/Interval + 1 samples, the first
	// at once. A run whose samples were missed takes fewer, never longer.
	Limit int

	failed map[string]bool
	next   int       // Seq of the next sample
	last   time.Time // when the previous sample was taken

	late, missed int // samples taken more than half an interval late; samples due and not taken
}

// Late is how many samples Run took more than half an interval after
// they were due, and Missed how many were due and never taken: both are
// recorded as a Sample.Gap on the sample that ends them.
func (sp *Sampler) Late() int   { return sp.late }
func (sp *Sampler) Missed() int { return sp.missed }

// Taken is how many samples the Sampler has taken.
func (sp *Sampler) Taken() int { return sp.next }

// Collect takes the next sample now.
func (sp *Sampler) Collect(ctx context.Context) *Sample {
	if sp.Now == nil {
		sp.Now = time.Now
	}
	if sp.failed == nil {
		sp.failed = map[string]bool{}
	}
	s := &Sample{Type: TypeSample, Seq: sp.next, Time: sp.Now()}
	sp.next++
	sp.last = s.Time
	for _, src := range sp.Sources {
		if err := fill(ctx, src, s); err != nil {
			s.Errors = append(s.Errors, fmt.Sprintf("%s: %v", src.Name(), err))
			if !sp.failed[src.Name()] && sp.Logger != nil {
				sp.Logger.Warn(fmt.Sprintf("%s: %v; further failures are recorded in the samples only", src.Name(), err))
			}
			sp.failed[src.Name()] = true
		}
	}
	return s
}

// fill runs one source. A source that panics (a parser meeting input it
// did not expect) fails this sample like any error, rather than taking
// the recorder down without its end line.
func fill(ctx context.Context, src Source, s *Sample) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return src.Fill(ctx, s)
}

// Run samples at once (unless a sample was already taken: gate's
// preflight) and then every Interval until ctx is done, Limit samples
// were taken, or emit returns an error; emit receives each sample in
// order. Run returns nil when ctx ends or the limit is reached (tell them
// apart with ctx.Err), and emit's error otherwise. Ticks missed because
// sampling took longer than the interval (or the process did not run)
// are dropped, not queued, and recorded: the samples after the first are
// due on the ticker's grid (its start + k × Interval), and one taken more
// than half an interval after its slot, or after slots that got no
// sample, carries a Gap saying so.
func (sp *Sampler) Run(ctx context.Context, emit func(*Sample) error) error {
	if sp.Interval <= 0 {
		return errors.New("sampler: interval must be positive")
	}
	if sp.Now == nil {
		sp.Now = time.Now
	}
	if sp.next == 0 {
		if err := emit(sp.Collect(ctx)); err != nil {
			return err
		}
	}
	// The grid is read before the ticker starts, so that every tick is at
	// or after its slot.
	g := grid{start: sp.Now(), every: sp.Interval}
	t := time.NewTicker(sp.Interval)
	defer t.Stop()
	for sp.Limit <= 0 || g.slot < sp.Limit-1 {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		prev := sp.last
		s := sp.Collect(ctx)
		if gap := g.place(prev, s.Time, sp.Limit-1); gap != nil {
			s.Gap = gap
			sp.missed += gap.Missed
			if gap.Late > 0 {
				sp.late++
			}
		}
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}

// grid is when Run's samples are due: start + k × every, one per slot k.
type grid struct {
	start time.Time
	every time.Duration
	slot  int // the slot of the last sample placed; 0 is start's
}

// place puts a sample taken at t (the previous one at prev) in the last
// slot due at or before t, but no later than the run's last slot (last;
// 0 or less: none), and returns the gap it ends: the slots since the
// previous sample that got none, and its lateness past its slot when
// more than half an interval; nil when it came on time. A sample taken
// after the run's end, the sampler starved past it, is its last slot's,
// late: the slots after the end were never due.
func (g *grid) place(prev, t time.Time, last int) *Gap {
	k := int(t.Sub(g.start) / g.every)
	if k <= g.slot { // a clock that does not move (a test's): the next slot
		k = g.slot + 1
	}
	if last > 0 && k > last {
		k = max(last, g.slot+1)
	}
	missed := k - g.slot - 1
	late := t.Sub(g.start.Add(time.Duration(k) * g.every))
	g.slot = k
	if late <= g.every/2 {
		late = 0
	}
	if missed == 0 && late == 0 {
		return nil
	}
	gap := &Gap{Type: TypeGap, Start: prev, End: t, Missed: missed, Late: late, Reason: GapMissed}
	if missed == 0 {
		gap.Reason = GapLate
	}
	return gap
}

// FinalGap is the least time between the last sample of Run and the one
// Final takes, so that the last interval is not a sliver whose rates are
// noise.
func (sp *Sampler) FinalGap() time.Duration { return min(sp.Interval/10, 100*time.Millisecond) }

// finalSettle is how long Final waits at least: the kernel sends a
// process's exit events before its parent learns of the exit, but the
// listener's goroutine still has to read them from its socket.
const finalSettle = 50 * time.Millisecond

// Final takes one last sample after Run has ended because ctx was done
// (the wrapped command exited, Ctrl-C, SIGTERM, SIGHUP), so what happened
// after the last tick — requests, process exec/exit events, the command's
// own exit — is recorded rather than lost. It waits finalSettle, and
// until FinalGap after the previous sample, and it reads with a context
// that is not cancelled (ctx's values only), since the run's context is
// over by now.
func (sp *Sampler) Final(ctx context.Context, emit func(*Sample) error) error {
	if sp.Now == nil {
		sp.Now = time.Now
	}
	wait := finalSettle
	if sp.next > 0 {
		wait = max(wait, sp.last.Add(sp.FinalGap()).Sub(sp.Now()))
	}
	time.Sleep(wait)
	return emit(sp.Collect(context.WithoutCancel(ctx)))
}
