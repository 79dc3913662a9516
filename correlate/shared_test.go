package correlate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// TestRealHostShadowedLoop: the new-user trial's run A (trial s6, F-A2;
// testdata/SOURCE), analysed with the host's PSI. s6cron.sh 17577 runs a
// fresh s6nightly.sh every 20 s, whose cat reads 400 MiB (6 runs); a
// neighbour's timer (memdiag-e2e-p-job.timer, every 12 s) writes 768 MiB.
// The host stalled in 9 episodes: the hog alone in 5 (0, 2, 5, 6, 7),
// the cat alone in 2 (4 at 03:38:59, 8 at 03:40:00), both in 2 (1 and
// 3, the cat starting the stall, the hog 3.3 s and 8.3 s after it). The
// cat's other two runs (03:39:20, 03:39:41) stalled the host 15 ms each,
// below the 2 % threshold: no episode. Before, only the timer was named
// (a pattern was weighed only in episodes no named job explains); now
// both, each with its own share of the two shared episodes, the loop
// low: 4 of its 6 runs met an episode, and the host's episodes covered
// half the recording (p_null 0.31).
func TestRealHostShadowedLoop(t *testing.T) {
	rec, err := record.ReadFile(filepath.Join("testdata", "real", "host-shadowed-loop.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("host", func(t *testing.T) {
		res := Analyze(rec, Options{Project: timers.Project, PSIScope: PSIHost})
		if got := names(res); !slices.Equal(got, []string{"memdiag-e2e-p-job.timer", "s6nightly.sh"}) {
			t.Fatalf("culprits %v; want the timer, then the loop's s6nightly.sh", got)
		}
		job, loop := res.Culprits[0], res.Culprits[1]
		if !slices.Equal(job.Episodes, []int{0, 1, 2, 3, 5, 6, 7}) || job.Confidence != 0.94 {
			t.Errorf("timer explains %v at %.2f; want episodes 0-3, 5-7 at 0.94 as before", job.Episodes, job.Confidence)
		}
		if loop.Kind != KindProcess || !slices.Equal(loop.Episodes, []int{1, 3, 4, 8}) || loop.EpisodesTotal != 9 {
			t.Fatalf("loop %s (%s) explains %v of %d; want episodes 1, 3, 4, 8 of 9", loop.Name, loop.Kind, loop.Episodes, loop.EpisodesTotal)
		}
		p := loop.Processes[0]
		if len(p.StartedBy) == 0 || p.StartedBy[0] != "s6cron.sh 17577" || p.Bytes() < 4*399<<20 {
			t.Errorf("process %s %q started by %v did %d B; want s6nightly.sh started by s6cron.sh 17577, 4 × ~400 MiB", p.Program, p.Cmdline, p.StartedBy, p.Bytes())
		}
		pf := loop.Proof
		if sp := pf.StartsPeriod; sp == nil || len(pf.Starts) != 6 || sp.Matched != 6 || loop.Period < 19500*time.Millisecond || loop.Period > 20500*time.Millisecond {
			t.Errorf("starts %d, fit %+v, period %s; want 6 starts every ~20 s", len(pf.Starts), sp, loop.Period)
		}
		// Hand-checked from the episodes' processes: cat 400 MiB of 1287
		// and 1296 MiB (hog 768 each), of 490 and 436 MiB alone.
		want := map[int]float64{1: 0.311, 3: 0.308, 4: 0.815, 8: 0.912}
		for _, cr := range pf.Credits {
			if cr.Share != want[cr.Episode] || cr.LeadS == nil || *cr.LeadS < -1 || *cr.LeadS > 1 {
				t.Errorf("credit %d: share %.3f, lead %v; want %.3f, started with the stall", cr.Episode, cr.Share, cr.LeadS, want[cr.Episode])
			}
		}
		// The two shared episodes: each is credited with its own share of
		// one denominator, which add up to no more than the whole.
		for _, e := range []int{1, 3} {
			var sum float64
			for _, c := range res.Culprits {
				for _, cr := range c.Proof.Credits {
					if cr.Episode == e {
						sum += cr.Share
					}
				}
			}
			if sum > 1 || sum < 0.89 {
				t.Errorf("episode %d: shares add up to %.3f; want the hog's and the cat's, about 0.9", e, sum)
			}
		}
		if !slices.Equal(pf.SharedWith, []string{"memdiag-e2e-p-job.timer"}) || !slices.Equal(job.Proof.SharedWith, []string{"s6nightly.sh"}) {
			t.Errorf("shared_with %v and %v; want each naming the other", pf.SharedWith, job.Proof.SharedWith)
		}
		// Honest: 4 of its 6 runs met an episode, and the host's
		// episodes covered half the recording, so chance is not ruled
		// out (p_null 0.31): named by its median share (0.56), low.
		if pf.PresentIntervals != 2 || pf.Runs != 6 || pf.Repeat != 0.667 || pf.Share != 0.563 || loop.Confidence != 0.07 {
			t.Errorf("present %d, runs %d, repeat %.3f, share %.3f, confidence %.2f; want 2, 6, 0.667, 0.563, 0.07",
				pf.PresentIntervals, pf.Runs, pf.Repeat, pf.Share, loop.Confidence)
		}
	})
	t.Run("cgroup", func(t *testing.T) {
		// The recording's own scope: the loop alone, as before.
		res := Analyze(rec, Options{Project: timers.Project})
		if got := names(res); !slices.Equal(got, []string{"s6nightly.sh"}) || res.Culprits[0].EpisodesExplained != 6 || res.Culprits[0].Confidence != 0.96 {
			t.Fatalf("culprits %v; want s6nightly.sh alone, 6 of 6 at 0.96", got)
		}
		if res.Culprits[0].Proof.SharedWith != nil {
			t.Errorf("shared_with %v; want none", res.Culprits[0].Proof.SharedWith)
		}
	})
}

