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
			cgroup: "/service/mdjob.service", from: a, to: a + 5*time.Second, bps: every(40*mib, 5*time.Second, a)})
	}
	tenant := func(t time.Duration) bool { return t > 125*time.Second && t <= 200*time.Second }
	ps = append(ps, sproc{pid: 900, ppid: 1, comm: "cached", cmdline: "/usr/sbin/cached", unit: "cached.service",
		cgroup: "/system.slice/cached.service", bps: func(t time.Duration) float64 {
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

// Under the cgroup scope, another tenant's process in the episodes is
// marked outside the scope; the group's own job is not.
func TestScenarioCgroupScopeOutside(t *testing.T) {
	res := Analyze(cgroupScopeScenario().build(), Options{Project: timers.Project})
	var cached, job int
	for _, e := range res.Episodes {
		for _, p := range e.Processes {
			switch p.Comm {
			case "cached":
				cached++
				if !p.OutsideScope {
					t.Errorf("episode %d: cached (system.slice) not marked outside the cgroup", e.Index)
				}
			case "mdjob.sh":
				job++
				if p.OutsideScope {
					t.Errorf("episode %d: mdjob.sh (/service/mdjob.service, the recorded group service) marked outside the cgroup", e.Index)
				}
			}
		}
	}
	// cached wrote in the episodes of 2:10 and 3:10 (its load 2:05–3:20).
	if cached != 2 || job != 9 {
		t.Errorf("cached in %d episodes, mdjob.sh in %d; want 2 and 9", cached, job)
	}
}

func TestCgroupRelated(t *testing.T) {
	for _, c := range []struct {
		dir, proc string
		want      bool
	}{
		{"/sys/fs/cgroup/unified/mdtrial", "/mdtrial", true},
		{"/sys/fs/cgroup/unified/mdtrial", "/mdtrial/mdjob.service", true}, // descendant
		{"/sys/fs/cgroup/memory/a/b", "/a", true},                          // ancestor with its own limit
		{"/sys/fs/cgroup/unified/mdtrial", "/system.slice/cached.service", false},
		{"/sys/fs/cgroup/unified/mdtrial", "/", false}, // root: host-wide reclaim only
		{"/sys/fs/cgroup/unified/mdtrial", "/mdtrial2", false},
	} {
		if got := cgroupRelated(c.dir, c.proc); got != c.want {
			t.Errorf("cgroupRelated(%q, %q) = %v; want %v", c.dir, c.proc, got, c.want)
		}
	}
}
