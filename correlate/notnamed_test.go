package correlate

import (
	"slices"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// accounted checks that every job of the recording is either a culprit
// or listed once in NotRun, with a kind, and returns NotRun by name.
func accounted(t *testing.T, rec *record.Recording, res Result) map[string]NotRun {
	t.Helper()
	got := map[string]NotRun{}
	for _, nr := range res.NotRun {
		if _, dup := got[nr.Name]; dup {
			t.Errorf("%s listed twice as not named", nr.Name)
		}
		if nr.Kind == "" {
			t.Errorf("%s not named without a kind: %+v", nr.Name, nr)
		}
		got[nr.Name] = nr
	}
	for _, j := range rec.Header.Jobs {
		_, listed := got[j.Name]
		named := slices.Contains(names(res), j.Name)
		if listed == named {
			t.Errorf("%s: named %v, listed as not named %v; want exactly one", j.Name, named, listed)
		}
	}
	return got
}

// Every job of the inventory the verdict does not name is accounted for,
// with what the recording shows of it. The bystanders of scenario 4 ran
// in every episode (sleeper.timer's sleeper 2 KiB/s, cron.d/tick:1's tick
// 10 KiB) beside heavy.timer's 768 MiB: they were left out of "Not named"
// silently, as a job whose unit ran but got no credit was (trial s6, the
// Prometheus fleet failure).
func TestNotNamedEveryJob(t *testing.T) {
	t.Run("bystander", func(t *testing.T) {
		rec := bystanderScenario().build()
		res := Analyze(rec, Options{Project: timers.Project})
		got := accounted(t, rec, res)
		s := got["sleeper.timer"]
		// 8 sleepers, each 2 KiB/s for its first 10 s, one per 30 s; each
		// of the 4 episodes (8 s of heavy's 96 MiB/s) holds 8 of a
		// sleeper's seconds: 16 KiB (16376 bytes as the recording's
		// whole-KiB rates round), far below 4 MiB.
		if s.Kind != NotRunBelowCredit || s.Ran == nil || s.Ran.Processes != 8 || s.Ran.Episodes != 4 || s.Ran.Of != 4 ||
			s.Ran.MaxBytes != 16376 || s.Ran.Credited != 0 || s.Ran.MaxShare >= 0.001 {
			t.Errorf("sleeper.timer: %+v %+v; want ran_below_credit, 8 processes, I/O in 4 of 4 episodes, at most 16376 bytes", s, s.Ran)
		}
		c := got["cron.d/tick:1"]
		if c.Kind != NotRunBelowCredit || c.Ran == nil || c.Ran.Processes != 4 || c.Ran.MaxBytes != 10<<10 {
			t.Errorf("cron.d/tick:1: %+v %+v; want ran_below_credit, 4 processes, at most 10 KiB", c, c.Ran)
		}
	})
	t.Run("did-not-run", func(t *testing.T) {
		rec := notRunScenario().build()
		res := Analyze(rec, Options{Project: timers.Project})
		got := accounted(t, rec, res)
		if r := got["report.timer"]; r.Kind != NotRunCannot {
			t.Errorf("report.timer (idle now): %+v; want cannot_run", r)
		}
		if d := got["decoy.timer"]; d.Kind != NotRunScheduled || d.FiringsNear != 5 {
			t.Errorf("decoy.timer: %+v; want scheduled_not_run, 5 firings near episodes", d)
		}
	})
	t.Run("credited-not-proven", func(t *testing.T) {
		// Trial s6's runG: the neighbour's timer did 60–69 % of two
		// episodes, starting after the stall, and is as busy outside.
		rec := lateTimerRec(t)
		res := Analyze(rec, Options{Project: timers.Project})
		got := accounted(t, rec, res)
		h := got["memdiag-e2e-p-job.timer"]
		if h.Kind != NotRunNotProven || h.Ran == nil || h.Ran.Credited != 2 || h.Ran.Of != 5 || !h.Ran.Late ||
			h.Ran.P < DefaultModel().MaxChance || h.Ran.Lead == nil || *h.Ran.Lead >= 0 {
			t.Fatalf("hog timer: %+v %+v; want ran_not_proven, 2 of 5 credited, late, p ≥ 0.01", h, h.Ran)
		}
	})
	t.Run("outside-scope-no-io", func(t *testing.T) {
		// The tenant's timer ran outside the group: listed whether or not
		// its processes did I/O in the group's episodes.
		rec := dilutedScopeScenario(true).build()
		res := Analyze(rec, Options{Project: timers.Project})
		got := accounted(t, rec, res)
		if o := got["tenant.timer"]; o.Kind != NotRunOutsideScope || o.OutsideScope == nil || o.OutsideScope.Episodes != 9 {
			t.Errorf("tenant.timer: %+v; want ran_outside_scope in 9 episodes", o)
		}
	})
	t.Run("no-process-data", func(t *testing.T) {
		// Without per-process data decoy.timer, whose firings precede
		// every episode, is named from them (capped); offbeat.timer,
		// firing a minute after each, is not, and whether it ran is
		// unknown: 0 of its 5 firings were followed by an episode.
		sc := notRunScenario()
		sc.noProcs = true
		sc.jobs = append(sc.jobs, withPeriod(sysTimer("offbeat.timer", "*:1/2", "/usr/local/bin/offbeat"), 2*time.Minute))
		rec := sc.build()
		res := Analyze(rec, Options{Project: timers.Project})
		got := accounted(t, rec, res)
		if d := got["offbeat.timer"]; d.Kind != NotRunUnknown || d.Firings != 5 || d.Matched != 0 {
			t.Errorf("offbeat.timer without process data: %+v; want run_unknown, 0 of 5 firings followed by an episode", d)
		}
		if r := got["report.timer"]; r.Kind != NotRunCannot {
			t.Errorf("report.timer (idle now) without process data: %+v; want cannot_run", r)
		}
	})
	t.Run("other-cgroup", func(t *testing.T) {
		// Trial s6's runC: s6-export.timer of s6app.slice was listed as
		// "scheduled but did not run" in an analysis of /s6trial. A
		// timer whose unit runs outside the group cannot run in it:
		// export.timer (Slice=s6app.slice), its firings on the group's
		// job's, did not run; inside.timer, whose unit is in the group,
		// did not run either and is "scheduled but did not run".
		sc := dilutedScopeScenario(true)
		export := withPeriod(sysTimer("export.timer", "*:*:10", "/usr/bin/dd"), time.Minute)
		export.Cgroup = "/s6app.slice/export.service"
		inside := withPeriod(sysTimer("inside.timer", "*:*:10", "/usr/local/bin/inside"), time.Minute)
		inside.Cgroup = "/service/inside.service"
		sc.jobs = append(sc.jobs, export, inside)
		rec := sc.build()
		res := Analyze(rec, Options{Project: timers.Project})
		got := accounted(t, rec, res)
		if e := got["export.timer"]; e.Kind != NotRunOtherCgroup || e.Cgroup != export.Cgroup || e.Group != rec.Header.Cgroup {
			t.Errorf("export.timer: %+v; want other_cgroup %s", e, export.Cgroup)
		}
		if i := got["inside.timer"]; i.Kind != NotRunScheduled || i.FiringsNear != 9 {
			t.Errorf("inside.timer: %+v; want scheduled_not_run, 9 firings near episodes", i)
		}
		// The host's scope has no group: export.timer is scheduled but
		// did not run, like inside.timer.
		res = Analyze(rec, Options{Project: timers.Project, PSIScope: PSIHost})
		got = accounted(t, rec, res)
		if e := got["export.timer"]; e.Kind != NotRunScheduled {
			t.Errorf("host scope: export.timer %+v; want scheduled_not_run", e)
		}
	})
}
