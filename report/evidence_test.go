package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// analyzeFile analyses one of correlate's kept recordings.
func analyzeFile(t *testing.T, rel string, o correlate.Options) correlate.Result {
	t.Helper()
	rec, err := record.ReadFile(filepath.Join("..", "correlate", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return correlate.Analyze(rec, o)
}

// The evidence prose is written here from correlate's structured proof;
// these are the lines correlate's tests once checked in its own prose.
func TestEvidenceScenarios(t *testing.T) {
	proj := correlate.Options{Project: timers.Project}
	t.Run("union", func(t *testing.T) {
		r := analyzeFile(t, "union.jsonl.gz", proj)
		if len(r.Culprits) == 0 {
			t.Fatal("no culprit")
		}
		ev := evidence(&r, &r.Culprits[0])
		for _, want := range []string{
			"systemd job, fires every 20m (*:05/20), defined in",
			"6 of 6 firings in the recording were followed within 1m by an episode",
		} {
			if !slices.ContainsFunc(ev, func(e string) bool { return strings.Contains(e, want) }) {
				t.Errorf("evidence %q lacks %q", ev, want)
			}
		}
	})
	t.Run("cut off", func(t *testing.T) {
		// A firing the recording ended within the window of is said, not
		// counted (correlate's TestScenarioFiringCutOffByEnd).
		r := analyzeFile(t, "union.jsonl.gz", proj)
		if len(r.Culprits) == 0 {
			t.Fatal("no culprit")
		}
		c := r.Culprits[0]
		pf := *c.Proof
		pf.FiringsCutOff = []time.Time{r.End.Add(-30 * time.Second).Truncate(time.Second)}
		c.Proof = &pf
		want := "not counted: its firing at " + pf.FiringsCutOff[0].In(r.Location).Format("15:04:05") +
			", which the recording ended less than 1m after (an episode it caused may have begun after the end)"
		if ev := evidence(&r, &c); !slices.Contains(ev, want) {
			t.Errorf("evidence %q lacks %q", ev, want)
		}
	})
	t.Run("inprocess", func(t *testing.T) {
		r := analyzeFile(t, "inprocess.jsonl.gz", proj)
		if len(r.Culprits) == 0 {
			t.Fatal("no culprit")
		}
		ev := evidence(&r, &r.Culprits[0])
		want := "recurs every 15m, postgres (postgresql.service) wrote 1.2 GiB per episode (median), no timer or cron job: an in-process schedule?"
		if len(ev) == 0 || ev[0] != want {
			t.Errorf("evidence %q; want first %q", ev, want)
		}
	})
	t.Run("coalesced", func(t *testing.T) {
		// Five timers in one wake-up, bravo's 152 MiB less than twice
		// charlie's 100: undecided, none named (correlate's
		// TestScenarioCoalescedTimers), and the evidence does not rank them.
		r := analyzeFile(t, "scenarios/09-coalesced.jsonl.gz", proj)
		if len(r.Culprits) != 0 || len(r.Undecided) != 5 || r.Undecided[0].Name != "bravo.timer" {
			t.Fatalf("culprits %+v, undecided %d; want none, five undecided, bravo.timer first", r.Culprits, len(r.Undecided))
		}
		ev := evidence(&r, &r.Undecided[0])
		want := "may share a wake-up with alpha.timer, charlie.timer, delta.timer, echo.timer (their AccuracySec= windows overlap, so systemd may start them together): " +
			"the one with the most work, bravo.timer (152.0 MiB an episode, median of its I/O and memory taken), did less than twice charlie.timer's (100.0 MiB), so none stands out: correlation does not rank them; RandomizedDelaySec="
		if !slices.ContainsFunc(ev, func(e string) bool { return strings.HasPrefix(e, want) }) {
			t.Errorf("evidence %q lacks %q", ev, want)
		}
		var b strings.Builder
		verdict(&b, &r, false, "- ")
		for _, want := range []string{
			"Undecided: bravo.timer, charlie.timer, delta.timer, echo.timer and alpha.timer fired together in the episodes they explain (3 of 3), and the one with the most work, bravo.timer (152.0 MiB an episode, median of its I/O and memory taken), did less than twice charlie.timer's (100.0 MiB), so none stands out;",
			"and the page-cache chain was not traced. None of them is named;",
			"? bravo.timer — systemd timer, undecided with alpha.timer, charlie.timer, delta.timer and echo.timer: not named (correlation score 0.68, which does not tell them apart)\n",
			"- tell it from alpha.timer, charlie.timer, delta.timer and echo.timer first: sudo memdiag confirm --job bravo.timer -- LOAD runs your load test in turns with it held off and with it back",
		} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("verdict lacks %q:\n%s", want, b.String())
			}
		}
		if strings.Contains(b.String(), "reschedule it out of busy hours") {
			t.Errorf("verdict advises fixes to undecided jobs:\n%s", b.String())
		}
		if got, want := verdictLine(&r), "undecided between bravo.timer, charlie.timer, delta.timer, echo.timer and alpha.timer, fired together: they explain 3 of 3 episodes; correlation cannot tell which of them took the memory"; got != want {
			t.Errorf("verdict line %q, want %q", got, want)
		}
	})
	t.Run("chain", func(t *testing.T) {
		// Issue 25's O_DIRECT case, traced: the buffered reader is named
		// with the chain it set off; the O_DIRECT reader is not, for what
		// the chain shows.
		r := analyzeFile(t, "scenarios/12-chain-direct-io.jsonl.gz", proj)
		if len(r.Culprits) != 1 || r.Culprits[0].Name != "buffered.timer" {
			t.Fatalf("culprits %+v; want buffered.timer alone", r.Culprits)
		}
		want := "traced chain, episode 1: it added 512.0 MiB to the page cache from 12:00:20 to 12:00:28; reclaim took 80.0 MiB of web.service's file pages in those seconds, 64.0 MiB of them by its own reclaim (100% of the loss is on its account); web.service's tasks spent 1.2s in reclaim and refaulted 48.0 MiB (the chain judged 6 of its 6 credits)"
		if ev := evidence(&r, &r.Culprits[0]); !slices.Contains(ev, want) {
			t.Errorf("evidence %q\nlacks %q", ev, want)
		}
		var why string
		for _, nr := range r.NotRun {
			if nr.Name == "direct.timer" && nr.Ran != nil {
				why = ranUnnamedReason(nr.Kind, nr.Ran)
			}
		}
		if want := "ran (6 recorded processes) and did enough I/O in 6 episodes to be credited by correlation, but the traced page-cache chain shows it cost the victim too little there: it added 0 B"; !strings.HasPrefix(why, want) {
			t.Errorf("direct.timer not named because %q; want %q…", why, want)
		}
	})
	t.Run("cron", func(t *testing.T) {
		r := analyzeFile(t, "scenarios/10-cron-evidence.jsonl.gz", proj)
		if len(r.Culprits) != 1 {
			t.Fatalf("culprits %+v; want the cron line", r.Culprits)
		}
		for _, e := range evidence(&r, &r.Culprits[0]) {
			if strings.Contains(e, "not enabled") || strings.Count(e, "dd") > 1 {
				t.Errorf("false or repeated evidence: %q", e)
			}
		}
	})
	t.Run("did-not-run", func(t *testing.T) {
		r := analyzeFile(t, "scenarios/03-did-not-run.jsonl.gz", proj)
		var got []string
		for _, nr := range r.NotRun {
			got = append(got, nr.Name+": "+notRunReason(nr))
		}
		want := []string{
			"report.timer: cannot run here: does not fire now: PID 1 is not systemd",
			"decoy.timer: scheduled but did not run: 5 of its firings fell near episodes, but no process of it was recorded",
		}
		if !slices.Equal(got, want) {
			t.Errorf("not run %q; want %q", got, want)
		}
	})
}

