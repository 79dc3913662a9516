package record

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// countSource records when it was read.
type countSource struct{ at []time.Time }

func (c *countSource) Name() string { return "count" }
func (c *countSource) Fill(ctx context.Context, s *Sample) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.at = append(c.at, s.Time)
	return nil
}

// In a synctest bubble the clock starts at 2000-01-01 00:00:00 UTC and
// moves only when every goroutine is blocked, so sample times are exact.
var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func TestSamplerLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countSource{}
		sp := &Sampler{Sources: []Source{src}, Interval: time.Second, Limit: 4}
		var seqs []int
		err := sp.Run(t.Context(), func(s *Sample) error { seqs = append(seqs, s.Seq); return nil })
		if err != nil {
			t.Fatal(err)
		}
		// At once, then at 1 s, 2 s, 3 s: four samples, the last at 3 s.
		if len(seqs) != 4 || seqs[3] != 3 || !src.at[3].Equal(t0.Add(3*time.Second)) {
			t.Errorf("seqs %v, times %v", seqs, src.at)
		}
		if time.Since(t0) != 3*time.Second {
			t.Errorf("Run returned at %s, want 3s", time.Since(t0))
		}
	})
}

// A run ended between ticks (the wrapped command exited at 2.5 s) gets a
// final sample right after, read with a context that is not cancelled.
func TestSamplerFinalAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countSource{}
		sp := &Sampler{Sources: []Source{src}, Interval: time.Second}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(2500*time.Millisecond, cancel)
		var got []*Sample
		emit := func(s *Sample) error { got = append(got, s); return nil }
		if err := sp.Run(ctx, emit); err != nil {
			t.Fatal(err)
		}
		if err := sp.Final(ctx, emit); err != nil {
			t.Fatal(err)
		}
		// The final sample waits finalSettle (50 ms) for late events.
		want := []time.Duration{0, time.Second, 2 * time.Second, 2550 * time.Millisecond}
		if len(got) != len(want) {
			t.Fatalf("%d samples, want %d", len(got), len(want))
		}
		for i, s := range got {
			if s.Seq != i || !s.Time.Equal(t0.Add(want[i])) || len(s.Errors) != 0 {
				t.Errorf("sample %d: seq %d at %s, errors %q; want at %s", i, s.Seq, s.Time.Sub(t0), s.Errors, want[i])
			}
		}
	})
}

// A final sample right after a tick waits FinalGap (100 ms at 1 s), so the
// last interval is not a sliver.
func TestSamplerFinalGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := &Sampler{Sources: []Source{&countSource{}}, Interval: time.Second}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel) // the same instant as the tick
		var got []*Sample
		emit := func(s *Sample) error { got = append(got, s); return nil }
		_ = sp.Run(ctx, emit)
		_ = sp.Final(ctx, emit)
		last, prev := got[len(got)-1], got[len(got)-2]
		if d := last.Time.Sub(prev.Time); d < 100*time.Millisecond {
			t.Errorf("final sample %s after the previous one, want at least 100ms", d)
		}
	})
}

// gate's preflight sample counts: Run does not sample again at once.
func TestSamplerRunAfterCollect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := &Sampler{Sources: []Source{&countSource{}}, Interval: time.Second, Limit: 3}
		first := sp.Collect(t.Context())
		var got []*Sample
		_ = sp.Run(t.Context(), func(s *Sample) error { got = append(got, s); return nil })
		if first.Seq != 0 || len(got) != 2 || got[0].Seq != 1 || !got[0].Time.Equal(t0.Add(time.Second)) {
			t.Errorf("first %d, then %d samples (first seq %d at %s)", first.Seq, len(got), got[0].Seq, got[0].Time.Sub(t0))
		}
	})
}

func TestSamplerEmitError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := &Sampler{Sources: []Source{&countSource{}}, Interval: time.Second}
		full := errors.New("no space left on device")
		n := 0
		err := sp.Run(t.Context(), func(s *Sample) error {
			if n++; n == 3 {
				return full
			}
			return nil
		})
		if !errors.Is(err, full) || n != 3 {
			t.Errorf("Run = %v after %d samples, want the emit error at the third", err, n)
		}
	})
}

type panicSource struct{}

func (panicSource) Name() string { return "broken" }
func (panicSource) Fill(ctx context.Context, s *Sample) error {
	panic("index out of range [3] with length 3")
}

// A source that panics fails its part of the sample, recorded in
// Sample.Errors; the other sources and the run go on.
func TestSamplerSourcePanics(t *testing.T) {
	src := &countSource{}
	sp := &Sampler{Sources: []Source{panicSource{}, src}, Interval: time.Second}
	s := sp.Collect(context.Background())
	if len(s.Errors) != 1 || s.Errors[0] != "broken: panic: index out of range [3] with length 3" || len(src.at) != 1 {
		t.Errorf("errors %q, other source read %d times; want the panic as an error and the other source read", s.Errors, len(src.at))
	}
}

