package analysis

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/timers"
)

// TestPairAnalyze: each side is Input.Analyze of its recording, traces
// come in Before, After order, and a side's bad window is a usage error
// naming that side's flag, not --from.
func TestPairAnalyze(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	co := correlate.Options{Project: timers.Project}
	ctx := context.Background()
	want, wantTrace, err := Input{Paths: []string{unionPath}}.Analyze(ctx, ios, "", LatencyFlags{}, co, true)
	if err != nil {
		t.Fatal(err)
	}
	p := Pair{Before: Side{Path: unionPath}, After: Side{Path: unionPath}}
	res, traces, err := p.Analyze(ctx, ios, LatencyFlags{}, co, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res {
		if len(res[i].Episodes) != len(want.Episodes) || res[i].Spikes != want.Spikes {
			t.Errorf("side %d: %d episodes, %d spikes; want %d, %d", i, len(res[i].Episodes), res[i].Spikes, len(want.Episodes), want.Spikes)
		}
	}
	if len(traces) != 2 || wantTrace == nil || len(traces[1].End) != len(wantTrace.End) {
		t.Errorf("%d traces; want 2 of %d intervals", len(traces), len(wantTrace.End))
	}
	if _, traces, _ := p.Analyze(ctx, ios, LatencyFlags{}, co, false); traces != nil {
		t.Errorf("traces %v without trace", traces)
	}
	for i, side := range []string{"--before-window", "--after-window"} {
		p := Pair{Before: Side{Path: unionPath}, After: Side{Path: unionPath}}
		[]*Side{&p.Before, &p.After}[i].Window = "not a time"
		_, _, err := p.Analyze(ctx, ios, LatencyFlags{}, co, false)
		var ue *usage.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), side) {
			t.Errorf("bad %s: err %v; want a usage error naming it", side, err)
		}
	}
}
