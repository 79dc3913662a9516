package correlate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/timers"
)

// cgroupScopeScenario is the new-user trial's recording, shortened: a
// --cgroup group whose job (mdjob.timer, each minute at :10) stalls it for
// 5 s per firing, 9 firings; from 2:05 to 3:20 another tenant's cache
// (cached, outside the group) drives the host's refaults to 3000/s while
// the group stalls 0 ms between its own firings. The group's own
// memory.stat refaults rise only in its firings.
func cgroupScopeScenario() scenario {
	job := withPeriod(sysTimer("mdjob.timer", "*:*:10", "/usr/local/bin/mdjob.sh"), time.Minute)
	ats := offs(time.Minute, 9, 10*time.Second)
	var ps []sproc
	for k, a := range ats {
		ps = append(ps, sproc{pid: 1000 + k, ppid: 1, comm: "mdjob.sh", cmdline: "/bin/sh /usr/local/bin/mdjob.sh", unit: "mdjob.service",
			from: a, to: a + 5*time.Second, bps: every(40*mib, 5*time.Second, a)})
	}
	tenant := func(t time.Duration) bool { return t > 125*time.Second && t <= 200*time.Second }
	ps = append(ps, sproc{pid: 900, ppid: 1, comm: "cached", cmdline: "/usr/sbin/cached", unit: "cached.service",
		bps: func(t time.Duration) float64 {
			if tenant(t) {
				return 100 * mib
			}
			return 0
		}})
	host := func(t time.Duration) float64 {
		if tenant(t) {
			return 0.25
		}
		return burstPSI(0.2, 5*time.Second, ats...)(t)
	}
	return scenario{dur: 9*time.Minute + 5*time.Second, jobs: []timers.Job{job}, procs: ps,
		hostSome: host, cgSome: burstPSI(0.2, 5*time.Second, ats...),
		refault: func(t time.Duration) float64 {
			if tenant(t) {
				return 3000
			}
			return every(800, 5*time.Second, ats...)(t) + 5
		},
		cgRefault: func(t time.Duration) float64 { return every(800, 5*time.Second, ats...)(t) }}
}

// Under a cgroup scope an episode is the group's stall: another tenant's
// host-wide refaults neither keep it open nor merge two of the job's
// firings into one (the trial said "8 of 9", one 30 s episode with two
// firings).
func TestScenarioCgroupScopeContinuation(t *testing.T) {
	t.Run("group counters", func(t *testing.T) { checkCgroupScope(t, cgroupScopeScenario()) })
	// Without the group's memory.stat the host's reclaim may continue
	// an episode, but only while the group itself still stalls.
	sc := cgroupScopeScenario()
	sc.cgRefault = nil
	t.Run("no group counters", func(t *testing.T) { checkCgroupScope(t, sc) })
}

func checkCgroupScope(t *testing.T, sc scenario) {
	t.Helper()
	res := Analyze(sc.build(), Options{Project: timers.Project})
	if res.PSIScope != PSICgroup {
		t.Fatalf("scope %q; want cgroup", res.PSIScope)
	}
	if len(res.Episodes) != 9 {
		for _, e := range res.Episodes {
			t.Logf("episode %s–%s", e.Start.Sub(t0), e.End.Sub(t0))
		}
		t.Fatalf("%d episodes; want 9, one per firing", len(res.Episodes))
	}
	for _, e := range res.Episodes {
		if d := e.End.Sub(e.Start); d > 7*time.Second {
			t.Errorf("episode %s–%s lasts %s; the group stalled 5 s", e.Start.Sub(t0), e.End.Sub(t0), d)
		}
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "mdjob.timer" {
		t.Fatalf("culprits %v; want mdjob.timer first", names(res))
	}
	if c := res.Culprits[0]; c.FiringsMatched != 9 || c.Firings != 9 {
		t.Errorf("mdjob.timer matched %d of %d firings; want 9 of 9", c.FiringsMatched, c.Firings)
	}
}
