package report

import (
	"testing"

	"github.com/memdiag/memdiag/correlate"
)

// The header's spike count says where the spike intervals are, so that
// a count of intervals is not read as all in episodes when some spikes
// lie outside them (trial s8 F-1: "23 spike intervals in 6 episodes"
// with 2 of the 23 outside).
func TestSpikesWhere(t *testing.T) {
	ep := func(spike bool) correlate.Episode { return correlate.Episode{Spike: spike} }
	for _, c := range []struct {
		spikes int
		eps    []correlate.Episode
		lone   int
		want   string
	}{
		{23, []correlate.Episode{ep(true), ep(true), ep(false)}, 0, "23 spike intervals in 2 episodes"},
		{23, []correlate.Episode{ep(true), ep(true), ep(false)}, 2, "23 spike intervals in 2 episodes and 2 spikes outside them"},
		{1, []correlate.Episode{ep(true)}, 1, "1 spike interval in 1 episode and 1 spike outside them"},
		{5, []correlate.Episode{ep(false)}, 2, "5 spike intervals, all outside episodes (2 spikes)"},
		{0, nil, 0, "0 spike intervals in 0 episodes"},
	} {
		r := &correlate.Result{Spikes: c.spikes, Episodes: c.eps, LoneSpikes: make([]correlate.Spike, c.lone)}
		if got := spikesWhere(r); got != c.want {
			t.Errorf("spikes %d, lone %d: %q, want %q", c.spikes, c.lone, got, c.want)
		}
	}
}
