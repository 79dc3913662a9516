package correlate

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/record"
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
	return scenario{dur: 9*time.Minute + 5*time.Second, jobs: []record.Job{job}, procs: ps,
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

// dilutedScopeScenario: the --cgroup group's job (mdjob.timer, each
// minute at :10, in the group's descendant /service/mdjob.service)
// writes 40 MiB in each of its 9 firings and stalls the group; at the
// same moments another tenant outside the group writes 400 MiB, through
// a timer of its own (tenant.timer, /system.slice/tenant.service) or,
// with tenantJob false, a daemon's own schedule (/system.slice/bulk.service).
func dilutedScopeScenario(tenantJob bool) scenario {
	job := withPeriod(sysTimer("mdjob.timer", "*:*:10", "/usr/local/bin/mdjob.sh"), time.Minute)
	jobs := []record.Job{job}
	ats := offs(time.Minute, 9, 10*time.Second)
	var ps []sproc
	for k, a := range ats {
		ps = append(ps, sproc{pid: 1000 + k, ppid: 1, comm: "mdjob.sh", cmdline: "/bin/sh /usr/local/bin/mdjob.sh", unit: "mdjob.service",
			cgroup: "/service/mdjob.service", from: a, to: a + 5*time.Second, bps: every(8*mib, 5*time.Second, a)})
		if tenantJob {
			ps = append(ps, sproc{pid: 2000 + k, ppid: 1, comm: "tenant-sync", cmdline: "/usr/local/bin/tenant-sync", unit: "tenant.service",
				cgroup: "/system.slice/tenant.service", from: a, to: a + 5*time.Second, bps: every(80*mib, 5*time.Second, a)})
		}
	}
	if tenantJob {
		jobs = append(jobs, withPeriod(sysTimer("tenant.timer", "*:*:10", "/usr/local/bin/tenant-sync"), time.Minute))
	} else {
		ps = append(ps, sproc{pid: 900, ppid: 1, comm: "bulkd", cmdline: "/usr/sbin/bulkd", unit: "bulk.service",
			cgroup: "/system.slice/bulk.service", bps: every(80*mib, 5*time.Second, ats...)})
	}
	stall := burstPSI(0.2, 5*time.Second, ats...)
	return scenario{dur: 9*time.Minute + 5*time.Second, jobs: jobs, procs: ps, hostSome: stall, cgSome: stall,
		refault:   func(t time.Duration) float64 { return every(800, 5*time.Second, ats...)(t) + 5 },
		cgRefault: func(t time.Duration) float64 { return every(800, 5*time.Second, ats...)(t) }}
}

// Under a cgroup scope a job's share is taken over the I/O of the
// processes that can cause the group's reclaim: another tenant's 400 MiB
// per episode outside the group neither dilutes the group's job (40 MiB,
// 9 % of every process's I/O) nor makes the tenant the group's culprit.
func TestScenarioCgroupScopeShare(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tenantJob bool
		tenant    string
	}{{"outside timer", true, "tenant.timer"}, {"outside daemon", false, "bulkd"}} {
		t.Run(tc.name, func(t *testing.T) {
			res := Analyze(dilutedScopeScenario(tc.tenantJob).build(), Options{Project: timers.Project})
			if len(res.Episodes) != 9 {
				t.Fatalf("%d episodes; want 9", len(res.Episodes))
			}
			for _, c := range res.Culprits {
				if c.Name == tc.tenant || c.Name == "tenant-sync" {
					t.Errorf("%s (outside the cgroup) named the group's culprit: %+v", c.Name, c.Proof)
				}
			}
			if len(res.Culprits) == 0 || res.Culprits[0].Name != "mdjob.timer" {
				t.Fatalf("culprits %v; want mdjob.timer first", names(res))
			}
			c := res.Culprits[0]
			if c.EpisodesExplained != 9 || c.Proof.ShareScope != ScopeCgroup {
				t.Errorf("mdjob.timer explains %d of 9, share scope %q; want 9 and cgroup", c.EpisodesExplained, c.Proof.ShareScope)
			}
			for _, cr := range c.Proof.Credits {
				// 5 s at 8 MiB/s inside, 80 MiB/s outside; the episode
				// spans the interval before the stall too.
				if cr.Bytes != cr.AllBytes || cr.Share != 1 || cr.OutsideBytes < 399*mib || cr.OutsideBytes > 401*mib || cr.Bytes < 39*mib || cr.Bytes > 41*mib {
					t.Errorf("episode %d: bytes %d of %d (share %.3f), outside %d; want 40 MiB of 40 MiB (1), 400 MiB outside",
						cr.Episode, cr.Bytes, cr.AllBytes, cr.Share, cr.OutsideBytes)
				}
			}
		})
	}
}

