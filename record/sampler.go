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

// Sampler reads every Source once per Interval.
type Sampler struct {
	Sources  []Source
	Interval time.Duration
	Logger   *slog.Logger
	Now      func() time.Time

	failed map[string]bool
}

// Collect takes one sample now.
func (sp *Sampler) Collect(ctx context.Context, seq int) *Sample {
	if sp.Now == nil {
		sp.Now = time.Now
	}
	if sp.failed == nil {
		sp.failed = map[string]bool{}
	}
	s := &Sample{Type: TypeSample, Seq: seq, Time: sp.Now()}
	for _, src := range sp.Sources {
		if err := src.Fill(ctx, s); err != nil {
			s.Errors = append(s.Errors, fmt.Sprintf("%s: %v", src.Name(), err))
			if !sp.failed[src.Name()] && sp.Logger != nil {
				sp.Logger.Warn(fmt.Sprintf("%s: %v; further failures are recorded in the samples only", src.Name(), err))
			}
			sp.failed[src.Name()] = true
		}
	}
	return s
}

// Run samples at once and then every Interval until ctx is done or emit
// returns an error; emit receives each sample in order. Run returns nil when
// ctx ends, and emit's error otherwise. Ticks missed because sampling took
// longer than the interval are dropped, not queued.
func (sp *Sampler) Run(ctx context.Context, emit func(*Sample) error) error {
	if sp.Interval <= 0 {
		return errors.New("sampler: interval must be positive")
	}
	t := time.NewTicker(sp.Interval)
	defer t.Stop()
	for seq := 0; ; seq++ {
		if err := emit(sp.Collect(ctx, seq)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