// sharedScenario: heavy.timer (*:*:0/20) writes 400 MiB in 2 s at 21,
// 41, 61 and 81 s, each stalling the host for 6 s; a loop (loop.sh 2100,
// started before the recording) starts a fresh child every `every`
// seconds from `first`, each doing bps for 2 s.
func sharedScenario(child string, first, every, last time.Duration, bps float64) scenario {
	ats := []time.Duration{sec(21), sec(41), sec(61), sec(81)}
	ps := []sproc{{pid: 900, ppid: 1, comm: "bash", cmdline: "-bash"},
		{pid: 2100, ppid: 900, comm: "loop.sh", cmdline: "/bin/sh /usr/local/bin/loop.sh"}}
	for k, a := range ats {
		ps = append(ps, sproc{pid: 5000 + k, ppid: 1, comm: "heavy", cmdline: "/usr/local/bin/heavy", unit: "heavy.service",
			from: a - sec(0.2), to: a + sec(2.2), bps: every2(200*mib, a)})
	}
	k := 0
	for a := first; a <= last; a += every {
		ps = append(ps, sproc{pid: 3000 + k, ppid: 2100, comm: child, cmdline: "/bin/sh /usr/local/bin/" + child,
			from: a - sec(0.2), to: a + sec(2.2), bps: every2(bps, a)})
		k++
	}
	return scenario{dur: 100 * time.Second, hostSome: burstPSI(0.3, 6*time.Second, ats...), procs: ps, describeParents: true,
		jobs: []record.Job{sysTimer("heavy.timer", "*:*:0/20", "/usr/local/bin/heavy")}}
}

func every2(bps float64, at time.Duration) func(time.Duration) float64 {
	return every(bps, 2*time.Second, at)
}

// TestScenarioSharedNegatives: a process pattern in a named job's
// episodes is named beside it only with a job's evidence; the job alone
// is named in each of these.
func TestScenarioSharedNegatives(t *testing.T) {
	for _, c := range []struct {
		name string
		s    scenario
	}{
		// A victim: a fresh refresh.sh started 3 s into each of the
		// timer's stalls re-reads 150 MiB (27 % of the episode's I/O),
		// every 20 s, never outside them: it rides the stall.
		{"late", sharedScenario("refresh.sh", sec(24), 20*time.Second, sec(84), 75*mib)},
		// A loop busy all along: a fresh sync.sh every 5 s writes 500 MiB
		// (56 % of each of the timer's episodes), and only 4 of its 18
		// runs meet an episode; its other runs stall nobody.
		{"busy", sharedScenario("sync.sh", sec(6), 5*time.Second, sec(91), 250*mib)},
		// A bystander: a fresh tick.sh with the timer every 20 s writes
		// 40 MiB (9 %).
		{"small", sharedScenario("tick.sh", sec(21), 20*time.Second, sec(81), 20*mib)},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := Analyze(c.s.build(), Options{Project: timers.Project})
			if len(res.Episodes) != 4 {
				t.Fatalf("%d episodes; want the timer's 4", len(res.Episodes))
			}
			if got := names(res); !slices.Equal(got, []string{"heavy.timer"}) {
				t.Fatalf("culprits %v; want heavy.timer alone", got)
			}
			if sw := res.Culprits[0].Proof.SharedWith; sw != nil {
				t.Errorf("shared_with %v; want none", sw)
			}
		})
	}
}

// TestScenarioSharedLoop: a fresh job.sh, started every 20 s by a loop
// at the timer's own times (21 to 81 s), writes 300 MiB beside the
// timer's 400 MiB: every run of it meets an episode, starts with the
// stall and does 43 % of its I/O, and it does nothing outside them
// (p_null 1e-7). Both are named, each credited with the four episodes
// and its own share; the timer first, for its larger share.
func TestScenarioSharedLoop(t *testing.T) {
	s := sharedScenario("job.sh", sec(21), 20*time.Second, sec(81), 150*mib)
	res := Analyze(s.build(), Options{Project: timers.Project})
	if got := names(res); !slices.Equal(got, []string{"heavy.timer", "job.sh"}) {
		t.Fatalf("culprits %v; want heavy.timer, then job.sh", got)
	}
	loop := res.Culprits[1]
	if loop.EpisodesExplained != 4 || loop.Proof.Share != 0.429 || !slices.Equal(loop.Proof.SharedWith, []string{"heavy.timer"}) ||
		len(loop.Processes) != 1 || !strings.HasPrefix(strings.Join(loop.Processes[0].StartedBy, ","), "loop.sh 2100") {
		t.Errorf("job.sh explains %d, share %.3f, shared with %v, processes %+v; want 4, 0.429, heavy.timer, started by loop.sh 2100",
			loop.EpisodesExplained, loop.Proof.Share, loop.Proof.SharedWith, loop.Processes)
	}
	if res.Culprits[0].EpisodesExplained != 4 {
		t.Errorf("heavy.timer explains %d; want 4", res.Culprits[0].EpisodesExplained)
	}
}