// slowSource takes as long as its schedule says at given reads: a
// sampler starved of CPU, or stopped (SIGSTOP), for that long.
type slowSource struct {
	n     int
	delay map[int]time.Duration // read number → how long it takes
}

func (s *slowSource) Name() string { return "slow" }
func (s *slowSource) Fill(ctx context.Context, _ *Sample) error {
	time.Sleep(s.delay[s.n])
	s.n++
	return nil
}

// Samples are due on the ticker's grid: one taken more than half an
// interval after its slot is late, slots that got no sample are missed,
// and the sample after them carries the gap.
func TestSamplerGaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Read 2 (the sample at 2 s) takes 1.6 s: the tick at 3 s is
		// taken at 3.6 s, late by 0.6 s. Read 5 (at 5 s) takes 3.2 s: the
		// slots at 6 s and 7 s get none, the sample at 8.2 s is 0.2 s
		// after its slot. Read 7 (9 s) takes 0.4 s: not late (the 10 s
		// tick is taken at 10 s).
		src := &slowSource{delay: map[int]time.Duration{2: 1600 * time.Millisecond, 5: 3200 * time.Millisecond, 7: 400 * time.Millisecond}}
		sp := &Sampler{Sources: []Source{src}, Interval: time.Second, Limit: 12}
		var got []*Sample
		if err := sp.Run(t.Context(), func(s *Sample) error { got = append(got, s); return nil }); err != nil {
			t.Fatal(err)
		}
		at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
		wantTimes := []int{0, 1000, 2000, 3600, 4000, 5000, 8200, 9000, 10000, 11000}
		wantGaps := map[int]*Gap{
			3: {Type: TypeGap, Start: at(2000), End: at(3600), Late: 600 * time.Millisecond, Reason: GapLate},
			6: {Type: TypeGap, Start: at(5000), End: at(8200), Missed: 2, Reason: GapMissed},
		}
		if len(got) != len(wantTimes) {
			t.Fatalf("%d samples, want %d", len(got), len(wantTimes))
		}
		for i, s := range got {
			if !s.Time.Equal(at(wantTimes[i])) {
				t.Errorf("sample %d at %s, want %dms", i, s.Time.Sub(t0), wantTimes[i])
			}
			if d := cmp.Diff(wantGaps[i], s.Gap); d != "" {
				t.Errorf("sample %d: gap (-want +got):\n%s", i, d)
			}
		}
		if sp.Late() != 1 || sp.Missed() != 2 {
			t.Errorf("Late() %d, Missed() %d; want 1, 2", sp.Late(), sp.Missed())
		}
		if u := wantGaps[6].Unseen(time.Second); u != 2200*time.Millisecond {
			t.Errorf("Unseen = %s, want 2.2s", u)
		}
	})
}

// --duration is wall time on the grid, not a count of samples: a run
// whose samples were missed ends at the slot of its last sample, with
// fewer samples, never later.
func TestSamplerLimitIsTheGrid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &slowSource{delay: map[int]time.Duration{2: 3200 * time.Millisecond}}
		sp := &Sampler{Sources: []Source{src}, Interval: time.Second, Limit: 6}
		var got []time.Duration
		if err := sp.Run(t.Context(), func(s *Sample) error { got = append(got, s.Time.Sub(t0)); return nil }); err != nil {
			t.Fatal(err)
		}
		// 0, 1 s, 2 s (taking until 5.2 s), then the slot at 5 s, taken at
		// 5.2 s: the last slot of a 5 s run.
		want := []time.Duration{0, time.Second, 2 * time.Second, 5200 * time.Millisecond}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("sample times (-want +got):\n%s", d)
		}
		if time.Since(t0) != 5200*time.Millisecond {
			t.Errorf("Run returned at %s, want 5.2s", time.Since(t0))
		}
	})
}

// A sample taken after the run's last slot, the sampler starved past the
// end, stands for that last slot, late: only the slots within the run
// are missed. Without a limit every slot passed is.
func TestGridPlaceStopsAtTheRunsEnd(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	g := grid{start: t0, every: 10 * time.Millisecond}
	gap := g.place(t0, t0.Add(70*time.Millisecond), 3)
	if gap == nil || g.slot != 3 || gap.Missed != 2 || gap.Late != 40*time.Millisecond || gap.Reason != GapMissed {
		t.Errorf("limit 4 samples: slot %d, gap %+v; want slot 3, 2 missed, 40ms late", g.slot, gap)
	}
	g = grid{start: t0, every: 10 * time.Millisecond}
	if gap := g.place(t0, t0.Add(70*time.Millisecond), 0); gap == nil || g.slot != 7 || gap.Missed != 6 || gap.Late != 0 {
		t.Errorf("no limit: slot %d, gap %+v; want slot 7, 6 missed, on time", g.slot, gap)
	}
}
