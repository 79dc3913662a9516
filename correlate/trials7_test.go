package correlate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// trialS7 analyses one of the new-user trial s7's REAL recordings
// (testdata/SOURCE, real/trial-s7-run*): a cron-like loop, trial-cron.sh
// in trial-cron.service, starts trial-nightly.sh (md5sum of a 400 MiB
// file) every 20 s, while timers whose ExecStart is also /usr/bin/md5sum
// exist: trial-report.timer (its service run by hand 10 s before each
// loop run on a 4 KiB file in run3; disabled and never run in run6) and
// trial-scan.timer (never run; not enabled in run6).
func trialS7(t *testing.T, file string) Result {
	t.Helper()
	rec, err := record.ReadFile(filepath.Join("testdata", "real", file))
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(rec, Options{Project: timers.Project})
}

// md5sumTimersNotTied: no md5sum that ran outside the timers' units is
// theirs: neither timer is named, and no process of trial-cron.service
// (the loop's md5sum) is tied to any job.
func md5sumTimersNotTied(t *testing.T, res Result) {
	t.Helper()
	for _, c := range res.Culprits {
		if c.Name == "trial-report.timer" || c.Name == "trial-scan.timer" {
			var ties []string
			for _, tie := range c.Proof.Ties {
				ties = append(ties, tie.Program+" "+tie.How+" "+tie.Via)
			}
			t.Errorf("named %s (%.2f) through %v; the loop's md5sum ran in trial-cron.service, not in its unit", c.Name, c.Confidence, ties)
		}
		for _, p := range c.Processes {
			if c.Kind != KindProcess && p.Unit == "trial-cron.service" {
				t.Errorf("%s holds the loop's %s (%s)", c.Name, p.Comm, p.Unit)
			}
		}
	}
}

// F-1 of trial s7, cgroup scope (run3): the loop's md5sum (recorded
// unit trial-cron.service, started by trial-nightly.sh ← trial-cron.sh)
// was tied to both md5sum timers as "a program of the job's command"
// and both were named at 1.00 — trial-scan.timer never ran, and
// trial-export.timer was "ran, but outside the analysed cgroup" for 162
// unrelated cats in /. The loop's script is the culprit, as in run7
// (the same loop with those timers' unit files removed).
func TestRealTrialS7LoopBesideMd5sumTimers(t *testing.T) {
	res := trialS7(t, "trial-s7-run3.jsonl.gz")
	md5sumTimersNotTied(t, res)
	if len(res.Episodes) != 7 || len(res.Culprits) != 1 {
		t.Fatalf("%d episodes, culprits %v; want 7 and trial-nightly.sh alone", len(res.Episodes), names(res))
	}
	c := res.Culprits[0]
	if c.Name != "trial-nightly.sh" || c.Kind != KindProcess || c.EpisodesExplained != 7 || c.Confidence < 0.75 {
		t.Fatalf("culprit %s (%s, %.2f) explaining %d; want trial-nightly.sh (process, high) explaining 7 of 7", c.Name, c.Kind, c.Confidence, c.EpisodesExplained)
	}
	if p := c.Processes[0]; p.Unit != "trial-cron.service" || len(p.StartedBy) == 0 || !strings.HasPrefix(p.StartedBy[0], "trial-cron.sh ") {
		t.Errorf("process %s (%s) started by %v; want trial-nightly.sh in trial-cron.service started by trial-cron.sh", p.Comm, p.Unit, p.StartedBy)
	}
	if pf := c.Proof; pf.StartsPeriod == nil || pf.StartsPeriod.PeriodS < 19.5 || pf.StartsPeriod.PeriodS > 20.5 {
		t.Errorf("starts period %+v; want the loop's 20 s", pf.StartsPeriod)
	}
	for _, nr := range res.NotRun {
		if nr.Name == "trial-export.timer" && nr.OutsideScope != nil {
			t.Errorf("trial-export.timer (did not run) said to have run outside the group: %+v", *nr.OutsideScope)
		}
	}
}

