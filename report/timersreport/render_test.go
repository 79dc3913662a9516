package timersreport

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/timers"
)

// TestRenderNever: the listing says "never" for a schedule that cannot
// match, in the table and as "never": true in JSON, and lists --next 5
// leap days.
func TestRenderNever(t *testing.T) {
	jobs := []timers.Job{
		{Name: "feb30.timer", Source: timers.Systemd, Schedule: []string{"*-02-30"}, Active: true},
		{Name: "leap.timer", Source: timers.Systemd, Schedule: []string{"*-02-29"}, Active: true},
	}
	o := RenderOptions{View: timers.View{Base: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), Loc: time.UTC}, Next: 5}
	var b strings.Builder
	if err := RenderJobs(&b, jobs, format.Table, o); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`feb30\.timer .*│ never `).MatchString(b.String()) || !strings.Contains(b.String(), "2044-02-29 00:00") {
		t.Errorf("want never for *-02-30 and five leap days for *-02-29:\n%s", b.String())
	}
	b.Reset()
	if err := RenderJobs(&b, jobs, format.JSON, o); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), `"never": true`) != 1 {
		t.Errorf("want one \"never\": true:\n%s", b.String())
	}
}

// Projected firings of jobs the live host cannot run now say so: a line
// above the table (which a narrow terminal keeps) and the NOTE column.
func TestRenderFiringsIdle(t *testing.T) {
	jobs := []timers.Job{
		{Name: "sysstat-collect.timer", Source: timers.Systemd, Active: true, Command: "/usr/lib/sysstat/debian-sa1 1 1"},
		{Name: "crontab:18", Source: timers.Cron, Active: true, Command: "run-parts /etc/cron.hourly"},
	}
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	fs := []timers.Firing{
		{Job: "sysstat-collect.timer", Planned: at, Earliest: at, Latest: at},
		{Job: "crontab:18", Planned: at.Add(17 * time.Minute), Earliest: at.Add(17 * time.Minute), Latest: at.Add(17 * time.Minute)},
	}
	render := func(js []timers.Job, f format.Format) string {
		var b strings.Builder
		if err := RenderFirings(&b, fs, js, f, RenderOptions{Width: 200}, at, at.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if out := render(jobs, format.Table); strings.Contains(out, "will not happen") || strings.Contains(out, "None of these") {
		t.Errorf("a host that runs them: no idle line, got\n%s", out)
	}
	timers.ApplyRunning(jobs, timers.Running{Systemd: false, Init: "process_api", Cron: false})
	out := render(jobs, format.Table)
	head := `None of these 2 firings will happen on this host now (projected from the files): does not fire now: systemd is not running (PID 1 is "process_api"); does not run now: no cron daemon is running.`
	if !strings.HasPrefix(out, head+"\n") {
		t.Errorf("table does not start with\n%s\ngot\n%s", head, out)
	}
	for _, row := range []string{`sysstat-collect.timer`, `crontab:18`} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, row) && (strings.Contains(l, "does not fire now") || strings.Contains(l, "does not run now")) {
				found = true
			}
		}
		if !found {
			t.Errorf("row %s has no live note:\n%s", row, out)
		}
	}
	jobs[1].IdleNow, jobs[1].LiveNote = false, ""
	if out := render(jobs, format.Table); !strings.HasPrefix(out, `1 of these 2 firings will not happen on this host now (projected from the files; NOTE says which): does not fire now: systemd is not running (PID 1 is "process_api").`+"\n") {
		t.Errorf("one idle of two:\n%s", out)
	}
	js := render(jobs, format.JSON)
	if !strings.Contains(js, `"idle_now": true`) || strings.Count(js, `"idle_now"`) != 1 {
		t.Errorf("JSON: want idle_now on the systemd firing only:\n%s", js)
	}
	if csv := render(jobs, format.CSV); strings.Contains(csv, "will not happen") {
		t.Errorf("CSV holds only the table:\n%s", csv)
	}
}

