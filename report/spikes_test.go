package report

import (
	"strings"
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
		{23, []correlate.Episode{ep(true), ep(true), ep(false)}, 0, "23 spike intervals in 2 of the 3 episodes"},
		{23, []correlate.Episode{ep(true), ep(true), ep(false)}, 2, "23 spike intervals in 2 of the 3 episodes and 2 spikes outside them"},
		{23, []correlate.Episode{ep(true), ep(true)}, 2, "23 spike intervals in 2 episodes and 2 spikes outside them"},
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

// Spikes outside episodes that came with I/O bursts say so, instead of
// only "look elsewhere (CPU, network, …)" (trial s8 F-6; the real
// recording correlate/testdata/real/trial-s8-tenant: another group's
// loop reads gigabytes every 30 s, the analysed group does not stall).
func TestLoneSpikesWithBursts(t *testing.T) {
	r := analyzeFile(t, "real/trial-s8-tenant.jsonl.gz", correlate.Options{})
	if len(r.Episodes) != 0 || len(r.LoneSpikes) != 7 || len(r.IOBursts) == 0 {
		t.Fatalf("%d episodes, %d spikes, %d I/O bursts; want 0, 7 and some", len(r.Episodes), len(r.LoneSpikes), len(r.IOBursts))
	}
	var b strings.Builder
	verdict(&b, &r, false, "-")
	if want := "No episode: 7 latency spikes, but no memory-pressure signal rose with them; 5 of them came with an I/O burst (disk or reclaim activity; see below), where chance would give 2.4 (the bursts span 35% of the recording): look there"; !strings.Contains(b.String(), want) {
		t.Errorf("verdict lacks %q:\n%s", want, b.String())
	}
	// The same spikes beside bursts spanning most of the recording: as
	// many would come with one by chance, and it says so (a new user's
	// trial: 12 bursts in 62 s, "6 of them came with an I/O burst: look
	// there", while the cause was the service's listen backlog).
	// correlate.WeighBursts judges; the verdict only says its numbers.
	wide := r
	wide.IOBursts = []correlate.IOBurst{{Start: r.Start, End: r.End}}
	wide.BurstLead = correlate.WeighBursts(&wide)
	b.Reset()
	verdict(&b, &wide, false, "-")
	if want := "7 of them came with an I/O burst, about as many as chance would give (7.0; the bursts span 100% of the recording): look elsewhere"; !strings.Contains(b.String(), want) {
		t.Errorf("verdict with bursts all along lacks %q:\n%s", want, b.String())
	}
	// Without bursts the sentence is as before.
	r.IOBursts, r.BurstLead = nil, nil
	b.Reset()
	verdict(&b, &r, false, "-")
	if want := "no memory-pressure signal rose with them; look elsewhere (CPU, network, the service itself)."; !strings.Contains(b.String(), want) {
		t.Errorf("verdict without bursts lacks %q:\n%s", want, b.String())
	}
}

// With no culprit and bursts enough for a period, the verdict points to
// --require none (a new user's trial: a job every 12 s whose stall stayed
// under the thresholds was "no culprit" by default, named at 0.80 with
// --require none); not with fewer bursts, nor beside a culprit.
func TestIOBurstsPointToRequireNone(t *testing.T) {
	r := analyzeFile(t, "real/trial-s8-tenant.jsonl.gz", correlate.Options{})
	const hint = "`memdiag analyze --require none` judges them as episodes too"
	text := func(r correlate.Result) string {
		var b strings.Builder
		verdict(&b, &r, false, "-")
		return b.String()
	}
	if len(r.Culprits) != 0 || len(r.IOBursts) < ioBurstsHint || !strings.Contains(text(r), hint) {
		t.Errorf("%d culprits, %d I/O bursts; verdict without the hint:\n%s", len(r.Culprits), len(r.IOBursts), text(r))
	}
	few := r
	few.IOBursts = r.IOBursts[:ioBurstsHint-1]
	if strings.Contains(text(few), hint) {
		t.Errorf("the hint with %d bursts", len(few.IOBursts))
	}
	named := r
	named.Culprits = []correlate.Culprit{{Name: "backup.timer", Kind: correlate.KindTimer}}
	if strings.Contains(text(named), hint) {
		t.Error("the hint beside a culprit")
	}
}