// F-1 of trial s7, host scope (run6): both md5sum timers disabled and
// never run were "Together … explain 4 of 5 episodes" through the
// loop's md5sum. Neither is named; both are listed under Not named,
// as not enabled.
func TestRealTrialS7DisabledMd5sumTimers(t *testing.T) {
	res := trialS7(t, "trial-s7-run6.jsonl.gz")
	md5sumTimersNotTied(t, res)
	for _, name := range []string{"trial-report.timer", "trial-scan.timer"} {
		k := slices.IndexFunc(res.NotRun, func(nr NotRun) bool { return nr.Name == name })
		if k < 0 {
			t.Errorf("%s not under Not named", name)
			continue
		}
		if runs, why := timers.Runs(res.NotRun[k].Job); runs || !strings.Contains(why, "not enabled") {
			t.Errorf("%s: runs %v (%q); want not enabled", name, runs, why)
		}
	}
}

// The program-name tie's rules (owner.byProgram), one process each.
func TestProgramTieRules(t *testing.T) {
	pt := &procTable{byPID: map[int][]*proc{}}
	add := func(pid, ppid int, comm, unit string) *proc {
		p := &proc{pid: pid, ppid: ppid, comm: comm, cmdline: comm, programs: []string{comm}, execK: -1, exitK: -1, idx: len(pt.all)}
		if unit != "" {
			p.units = []string{unit}
		}
		pt.byPID[pid] = append(pt.byPID[pid], p)
		pt.all = append(pt.all, p)
		return p
	}
	cgroups := map[*proc]string{}
	cron := add(90, 1, "cron", "cron.service")
	cgroups[cron] = "/system.slice/cron.service"
	cronSh := add(100, 90, "sh", "cron.service")
	cronCat := add(101, 100, "cat", "cron.service")
	loopSh := add(200, 1, "loop.sh", "loop.service")
	loopCat := add(201, 200, "cat", "loop.service")
	shell := add(300, 1, "bash", "")
	cgroups[shell] = "/"
	shellCat := add(301, 300, "cat", "")
	orphanCat := add(401, 1, "cat", "")
	_, _ = cronSh, loopSh // parents, seen through ancestry
	timer := &timers.Job{Name: "export.timer", Source: timers.Systemd, Unit: "export.service", Command: "/bin/cat /data"}
	cronJob := &timers.Job{Name: "cron.d/export:1", Source: timers.Cron, Command: "cat /data"}
	for _, c := range []struct {
		name     string
		job      *timers.Job
		unitData bool
		ran      bool
		p        *proc
		want     bool
	}{
		{"another unit's process is that unit's", timer, true, true, loopCat, false},
		{"a cron job's process started by the cron daemon", cronJob, true, false, cronCat, true},
		{"a cron job: a loop's process in its own service", cronJob, true, false, loopCat, false},
		{"a cron job: a shell's process, not from cron", cronJob, true, false, shellCat, false},
		{"a timer: a child of a shell recorded in /", timer, true, true, shellCat, false},
		{"a timer that ran: cgroup not recorded, no ancestor", timer, true, true, orphanCat, true},
		{"a cron job: parent not recorded", cronJob, true, false, orphanCat, true},
		{"a timer that never ran: cgroup not recorded", timer, true, false, orphanCat, false},
		{"no unit data at all: the program is the only link", timer, false, false, shellCat, true},
	} {
		o := newOwner(c.job, pt)
		o.unitData, o.ran = c.unitData, c.ran
		o.cgroupOf = func(p *proc) string { return cgroups[p] }
		if got := o.byProgram(c.p); got != c.want {
			t.Errorf("%s: byProgram(%s %d) = %v, want %v", c.name, c.p.comm, c.p.pid, got, c.want)
		}
	}
}