// A job that cannot run here says why with the sentence memdiag timers
// --all gives (timers.Runs), never "scheduled but did not run"; an active
// one that did not run still is "scheduled but did not run".
func TestNotRunReasonInactive(t *testing.T) {
	why := "does nothing when booted with systemd (sbin/init is systemd): the command checks /run/systemd/system and its systemd unit does the work"
	inactive := correlate.NotRun{Name: "cron.d/sysstat:6", FiringsNear: 3,
		Job: &timers.Job{Name: "cron.d/sysstat:6", Source: timers.Cron, Active: false, Reason: why}}
	if got, want := notRunReason(inactive), "cannot run here: "+why; got != want {
		t.Errorf("inactive job: %q; want %q", got, want)
	}
	active := inactive
	active.Job = &timers.Job{Name: "cron.d/sysstat:6", Source: timers.Cron, Active: true}
	if got, want := notRunReason(active), "scheduled but did not run: 3 of its firings fell near episodes, but no process of it was recorded"; got != want {
		t.Errorf("active job: %q; want %q", got, want)
	}
	// Trial s6's runD: on a host where PID 1 is not systemd and no cron
	// daemon runs, timers --all said the guarded line "would run now
	// (systemd is not running, …)" and analyze "inactive, it cannot run
	// here: does nothing when booted with systemd". Both now say what
	// timers.Runs says: that no cron daemon runs it.
	live := timers.Job{Name: "cron.d/sysstat:6", Source: timers.Cron, Active: false, Reason: why, StepsAside: true}
	lives := []timers.Job{live}
	timers.ApplyRunning(lives, timers.Running{Systemd: false, Init: "process_api", Cron: false})
	runs, liveWhy := timers.Runs(&lives[0])
	if runs || !strings.HasPrefix(liveWhy, "does not run now: no cron daemon is running") {
		t.Fatalf("timers.Runs: %v %q; want false, no cron daemon", runs, liveWhy)
	}
	nr := correlate.NotRun{Name: live.Name, Job: &lives[0], FiringsNear: 3}
	if got, want := notRunReason(nr), "cannot run here: "+liveWhy; got != want {
		t.Errorf("live host without cron: %q; want %q", got, want)
	}
	// The same line as runD's header recorded it, before runs_now.
	old := live
	old.LiveNote = "would run now (systemd is not running, so its /run/systemd/system check lets it through), but no cron daemon is running"
	nr.Job = &old
	if got, want := notRunReason(nr), "cannot run here: "+old.LiveNote; got != want {
		t.Errorf("runD's header: %q; want %q", got, want)
	}
	// A cron daemon runs, systemd does not: the line runs; not "cannot run".
	lives = []timers.Job{live}
	timers.ApplyRunning(lives, timers.Running{Systemd: false, Init: "sh", Cron: true})
	nr.Job = &lives[0]
	if got := notRunReason(nr); !strings.HasPrefix(got, "scheduled but did not run: 3 of its firings") {
		t.Errorf("cron running: %q; want scheduled but did not run", got)
	}
}