// A process whose cgroup was not recorded is not inside: it is marked
// cgroup_unknown, not outside, and its I/O stays in the denominator (it
// may be in the group), so an unplaced 400 MiB still dilutes the job.
func TestScenarioCgroupScopeUnknown(t *testing.T) {
	sc := dilutedScopeScenario(false)
	for i := range sc.procs {
		if sc.procs[i].comm == "bulkd" {
			sc.procs[i].cgroup = ""
		}
	}
	res := Analyze(sc.build(), Options{Project: timers.Project})
	var seen int
	for _, e := range res.Episodes {
		if e.OutsideBytes != 0 {
			t.Errorf("episode %d: %d bytes outside; bulkd's cgroup is unknown, not outside", e.Index, e.OutsideBytes)
		}
		for _, p := range e.Processes {
			if p.Comm == "bulkd" {
				seen++
				if !p.CgroupUnknown || p.OutsideScope {
					t.Errorf("episode %d: bulkd cgroup_unknown %v, outside_scope %v; want true, false", e.Index, p.CgroupUnknown, p.OutsideScope)
				}
			}
		}
	}
	if seen != 9 {
		t.Errorf("bulkd in %d episodes; want 9", seen)
	}
	for _, c := range res.Culprits {
		if c.Name == "mdjob.timer" {
			t.Errorf("mdjob.timer named on %v of a share diluted by a process that may be in the group", c.Proof.Credits)
		}
	}
}

