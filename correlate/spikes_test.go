package correlate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// A latency spike between two memory-pressure episodes does not make
// them one: episodes are built from the kernel signals alone, so they are
// the same with a latency source or without one (a spike bridged two
// stalls 3 s apart in a real recording, and the job's share went from 6
// of 7 episodes to 6 of 6). The spike adjoining each stall marks both as
// spike episodes.
func TestSpikeDoesNotBridgeEpisodes(t *testing.T) {
	s := synth{dur: 30 * time.Minute, bursts: []burst{
		{at: at("12:10:00"), dur: 30 * time.Second, comm: "dd", pid: 1001, writeBps: 60 * mib, latency: 2 * time.Second},
		// Calm kernel signals, slow service: 12:10:30-12:11:30.
		{at: at("12:10:30"), dur: 60 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
		{at: at("12:11:30"), dur: 30 * time.Second, comm: "dd", pid: 1002, writeBps: 60 * mib, latency: 2 * time.Second},
		// A spike far from any stall stays a spike outside episodes.
		{at: at("12:20:00"), dur: 30 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
	}}
	withLat := Analyze(s.build(t), Options{})
	s.noLatency = true
	noLat := Analyze(s.build(t), Options{})

	type span struct {
		Start, End string
		Spike      bool
	}
	spans := func(r Result) []span {
		var out []span
		for _, e := range r.Episodes {
			out = append(out, span{e.Start.Format("15:04:05"), e.End.Format("15:04:05"), e.Spike})
		}
		return out
	}
	want := []span{{"12:10:00", "12:10:30", true}, {"12:11:30", "12:12:00", true}}
	got := spans(withLat)
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("episodes with latency = %v, want %v", got, want)
	}
	// Without latency the boundaries are the same, with no spike.
	got = spans(noLat)
	if len(got) != 2 || got[0].Start != want[0].Start || got[0].End != want[0].End ||
		got[1].Start != want[1].Start || got[1].End != want[1].End {
		t.Errorf("episodes without latency = %v, want the same boundaries as %v", got, want)
	}
	if len(withLat.LoneSpikes) != 1 || !withLat.LoneSpikes[0].Start.Equal(at("12:20:00")) ||
		withLat.LoneSpikes[0].LatencyPeak != 1500*time.Millisecond {
		t.Errorf("spikes outside episodes = %+v, want one at 12:20:00 of 1.5s", withLat.LoneSpikes)
	}
	// Each episode keeps its stall peaks, some ≥ full (the builder's
	// bursts stall 20 % some, 5 % full, ±10 %).
	for _, e := range withLat.Episodes {
		if len(e.Stall) != 2 || e.Stall[0] < 0.18 || e.Stall[0] > 0.22 || e.Stall[1] < 0.045 || e.Stall[1] > 0.055 {
			t.Errorf("episode %d stall peaks = %v, want some ≈ 0.2, full ≈ 0.05", e.Index, e.Stall)
		}
	}
	// The bridge's latency counts for the episode it adjoins.
	if len(withLat.Episodes) == 2 && withLat.Episodes[0].LatencyPeak != 2*time.Second {
		t.Errorf("episode 1 latency peak = %s, want 2s", withLat.Episodes[0].LatencyPeak)
	}
	// Each episode's spike span holds the bridge interval nearest it
	// (30 s intervals, a gap of one): 12:10:30-12:11:00 is episode 1's
	// (0 s away), 12:11:00-12:11:30 episode 2's (0 s away, 30 s from
	// episode 1), so the spans reach past the episodes' own.
	if len(withLat.Episodes) == 2 {
		for i, want := range [][2]string{{"12:10:00", "12:11:00"}, {"12:11:00", "12:12:00"}} {
			e := withLat.Episodes[i]
			if got := [2]string{e.SpikeStart.Format("15:04:05"), e.SpikeEnd.Format("15:04:05")}; got != want {
				t.Errorf("episode %d spike span = %v, want %v", i+1, got, want)
			}
		}
	}
	for _, e := range noLat.Episodes {
		if !e.SpikeStart.IsZero() || !e.SpikeEnd.IsZero() {
			t.Errorf("episode %d without latency has a spike span %s-%s", e.Index+1, e.SpikeStart, e.SpikeEnd)
		}
	}
}

// TestSpikeBeforeStallIsNotItsEffect (issue 30.10): a latency spike that
// ended an interval or more before the stall rose is not the episode's
// (effect before cause): it stays a spike outside episodes. One in the
// interval just before the episode still counts (a stall can begin in
// it without crossing a threshold yet), and so does one in the
// interval after the episode (recovery).
func TestSpikeBeforeStallIsNotItsEffect(t *testing.T) {
	s := synth{interval: 10 * time.Second, dur: 30 * time.Minute, bursts: []burst{
		// Two intervals of slow service, then calm, then the stall.
		{at: at("12:09:30"), dur: 20 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
		{at: at("12:10:00"), dur: 30 * time.Second, comm: "dd", pid: 1001, writeBps: 60 * mib},
		// Slow in the interval just before a second stall: its spike.
		{at: at("12:19:50"), dur: 10 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
		{at: at("12:20:00"), dur: 30 * time.Second, comm: "dd", pid: 1002, writeBps: 60 * mib},
	}}
	r := Analyze(s.build(t), Options{})
	if len(r.Episodes) != 2 {
		t.Fatalf("%d episodes, want 2", len(r.Episodes))
	}
	if r.Episodes[0].Spike {
		t.Errorf("episode at %s took the spike of 12:09:30-12:09:50, which ended before its stall", r.Episodes[0].Start.Format("15:04:05"))
	}
	if len(r.LoneSpikes) != 1 || !r.LoneSpikes[0].Start.Equal(at("12:09:30")) {
		t.Errorf("spikes outside episodes %+v, want the one at 12:09:30", r.LoneSpikes)
	}
	if e := r.Episodes[1]; !e.Spike || !e.SpikeStart.Equal(at("12:19:50")) {
		t.Errorf("episode at %s: spike %v from %s, want its spike from 12:19:50", e.Start.Format("15:04:05"), e.Spike, e.SpikeStart.Format("15:04:05"))
	}
}

// TestSlowdownUnderWayBeforeStallIsNotItsEffect (issue 30.10, its second
// example): latency that was already high two intervals before the
// stall rose and runs on into the episode is not the episode's effect —
// not even its part inside the episode: it is one spike outside
// episodes, and the episode is no spike episode. A slowdown that begins
// in the interval just before a stall is still the stall's.
func TestSlowdownUnderWayBeforeStallIsNotItsEffect(t *testing.T) {
	s := synth{interval: 10 * time.Second, dur: 30 * time.Minute, bursts: []burst{
		// Slow from 12:09:40, 20 s before the stall, to 12:10:10, inside it.
		{at: at("12:09:40"), dur: 30 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
		{at: at("12:10:00"), dur: 30 * time.Second, comm: "dd", pid: 1001, writeBps: 60 * mib},
		// Slow from 12:19:50, the interval just before the stall, into it.
		{at: at("12:19:50"), dur: 30 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
		{at: at("12:20:00"), dur: 30 * time.Second, comm: "dd", pid: 1002, writeBps: 60 * mib},
	}}
	r := Analyze(s.build(t), Options{})
	if len(r.Episodes) != 2 {
		t.Fatalf("%d episodes, want 2", len(r.Episodes))
	}
	if e := r.Episodes[0]; e.Spike || e.LatencyPeak >= time.Second {
		t.Errorf("episode at %s: spike %v from %s, latency peak %s; want none: the slowdown began 20 s before its stall",
			e.Start.Format("15:04:05"), e.Spike, e.SpikeStart.Format("15:04:05"), e.LatencyPeak)
	}
	if len(r.LoneSpikes) != 1 || !r.LoneSpikes[0].Start.Equal(at("12:09:40")) || !r.LoneSpikes[0].End.Equal(at("12:10:10")) {
		t.Errorf("spikes outside episodes %+v, want one from 12:09:40 to 12:10:10", r.LoneSpikes)
	}
	if e := r.Episodes[1]; !e.Spike || !e.SpikeStart.Equal(at("12:19:50")) {
		t.Errorf("episode at %s: spike %v from %s, want its spike from 12:19:50", e.Start.Format("15:04:05"), e.Spike, e.SpikeStart.Format("15:04:05"))
	}
}

// TestSlowdownGoingOnThroughLaterStall (issue 30.10, the case a run that
// began with an earlier episode left open): a slowdown that a stall
// began, and that went on at the same level for three intervals after
// it, through a second stall, is not the second stall's effect: its part
// in the second episode is a spike outside episodes, and that episode no
// spike episode. When the second stall makes it worse, it is that
// episode's too (TestSpikeDoesNotBridgeEpisodes, with a bridge).
func TestSlowdownGoingOnThroughLaterStall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second time.Duration // the latency in the second stall
		spike  bool
	}{
		{"same level", 1500 * time.Millisecond, false},
		{"worse", 5 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := synth{interval: 10 * time.Second, dur: 30 * time.Minute, bursts: []burst{
				{at: at("12:10:00"), dur: 30 * time.Second, comm: "dd", pid: 1001, writeBps: 60 * mib, latency: 2 * time.Second},
				// Slow on, calm kernel signals, 12:10:30-12:11:10.
				{at: at("12:10:30"), dur: 40 * time.Second, noSignal: true, latency: 1500 * time.Millisecond},
				{at: at("12:11:10"), dur: 30 * time.Second, comm: "dd", pid: 1002, writeBps: 60 * mib, latency: tc.second},
			}}
			r := Analyze(s.build(t), Options{})
			if len(r.Episodes) != 2 {
				t.Fatalf("%d episodes, want 2", len(r.Episodes))
			}
			if e := r.Episodes[0]; !e.Spike || e.LatencyPeak != 2*time.Second {
				t.Errorf("first episode: spike %v, latency peak %s; want its spike of 2s", e.Spike, e.LatencyPeak)
			}
			e := r.Episodes[1]
			if e.Spike != tc.spike {
				t.Errorf("second episode at %s: spike %v from %s, want %v", e.Start.Format("15:04:05"), e.Spike, e.SpikeStart.Format("15:04:05"), tc.spike)
			}
			// 12:10:50-12:11:00 is a spike outside episodes either way (20 s
			// after the first, before the interval just before the second);
			// without the second stall's part, it runs to that part's end.
			want := [2]time.Time{at("12:10:50"), at("12:11:00")}
			if !tc.spike {
				want[1] = at("12:11:40")
			}
			if len(r.LoneSpikes) != 1 || !r.LoneSpikes[0].Start.Equal(want[0]) || !r.LoneSpikes[0].End.Equal(want[1]) {
				t.Errorf("spikes outside episodes %+v, want one from %s to %s", r.LoneSpikes, want[0].Format("15:04:05"), want[1].Format("15:04:05"))
			}
		})
	}
}

// TestStallMadeSlowdownWorse (issue 30.10, from a review of the rule): a
// later stall gets its part of a slowdown under way before it only if
// it made it worse, by the detectors' own measures against the
// slowdown's level on its own before the stall: twice its median
// latency and beyond its spread, or twice its share of failures.
func TestStallMadeSlowdownWorse(t *testing.T) {
	dd := func(at time.Time, pid int, lat time.Duration) burst {
		return burst{at: at, dur: 30 * time.Second, comm: "dd", pid: pid, writeBps: 60 * mib, latency: lat}
	}
	slow := func(at time.Time, dur, lat time.Duration) burst {
		return burst{at: at, dur: dur, noSignal: true, latency: lat}
	}
	// p99 sets the latency of the interval ending at end (synth's bursts
	// are exact; this is how a slowdown near the threshold flickers).
	p99 := func(end string, v time.Duration) func(*record.Recording) {
		return func(rec *record.Recording) {
			for i := range rec.Samples {
				if sm := &rec.Samples[i]; sm.Time.Equal(at(end)) && sm.Latency != nil {
					sm.Latency.P99 = v
				}
			}
		}
	}
	noLat := func(at time.Time, pid int) burst { return dd(at, pid, 0) }
	// noRequests empties the intervals ending in (from, to].
	noRequests := func(from, to time.Time) func(*record.Recording) {
		return func(rec *record.Recording) {
			for i := range rec.Samples {
				if sm := &rec.Samples[i]; sm.Latency != nil && sm.Time.After(from) && !sm.Time.After(to) {
					*sm.Latency = record.Latency{}
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		bursts []burst
		o      Options
		edits  []func(*record.Recording)
		spike  []bool // each episode's
	}{
		// 1.5 s → 1.515 s: a steady slowdown's jitter is no rise.
		{name: "jitter", bursts: []burst{dd(at("12:10:00"), 1001, 2*time.Second), slow(at("12:10:30"), 40*time.Second, 1500*time.Millisecond),
			dd(at("12:11:10"), 1002, 1515*time.Millisecond)}, spike: []bool{true, false}},
		// The level before is the slowdown's own (1 s), not the first
		// stall's recovery (4.5 s): 4 s is worse.
		{name: "decaying tail", bursts: []burst{dd(at("12:10:00"), 1001, 5*time.Second), slow(at("12:10:30"), 10*time.Second, 4500*time.Millisecond),
			slow(at("12:10:40"), 30*time.Second, time.Second), dd(at("12:11:10"), 1002, 4*time.Second)}, spike: []bool{true, true}},
		// Through a second stall at the same level, made worse in a third.
		{name: "three stalls", bursts: []burst{dd(at("12:10:00"), 1001, 2*time.Second), slow(at("12:10:30"), 40*time.Second, 1500*time.Millisecond),
			dd(at("12:11:10"), 1002, 1500*time.Millisecond), slow(at("12:11:40"), 40*time.Second, 1500*time.Millisecond),
			dd(at("12:12:20"), 1003, 5*time.Second)}, spike: []bool{true, false, true}},
		// Begun 20 s before the first stall, the same through it, then
		// more than tripled by the second.
		{name: "began before the first", bursts: []burst{slow(at("12:09:40"), 90*time.Second, 1500*time.Millisecond),
			dd(at("12:10:00"), 1001, 1500*time.Millisecond), dd(at("12:11:10"), 1002, 5*time.Second)}, spike: []bool{false, true}},
		// The level just before is the slowdown's latest (300 ms), not its
		// earlier 1.5 s: back to 1.5 s in the stall is worse (5×).
		{name: "eased, then worse again", bursts: []burst{slow(at("12:09:00"), 30*time.Second, 1500*time.Millisecond),
			slow(at("12:09:30"), 30*time.Second, 300*time.Millisecond), slow(at("12:10:00"), 30*time.Second, 1500*time.Millisecond),
			noLat(at("12:10:00"), 1001)}, spike: []bool{true}},
		// 1 s on its own, tripled by a first stall, 3 s after it and
		// through a second: the second's level before is 3 s, not 1 s.
		{name: "a lead-in at another level", bursts: []burst{slow(at("12:09:10"), 30*time.Second, time.Second),
			slow(at("12:09:40"), 110*time.Second, 3*time.Second), noLat(at("12:09:50"), 1001),
			{at: at("12:11:10"), dur: 20 * time.Second, comm: "dd", pid: 1002, writeBps: 60 * mib}}, spike: []bool{true, false}},
		// 1 s → 2.2 s is under the --spike factor (3×, or 5×): not worse.
		{name: "under the spike factor", bursts: []burst{slow(at("12:09:30"), 30*time.Second, time.Second),
			slow(at("12:10:00"), 30*time.Second, 2200*time.Millisecond), noLat(at("12:10:00"), 1001)}, spike: []bool{false}},
		{name: "under --spike 5x", bursts: []burst{slow(at("12:09:30"), 30*time.Second, time.Second),
			slow(at("12:10:00"), 30*time.Second, 3500*time.Millisecond), noLat(at("12:10:00"), 1001)},
			o: Options{Spike: SpikeRule{Factor: 5}}, spike: []bool{false}},
		// A slowdown near the detector's threshold (3 × ~80 ms) dips
		// under it in the interval just before the stall: still one run
		// (spikes at most --gap apart), under way before the stall.
		{name: "a dip under the threshold", bursts: []burst{slow(at("12:09:20"), 70*time.Second, 280*time.Millisecond),
			noLat(at("12:10:00"), 1001)}, edits: []func(*record.Recording){p99("12:09:30", 260*time.Millisecond),
			p99("12:09:40", 290*time.Millisecond), p99("12:10:00", 230*time.Millisecond)}, spike: []bool{false}},
		// Under way on its own through two stalls 20 s apart: the second
		// one's interval before is in the first's --gap, but the first's
		// part was not its, so the level reads through it (a third review).
		{name: "on its own through two close stalls", bursts: []burst{slow(at("12:09:30"), 2*time.Minute, 1500*time.Millisecond),
			noLat(at("12:10:00"), 1001), noLat(at("12:10:50"), 1002)}, spike: []bool{false, false}},
		// Intervals without requests give no level: with --gap 30 s the
		// three before the onset are empty, and the level is the 1 s
		// before them; 10 s in the stall is worse.
		{name: "no requests just before", bursts: []burst{slow(at("12:09:00"), 30*time.Second, time.Second),
			slow(at("12:10:00"), 10*time.Second, time.Second), dd(at("12:10:10"), 1001, 10*time.Second)},
			o: Options{GapTolerance: 30 * time.Second}, edits: []func(*record.Recording){noRequests(at("12:09:30"), at("12:10:00"))},
			spike: []bool{true}},
		// An absolute --spike floor says nothing of a rise: 3×, whatever
		// Factor the rule carries beside it.
		{name: "an absolute floor", bursts: []burst{slow(at("12:09:30"), 30*time.Second, 600*time.Millisecond),
			slow(at("12:10:00"), 30*time.Second, 2*time.Second), noLat(at("12:10:00"), 1001)},
			o: Options{Spike: SpikeRule{Floor: 500 * time.Millisecond, Factor: 5}}, spike: []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := synth{interval: 10 * time.Second, dur: 30 * time.Minute, bursts: tc.bursts}.build(t)
			for _, edit := range tc.edits {
				edit(rec)
			}
			r := Analyze(rec, tc.o)
			if len(r.Episodes) != len(tc.spike) {
				t.Fatalf("%d episodes, want %d", len(r.Episodes), len(tc.spike))
			}
			for i, e := range r.Episodes {
				if e.Spike != tc.spike[i] {
					t.Errorf("episode at %s: spike %v (latency peak %s), want %v", e.Start.Format("15:04:05"), e.Spike, e.LatencyPeak, tc.spike[i])
				}
			}
		})
	}
	// Failures by share, as the failure detector finds them: 100 of 500
	// requests failing before the second stall, 50 of 50 in it (its
	// throughput collapsed) is worse, though fewer failed.
	s := synth{interval: 10 * time.Second, dur: 30 * time.Minute, bursts: []burst{
		dd(at("12:10:00"), 1001, 2*time.Second), slow(at("12:10:30"), 40*time.Second, 1500*time.Millisecond),
		dd(at("12:11:10"), 1002, 1500*time.Millisecond),
	}}
	rec := s.build(t)
	for i := range rec.Samples {
		sm := &rec.Samples[i]
		switch tm := sm.Time; {
		case sm.Latency == nil:
		case tm.After(at("12:10:30")) && !tm.After(at("12:11:10")):
			sm.Latency.Count, sm.Latency.Errors = 500, 100
		case tm.After(at("12:11:10")) && !tm.After(at("12:11:40")):
			sm.Latency.Count, sm.Latency.Errors = 50, 50
		}
	}
	r := Analyze(rec, Options{})
	if len(r.Episodes) != 2 {
		t.Fatalf("failures: %d episodes, want 2", len(r.Episodes))
	}
	if e := r.Episodes[1]; !e.Spike || e.Failed < 150 {
		t.Errorf("failures: second episode spike %v with %d failed, want a spike with the 150 of its three intervals", e.Spike, e.Failed)
	}
}