// Under a cgroup scope the evidence says the share is of the I/O that can
// cause the group's reclaim, and what it left out.
func TestShareOf(t *testing.T) {
	const mib = 1 << 20
	host := &correlate.Proof{ShareScope: correlate.ScopeAll, Share: 0.091, Credits: []correlate.EpisodeCredit{{Bytes: 40 * mib, AllBytes: 440 * mib}}}
	if got := shareOf(host, host.Share); got != "9% of all recorded processes' I/O (median)" {
		t.Errorf("host scope: %q", got)
	}
	cg := &correlate.Proof{ShareScope: correlate.ScopeCgroup, Share: 0.917, Credits: []correlate.EpisodeCredit{
		{Bytes: 40 * mib, AllBytes: 40 * mib, OutsideBytes: 400 * mib},
		{Bytes: 40 * mib, AllBytes: 48 * mib, OutsideBytes: 200 * mib, UnknownBytes: 8 * mib},
	}}
	want := "92% (median) of the I/O of the processes that can cause the cgroup's reclaim (in it, below it or in a non-root ancestor; 300.0 MiB per episode by processes outside it left out; 8.0 MiB of its own by processes whose cgroup was not recorded)"
	if got := shareOf(cg, cg.Share); got != want {
		t.Errorf("cgroup scope:\n got %q\nwant %q", got, want)
	}
}