// The memory taken under a cgroup scope: the group's job allocates
// 100 MiB in each firing (and does 1 MiB of I/O, below the credit floor);
// at the same moments a long-running cache outside the group
// (/system.slice/cached.service) grows by 400 MiB and gives it back. The
// cache did I/O only in the recording's first seconds, so in the
// episodes it is only among the RSS holders, which carry no cgroup: its
// cgroup comes from where the recording saw it, and its growth is left
// out of the job's memory share (1, not 0.2).
func TestScenarioCgroupScopeMemory(t *testing.T) {
	job := withPeriod(sysTimer("mdjob.timer", "*:*:10", "/usr/local/bin/mdjob.sh"), time.Minute)
	ats := offs(time.Minute, 9, 10*time.Second)
	var ps []sproc
	for k, a := range ats {
		ps = append(ps, sproc{pid: 1000 + k, ppid: 1, comm: "mdjob.sh", cmdline: "/bin/sh /usr/local/bin/mdjob.sh", unit: "mdjob.service",
			cgroup: "/service/mdjob.service", from: a, to: a + 5*time.Second, bps: every(0.2*mib, 5*time.Second, a), rss: 100 * mib})
	}
	ps = append(ps, sproc{pid: 900, ppid: 1, comm: "cached", cmdline: "/usr/sbin/cached", unit: "cached.service",
		cgroup: "/system.slice/cached.service", bps: func(t time.Duration) float64 {
			if t <= 3*time.Second {
				return mib
			}
			return 0
		}, rssAt: func(t time.Duration) float64 { return 50*mib + every(400*mib, 5*time.Second, ats...)(t) }})
	stall := burstPSI(0.2, 5*time.Second, ats...)
	sc := scenario{dur: 9*time.Minute + 5*time.Second, jobs: []record.Job{job}, procs: ps, hostSome: stall, cgSome: stall,
		refault:   func(t time.Duration) float64 { return every(800, 5*time.Second, ats...)(t) + 5 },
		cgRefault: func(t time.Duration) float64 { return every(800, 5*time.Second, ats...)(t) }}
	res := Analyze(sc.build(), Options{Project: timers.Project})
	if len(res.Episodes) != 9 {
		t.Fatalf("%d episodes; want 9", len(res.Episodes))
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "mdjob.timer" {
		t.Fatalf("culprits %v; want mdjob.timer first", names(res))
	}
	for _, cr := range res.Culprits[0].Proof.Credits {
		if cr.MemBytes != 100*mib || cr.MemAll != 100*mib || cr.MemOutside != 400*mib || cr.MemShare != 1 {
			t.Errorf("episode %d: memory %d of %d (share %.3f), outside %d; want 100 MiB of 100 MiB (1), 400 MiB outside",
				cr.Episode, cr.MemBytes, cr.MemAll, cr.MemShare, cr.MemOutside)
		}
	}
}

// A job whose processes all ran outside the --cgroup group is not the
// group's culprit, and the verdict says why: it ran, outside the
// analysed scope, in the group's episodes (tenant.timer's tenant-sync in
// /system.slice/tenant.service wrote 400 MiB in each of the 9).
func TestScenarioCgroupScopeJobOutside(t *testing.T) {
	res := Analyze(dilutedScopeScenario(true).build(), Options{Project: timers.Project})
	var got *NotRun
	for i := range res.NotRun {
		if res.NotRun[i].Name == "tenant.timer" {
			got = &res.NotRun[i]
		}
	}
	if got == nil {
		t.Fatalf("not named %+v; want tenant.timer, which ran outside the cgroup", res.NotRun)
	}
	if got.OutsideScope == nil {
		t.Fatalf("tenant.timer: %+v; want it said to have run outside the cgroup", *got)
	}
	o := got.OutsideScope
	if o.Processes != 9 || o.Episodes != 9 || o.Bytes < 9*399*mib || o.Bytes > 9*401*mib || !slices.Equal(o.Cgroups, []string{"/system.slice/tenant.service"}) {
		t.Errorf("tenant.timer outside: %+v; want 9 processes in /system.slice/tenant.service, 9 episodes, 3.5 GiB", *o)
	}
	for _, nr := range res.NotRun {
		if nr.Name == "mdjob.timer" {
			t.Errorf("mdjob.timer (in the group, named) listed as not named: %+v", nr)
		}
	}
	// With the host's scope every process counts: nothing is outside.
	res = Analyze(dilutedScopeScenario(true).build(), Options{Project: timers.Project, PSIScope: PSIHost})
	for _, nr := range res.NotRun {
		if nr.OutsideScope != nil {
			t.Errorf("host scope: %s said to run outside the scope", nr.Name)
		}
	}
}

// A process culprit's credits carry what a job's carry, so a skeptic can
// recompute its share and see what rests on processes of unknown cgroup:
// under a cgroup scope pressure.py (cgroup not recorded) writes 300 MiB
// and holds 200 MiB in each of its 6 episodes, alone.
func TestScenarioProcessCreditEvidence(t *testing.T) {
	sc := interpreterScenario()
	sc.cgSome = sc.hostSome
	ats := offs(time.Minute, 6, 10*time.Second)
	for i := range sc.procs {
		if sc.procs[i].comm == "python3" {
			sc.procs[i].rssAt = every(200*mib, 10*time.Second, ats...)
		}
	}
	res := Analyze(sc.build(), Options{Project: timers.Project})
	if res.PSIScope != PSICgroup || len(res.Culprits) == 0 || res.Culprits[0].Name != "pressure.py" {
		t.Fatalf("scope %q, culprits %v; want cgroup, pressure.py", res.PSIScope, names(res))
	}
	pf := res.Culprits[0].Proof
	if len(pf.Credits) != 6 {
		t.Fatalf("%d credits; want 6", len(pf.Credits))
	}
	var own []float64
	for _, cr := range pf.Credits {
		if cr.Bytes < 299*mib || cr.Bytes > 301*mib || cr.UnknownBytes != cr.Bytes || cr.MemBytes != 200*mib || cr.MemAll != 200*mib || cr.MemShare != 1 {
			t.Errorf("episode %d: bytes %d, unknown %d, memory %d of %d (%.3f); want 300 MiB all of unknown cgroup, 200 MiB of 200 MiB (1)",
				cr.Episode, cr.Bytes, cr.UnknownBytes, cr.MemBytes, cr.MemAll, cr.MemShare)
		}
		own = append(own, max(cr.Share, cr.MemShare))
	}
	if got := round3(median(own)); pf.Share != got {
		t.Errorf("proof share %.3f; the credits give %.3f", pf.Share, got)
	}
}

// Issue 30 item 12: a culprit's processes carry their PIDs, so that a
// list of the host's processes marks the culprit's own and not another
// process of the same name. A job's rows list the processes of its runs;
// a process culprit's row those of its credited runs.
func TestCulpritProcessPIDs(t *testing.T) {
	t.Run("job", func(t *testing.T) {
		res := Analyze(cgroupScopeScenario().build(), Options{Project: timers.Project})
		if len(res.Culprits) == 0 || res.Culprits[0].Name != "mdjob.timer" {
			t.Fatalf("culprits %v; want mdjob.timer", names(res))
		}
		ps := res.Culprits[0].Processes
		want := []int{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}
		if len(ps) != 1 || !slices.Equal(ps[0].PIDs, want) {
			t.Errorf("processes %+v; want one row, mdjob.sh, with PIDs %v (not cached's 900)", ps, want)
		}
	})
	t.Run("process", func(t *testing.T) {
		res := Analyze(interpreterScenario().build(), Options{Project: timers.Project})
		if len(res.Culprits) == 0 || res.Culprits[0].Name != "pressure.py" {
			t.Fatalf("culprits %v; want pressure.py", names(res))
		}
		ps := res.Culprits[0].Processes
		want := []int{4200, 4201, 4202, 4203, 4204, 4205}
		if len(ps) != 1 || !slices.Equal(ps[0].PIDs, want) {
			t.Errorf("processes %+v; want pressure.py with PIDs %v (not periodic.sh 4100)", ps, want)
		}
	})
}

// Issue 30 item 12: a culprit's processes carry their start times beside
// their PIDs, for a PID is reused in a long recording. Each of mdjob's
// runs started at tick 50000+k, and PID 1003, once mdjob's fourth run,
// is reused 30 s after that run ended by another tenant's dd (start tick
// 90000), which writes to the end: the culprit's row lists (1003, 50003),
// never (1003, 90000). pressure.py's runs carry theirs (70000+k).
func TestCulpritProcessStartTicks(t *testing.T) {
	t.Run("job", func(t *testing.T) {
		sc := cgroupScopeScenario()
		var want []ProcID
		for i := range sc.procs {
			if p := &sc.procs[i]; p.comm == "mdjob.sh" {
				p.start = 50000 + uint64(p.pid-1000)
				want = append(want, ProcID{PID: p.pid, StartTicks: p.start})
			}
		}
		ats := offs(time.Minute, 9, 10*time.Second)
		sc.procs = append(sc.procs, sproc{pid: 1003, ppid: 1, start: 90000, comm: "dd", cmdline: "dd if=/dev/zero of=/srv/fill", unit: "tenant.service",
			cgroup: "/system.slice/tenant.service", from: ats[3] + 35*time.Second, bps: steady(2 * mib)})
		res := Analyze(sc.build(), Options{Project: timers.Project})
		if len(res.Culprits) == 0 || res.Culprits[0].Name != "mdjob.timer" {
			t.Fatalf("culprits %v; want mdjob.timer", names(res))
		}
		ps := res.Culprits[0].Processes
		if len(ps) != 1 {
			t.Fatalf("processes %+v; want one row, mdjob.sh", ps)
		}
		if diff := cmp.Diff(want, ps[0].ProcIDs); diff != "" {
			t.Errorf("mdjob.sh's processes (-want +got):\n%s", diff)
		}
		if wantPIDs := []int{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}; !slices.Equal(ps[0].PIDs, wantPIDs) {
			t.Errorf("PIDs %v; want %v", ps[0].PIDs, wantPIDs)
		}
	})
	t.Run("process", func(t *testing.T) {
		sc := interpreterScenario()
		var want []ProcID
		for i := range sc.procs {
			if p := &sc.procs[i]; p.comm == "python3" {
				p.start = 70000 + uint64(p.pid-4200)
				want = append(want, ProcID{PID: p.pid, StartTicks: p.start})
			}
		}
		res := Analyze(sc.build(), Options{Project: timers.Project})
		if len(res.Culprits) == 0 || res.Culprits[0].Name != "pressure.py" {
			t.Fatalf("culprits %v; want pressure.py", names(res))
		}
		if ps := res.Culprits[0].Processes; len(ps) != 1 {
			t.Fatalf("processes %+v; want pressure.py", ps)
		} else if diff := cmp.Diff(want, ps[0].ProcIDs); diff != "" {
			t.Errorf("pressure.py's processes (-want +got):\n%s", diff)
		}
	})
}
