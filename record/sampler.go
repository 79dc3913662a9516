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
	// Limit, when > 0, ends Run once this many samples have been taken
	// (watch and gate --duration: Duration/Interval + 1, the first at
	// once).
	Limit int

	failed map[string]bool
	next   int       // Seq of the next sample
	last   time.Time // when the previous sample was taken
}

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
// sampling took longer than the interval are dropped, not queued.
func (sp *Sampler) Run(ctx context.Context, emit func(*Sample) error) error {
	if sp.Interval <= 0 {
		return errors.New("sampler: interval must be positive")
	}
	if sp.next == 0 {
		if err := emit(sp.Collect(ctx)); err != nil {
			return err
		}
	}
	t := time.NewTicker(sp.Interval)
	defer t.Stop()
	for sp.Limit <= 0 || sp.next < sp.Limit {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := emit(sp.Collect(ctx)); err != nil {
			return err
		}
	}
	return nil
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