// A job that ran only outside the --cgroup group is listed under "Not
// named" with that reason, in the text and in JSON's not_run[] with its
// numbers.
func TestNotRunOutsideScope(t *testing.T) {
	r := reference()
	r.PSIScope = correlate.PSICgroup
	r.NotRun = []correlate.NotRun{{Name: "tenant.timer", Job: &timers.Job{Name: "tenant.timer", Source: timers.Systemd, Active: true},
		OutsideScope: &correlate.RanOutside{Group: "/sys/fs/cgroup/memory/app", Cgroups: []string{"/system.slice/tenant.service"},
			Processes: 9, Episodes: 9, Bytes: 3600 * mib}}}
	want := "ran, but outside the analysed cgroup: its 9 recorded processes ran in /system.slice/tenant.service, " +
		"not in /sys/fs/cgroup/memory/app or a cgroup that contains it; they did 3.5 GiB of I/O in 9 of the group's episodes, " +
		"which a process outside the group cannot turn into reclaim at the group's limit (only host-wide reclaim and disk contention): not credited with them"
	if got := notRunReason(r.NotRun[0]); got != want {
		t.Errorf("reason:\n%s\nwant\n%s", got, want)
	}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Not named (1 of the recording's 3 periodic jobs):\n  - tenant.timer: "+want+".\n") {
		t.Errorf("text lacks the not-named line:\n%s", b.String())
	}
	b.Reset()
	if err := Render(&b, r, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var j struct {
		NotRun []struct {
			Name         string `json:"name"`
			Reason       string `json:"reason"`
			OutsideScope *struct {
				Group     string   `json:"group"`
				Cgroups   []string `json:"cgroups"`
				Processes int      `json:"processes"`
				Episodes  int      `json:"episodes"`
				Bytes     uint64   `json:"bytes"`
			} `json:"outside_scope"`
		} `json:"not_run"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.NotRun) != 1 || j.NotRun[0].OutsideScope == nil || j.NotRun[0].OutsideScope.Bytes != 3600*mib ||
		j.NotRun[0].OutsideScope.Episodes != 9 || j.NotRun[0].OutsideScope.Cgroups[0] != "/system.slice/tenant.service" {
		t.Errorf("json not_run %+v", j.NotRun)
	}
}

// Under a cgroup scope a process culprit's evidence says how much of its
// I/O rests on processes whose cgroup was not recorded, as a job's does.
func TestProcessEvidenceUnknownCgroup(t *testing.T) {
	r := reference()
	c := correlate.Culprit{Rank: 1, Name: "pressure.py", Kind: correlate.KindProcess, EpisodesTotal: 4, EpisodesExplained: 2, Period: time.Minute,
		Processes: []correlate.ProcActivity{{Program: "pressure.py", WriteBytes: 600 * mib}},
		Proof: &correlate.Proof{ProcessesRecorded: true, Ran: true, ShareScope: correlate.ScopeCgroup,
			Credits: []correlate.EpisodeCredit{{Episode: 1, Bytes: 300 * mib, AllBytes: 300 * mib, Share: 1, UnknownBytes: 300 * mib},
				{Episode: 3, Bytes: 300 * mib, AllBytes: 300 * mib, Share: 1, UnknownBytes: 100 * mib}}}}
	want := "400.0 MiB of its 600.0 MiB in the credited episodes was done by processes whose cgroup was not recorded: counted, as they may be in the cgroup"
	if ev := evidence(&r, &c); !slices.Contains(ev, want) {
		t.Errorf("evidence %q lacks %q", ev, want)
	}
	c.Proof.ShareScope = correlate.ScopeAll
	if ev := evidence(&r, &c); slices.ContainsFunc(ev, func(e string) bool { return strings.Contains(e, "cgroup was not recorded") }) {
		t.Errorf("host scope: evidence %q speaks of cgroups", ev)
	}
}

// Every job the verdict does not name is in "Not named", with the same
// reason in the text, JSON's not_run[] and the HTML page: scenario 4's
// bystanders ran in every episode (16 KiB and 10 KiB against heavy.timer's
// 768 MiB) and were left out silently before.
func TestNotNamedTextJSONHTML(t *testing.T) {
	r := analyzeFile(t, "scenarios/04-bystander.jsonl.gz", correlate.Options{Project: timers.Project})
	const sleeper = "sleeper.timer: ran (8 recorded processes), but did too little in the episodes to be credited with one: " +
		"at most 16.0 KiB of I/O and under 1% of an episode's I/O in any one (it did I/O in 4 of 4 episodes); a credit needs 4.0 MiB and 25%."
	const tick = "cron.d/tick:1: ran (4 recorded processes), but did too little in the episodes to be credited with one: " +
		"at most 10.0 KiB of I/O and under 1% of an episode's I/O in any one (it did I/O in 4 of 4 episodes); a credit needs 4.0 MiB and 25%."
	var text bytes.Buffer
	if err := Render(&text, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "Not named (2 of the recording's 3 periodic jobs):\n  - " + sleeper + "\n  - " + tick + "\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks\n%s\ngot\n%s", want, text.String())
	}
	var js bytes.Buffer
	if err := Render(&js, r, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var j struct {
		NotRun []struct {
			Name, Kind, Reason string
			Ran                *struct {
				Processes, Episodes int
				MaxBytes            uint64 `json:"max_bytes"`
			}
		} `json:"not_run"`
	}
	if err := json.Unmarshal(js.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.NotRun) != 2 || j.NotRun[0].Name+": "+j.NotRun[0].Reason+"." != sleeper || j.NotRun[1].Name+": "+j.NotRun[1].Reason+"." != tick ||
		j.NotRun[0].Kind != "ran_below_credit" || j.NotRun[0].Ran == nil || j.NotRun[0].Ran.MaxBytes != 16376 || j.NotRun[0].Ran.Processes != 8 {
		t.Errorf("JSON not_run: %+v", j.NotRun)
	}
	page, _ := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{}) })
	// The page holds the Markdown verdict rendered; these lines need no
	// escaping.
	for _, w := range []string{"Not named (2 of the recording's 3 periodic jobs):", sleeper, tick} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

// A timer whose unit runs outside the analysed group says so, and the
// timers of one slice share a line.
func TestNotNamedOtherCgroup(t *testing.T) {
	const group = "/sys/fs/cgroup/unified/s6trial"
	r := correlate.Result{Episodes: []correlate.Episode{{Index: 0}}, NotRun: []correlate.NotRun{
		{Name: "s6-export.timer", Kind: correlate.NotRunOtherCgroup, Cgroup: "/s6app.slice/s6-export.service", Group: group},
		{Name: "s6-stats.timer", Kind: correlate.NotRunOtherCgroup, Cgroup: "/s6app.slice/s6-stats.service", Group: group},
		{Name: "man-db.timer", Kind: correlate.NotRunOtherCgroup, Cgroup: "/system.slice/man-db.service", Group: group},
	}}
	var b strings.Builder
	notNamedText(&b, &r, "  - ")
	want := "\nNot named (3 of the recording's 3 periodic jobs):\n" +
		"  - s6-export.timer, s6-stats.timer (2 jobs): cannot run in the analysed cgroup: its unit runs under /s6app.slice (its Slice=), not in " + group + " or a cgroup that contains it.\n" +
		"  - man-db.timer: cannot run in the analysed cgroup: its unit runs under /system.slice (its Slice=), not in " + group + " or a cgroup that contains it.\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