// TestRenderUnpredictable (issue 30.7): apt-daily.timer (Debian apt 2.6.2:
// OnCalendar=*-*-* 6,18:00, RandomizedDelaySec=12h) may start up to 12 h
// after each planned time, as long as its period: its NEXT is marked, a
// legend says why, and JSON says so. apt-daily-upgrade.timer's 60 min on
// a day is not marked.
func TestRenderUnpredictable(t *testing.T) {
	jobs, err := timers.Inventory(filepath.Join("..", "..", "testdata", "timers", "debian"), timers.InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var shown []timers.Job
	for _, j := range jobs {
		if j.Name == "apt-daily.timer" || j.Name == "apt-daily-upgrade.timer" {
			shown = append(shown, j)
		}
	}
	o := RenderOptions{View: timers.View{Base: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), Loc: time.UTC}, Next: 2}
	var b strings.Builder
	if err := RenderJobs(&b, shown, format.Table, o); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"2026-12-05~18:00", "2026-12-06~06:00", "\n~ "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Count(out, "~") != 3 {
		t.Errorf("want only apt-daily.timer's two times marked, and the legend:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "~") && len([]rune(l)) > 80 {
			t.Errorf("legend %q is %d columns, want at most 80", l, len([]rune(l)))
		}
	}
	b.Reset()
	if err := RenderJobs(&b, shown, format.JSON, o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs []struct {
			Name          string  `json:"name"`
			DelayS        float64 `json:"randomized_delay_s"`
			Unpredictable bool    `json:"unpredictable"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	for _, j := range doc.Jobs {
		want := map[string]float64{"apt-daily.timer": 43200, "apt-daily-upgrade.timer": 3600}[j.Name]
		if j.DelayS != want || j.Unpredictable != (j.Name == "apt-daily.timer") {
			t.Errorf("%s: randomized_delay_s %v unpredictable %v; want %v, %v", j.Name, j.DelayS, j.Unpredictable, want, j.Name == "apt-daily.timer")
		}
	}
}

// TestActiveColumn: timers --all's ACTIVE column starts with what
// timers.Runs says, on a host where PID 1 is not systemd and no cron
// daemon runs, and on one where cron runs a line guarded for systemd.
func TestActiveColumn(t *testing.T) {
	guard := "does nothing when booted with systemd (sbin/init is systemd): the command checks /run/systemd/system and its systemd unit does the work"
	jobs := func() []timers.Job {
		return []timers.Job{
			{Name: "sysstat-collect.timer", Source: timers.Systemd, Active: true},
			{Name: "pmfind.timer", Source: timers.Systemd, Reason: "nothing pulls it in"},
			{Name: "cron.d/e2scrub_all:1", Source: timers.Cron, Reason: guard, StepsAside: true},
		}
	}
	js := jobs()
	timers.ApplyRunning(js, timers.Running{Systemd: false, Init: "process_api", Cron: false})
	for i, want := range []string{
		`no: does not fire now: systemd is not running (PID 1 is "process_api")`,
		"no: nothing pulls it in",
		"no: does not run now: no cron daemon is running (were one running, its /run/systemd/system check would let it through: systemd is not running)",
	} {
		if got := whyString(js[i]); !strings.HasPrefix(got, want) {
			t.Errorf("%s: ACTIVE %q; want it to start with %q", js[i].Name, got, want)
		}
	}
	js = jobs()
	timers.ApplyRunning(js, timers.Running{Systemd: false, Init: "sh", Cron: true})
	if got := whyString(js[2]); !strings.HasPrefix(got, "yes: runs now after all") || !strings.HasSuffix(got, "; its files: "+guard) {
		t.Errorf("cron running: guarded line ACTIVE %q", got)
	}
}

// TestRenderNotListed: jobs left out because they do not run here are
// counted under the table — an empty table says that no job runs, not
// that there is none — and each line fits 80 columns.
func TestRenderNotListed(t *testing.T) {
	jobs := []timers.Job{
		{Name: "crontab:3", Source: timers.Cron, Schedule: []string{"*/5 * * * *"}, Command: "/usr/local/bin/backup"},
		{Name: "crontab:4", Source: timers.Cron, Schedule: []string{"0 3 * * *"}, Command: "/usr/local/bin/rotate"},
	}
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	l := &timers.List{Listing: timers.NewListing(jobs, false, base, time.UTC), View: timers.View{Base: base, Loc: time.UTC}}
	if len(l.Jobs) != 0 || l.NotListed != 2 {
		t.Fatalf("listing: %d jobs, %d not listed; want 0, 2", len(l.Jobs), l.NotListed)
	}
	var b strings.Builder
	if err := Write(&b, l, format.Table, RenderOptions{Next: 1, Width: 80}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No periodic job runs here.\n", "Not listed: 2 periodic jobs that do not run here (--all lists them, with why).\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	if got := notListedLines(1, 3); len(got) != 1 || got[0] != "Not listed: 1 periodic job that does not run here (--all lists it, with why)." {
		t.Errorf("one of three: %q", got)
	}
	b.Reset()
	if err := Write(&b, l, format.JSON, RenderOptions{Next: 1}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NotListed int `json:"not_listed"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil || doc.NotListed != 2 {
		t.Errorf("JSON not_listed = %d (%v), want 2:\n%s", doc.NotListed, err, b.String())
	}
}

// TestRenderCatchUp: Debian's logrotate.timer (daily, Persistent=true)
// last triggered on Dec 1 and not running now owes the run of Dec 2's
// elapse: the NOTE says it, JSON gives it as catch_up; the same timer
// active in a live systemd (which has given it that run) and one last
// triggered after the latest elapse owe nothing.
func TestRenderCatchUp(t *testing.T) {
	jobs, err := timers.Inventory(filepath.Join("..", "..", "testdata", "timers", "debian"), timers.InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lr timers.Job
	for _, j := range jobs {
		if j.Name == "logrotate.timer" {
			lr = j
		}
	}
	last := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	lr.LastTrigger = &last
	running, recent := lr, lr
	running.LiveActive = new(true)
	recent.Name = "recent.timer"
	recent.LastTrigger = new(time.Date(2026, 12, 5, 0, 20, 0, 0, time.UTC))
	o := RenderOptions{View: timers.View{Base: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), Loc: time.UTC}}
	var b strings.Builder
	if err := RenderJobs(&b, []timers.Job{lr, recent}, format.Table, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Persistent=true: missed 2026-12-02 00:00 (last run 2026-12-01 03:00): runs at boot",
		"│ at boot!  ", // NEXT: the run owed first, before the next elapse
		"\n! missed a run since LAST (Persistent=true): runs when the timer starts (NOTE)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("want %q (logrotate.timer):\n%s", want, b.String())
		}
	}
	if strings.Count(b.String(), "Persistent=true:") != 1 {
		t.Errorf("want logrotate.timer's note only, not recent.timer's:\n%s", b.String())
	}
	// Not pulled in at boot: it runs when someone starts it.
	idle := lr
	idle.Active = false
	b.Reset()
	if err := RenderJobs(&b, []timers.Job{idle}, format.Table, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "runs when the timer is next started (nothing pulls it in at boot)") ||
		!strings.Contains(b.String(), "│ on start! ") {
		t.Errorf("an inactive timer's note and NEXT should not say at boot:\n%s", b.String())
	}
	// RandomizedDelaySec= delays the run owed too (systemd.timer(5)).
	delayed := lr
	delayed.RandomizedDelaySec = 12 * time.Hour
	b.Reset()
	if err := RenderJobs(&b, []timers.Job{delayed}, format.Table, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "runs at boot, plus up to RandomizedDelaySec=12h") {
		t.Errorf("want the random delay said:\n%s", b.String())
	}
	for _, c := range []struct {
		job    timers.Job
		missed string // "" when nothing is owed
	}{{lr, "2026-12-02T00:00:00Z"}, {running, ""}, {recent, ""}} {
		b.Reset()
		if err := RenderJobs(&b, []timers.Job{c.job}, format.JSON, o); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Jobs []struct {
				CatchUp *struct {
					Missed      string `json:"missed"`
					LastTrigger string `json:"last_trigger"`
				} `json:"catch_up"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal([]byte(b.String()), &doc); err != nil || len(doc.Jobs) != 1 {
			t.Fatalf("%v: %s", err, b.String())
		}
		cu := doc.Jobs[0].CatchUp
		switch {
		case c.missed == "" && cu != nil:
			t.Errorf("%s (live active %v): catch_up %+v, want none", c.job.Name, c.job.LiveActive != nil, *cu)
		case c.missed != "" && (cu == nil || cu.Missed != c.missed || cu.LastTrigger != "2026-12-01T03:00:00Z"):
			t.Errorf("%s: catch_up %+v, want missed %s, last_trigger 2026-12-01T03:00:00Z", c.job.Name, cu, c.missed)
		}
	}
}
