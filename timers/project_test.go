package timers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goldenfile "github.com/memdiag/memdiag/internal/golden"
)

// golden.Updating (MEMDIAG_UPDATE_GOLDEN=1) rewrites the golden file.

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

// roundTrip stores a job the way a recording's header does and reads it
// back, so Project is tested on a Job alone.
func roundTrip(t *testing.T, j Job) Job {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var out Job
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProjectDebian(t *testing.T) {
	jobs := inventory(t, fixture(t, "debian"))
	pick := func(names ...string) []Job {
		var out []Job
		for _, n := range names {
			out = append(out, roundTrip(t, jobs[n]))
		}
		return out
	}
	f := func(job, planned, earliest, latest string) Firing {
		return Firing{Job: job, Planned: utc(planned), Earliest: utc(earliest), Latest: utc(latest)}
	}
	t.Run("pmlogger_check and sysstat-collect, sorted", func(t *testing.T) {
		got := Project(pick("sysstat-collect.timer", "pmlogger_check.timer"), utc("2026-11-29 12:00:00"), utc("2026-11-29 13:00:00"), time.UTC)
		want := []Firing{
			f("sysstat-collect.timer", "2026-11-29 12:00:00", "2026-11-29 12:00:00", "2026-11-29 12:01:00"),
			f("sysstat-collect.timer", "2026-11-29 12:10:00", "2026-11-29 12:10:00", "2026-11-29 12:11:00"),
			f("sysstat-collect.timer", "2026-11-29 12:20:00", "2026-11-29 12:20:00", "2026-11-29 12:21:00"),
			f("pmlogger_check.timer", "2026-11-29 12:25:00", "2026-11-29 12:25:00", "2026-11-29 12:26:00"),
			f("sysstat-collect.timer", "2026-11-29 12:30:00", "2026-11-29 12:30:00", "2026-11-29 12:31:00"),
			f("sysstat-collect.timer", "2026-11-29 12:40:00", "2026-11-29 12:40:00", "2026-11-29 12:41:00"),
			f("sysstat-collect.timer", "2026-11-29 12:50:00", "2026-11-29 12:50:00", "2026-11-29 12:51:00"),
			f("pmlogger_check.timer", "2026-11-29 12:55:00", "2026-11-29 12:55:00", "2026-11-29 12:56:00"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Project (-want +got):\n%s", diff)
		}
	})
	t.Run("anacron.timer: accuracy and randomized delay", func(t *testing.T) {
		got := Project(pick("anacron.timer"), utc("2026-11-29 22:00:00"), utc("2026-11-30 08:00:00"), time.UTC)
		want := []Firing{
			f("anacron.timer", "2026-11-29 22:30:00", "2026-11-29 22:30:00", "2026-11-29 22:36:00"),
			f("anacron.timer", "2026-11-29 23:30:00", "2026-11-29 23:30:00", "2026-11-29 23:36:00"),
			f("anacron.timer", "2026-11-30 07:30:00", "2026-11-30 07:30:00", "2026-11-30 07:36:00"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Project (-want +got):\n%s", diff)
		}
	})
	t.Run("anacron jobs run at the first anacron.timer elapse plus their delay", func(t *testing.T) {
		got := Project(pick("anacron:cron.daily", "anacron:cron.weekly", "anacron:cron.monthly"), utc("2026-11-29 00:00:00"), utc("2026-12-03 00:00:00"), time.UTC)
		want := []Firing{
			f("anacron:cron.daily", "2026-11-29 07:35:00", "2026-11-29 07:35:00", "2026-11-29 07:41:00"),
			f("anacron:cron.daily", "2026-11-30 07:35:00", "2026-11-30 07:35:00", "2026-11-30 07:41:00"),
			f("anacron:cron.daily", "2026-12-01 07:35:00", "2026-12-01 07:35:00", "2026-12-01 07:41:00"),
			f("anacron:cron.monthly", "2026-12-01 07:45:00", "2026-12-01 07:45:00", "2026-12-01 07:51:00"),
			f("anacron:cron.daily", "2026-12-02 07:35:00", "2026-12-02 07:35:00", "2026-12-02 07:41:00"),
			// last run 2026-11-25 (var/spool/anacron/cron.weekly) + 7 days
			f("anacron:cron.weekly", "2026-12-02 07:40:00", "2026-12-02 07:40:00", "2026-12-02 07:46:00"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Project (-want +got):\n%s", diff)
		}
	})
	t.Run("monotonic-only timers project nothing", func(t *testing.T) {
		if got := Project(pick("systemd-tmpfiles-clean.timer"), utc("2026-11-29 00:00:00"), utc("2026-12-29 00:00:00"), time.UTC); len(got) != 0 {
			t.Errorf("got %d firings, want none", len(got))
		}
	})
	t.Run("Next", func(t *testing.T) {
		got := Next(jobs["pmlogger_check.timer"], utc("2026-11-29 12:25:00"), 3, time.UTC)
		var planned []time.Time
		for _, x := range got {
			planned = append(planned, x.Planned)
		}
		want := []time.Time{utc("2026-11-29 12:55:00"), utc("2026-11-29 13:25:00"), utc("2026-11-29 13:55:00")}
		if diff := cmp.Diff(want, planned); diff != "" {
			t.Errorf("Next (-want +got):\n%s", diff)
		}
	})
}

func TestProjectCronAndZones(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	jobs := []Job{
		{Name: "cron", Source: Cron, Schedule: []string{"0 2 * * *"}},
		{Name: "cron-reboot", Source: Cron, Schedule: []string{"@reboot"}},
		{Name: "tokyo", Source: Systemd, Schedule: []string{"*-*-* 09:00"}, TimeZone: "Asia/Tokyo", AccuracySec: time.Minute},
	}
	got := Project(jobs, utc("2026-11-29 12:00:00"), utc("2026-11-30 12:00:00"), berlin)
	want := []Firing{
		// 09:00 JST is 00:00 UTC, whatever loc says.
		{Job: "tokyo", Planned: utc("2026-11-30 00:00:00"), Earliest: utc("2026-11-30 00:00:00"), Latest: utc("2026-11-30 00:01:00")},
		// 02:00 CET is 01:00 UTC.
		{Job: "cron", Planned: utc("2026-11-30 01:00:00"), Earliest: utc("2026-11-30 01:00:00"), Latest: utc("2026-11-30 01:01:00")},
	}
	opt := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	if diff := cmp.Diff(want, got, opt); diff != "" {
		t.Errorf("Project (-want +got):\n%s", diff)
	}
}

// TestProjectAnacronStartHours: a job runs only when the trigger fires
// inside START_HOURS_RANGE.
func TestProjectAnacronStartHours(t *testing.T) {
	j := Job{Name: "anacron:x", Source: Anacron, Schedule: []string{"1"}, Trigger: []string{"cron:30 * * * *"},
		Delay: 10 * time.Minute, StartHoursRange: "3-22", RandomizedDelaySec: 45 * time.Minute}
	got := Project([]Job{j}, utc("2026-11-29 00:00:00"), utc("2026-11-30 12:00:00"), time.UTC)
	want := []Firing{
		{Job: "anacron:x", Planned: utc("2026-11-29 03:40:00"), Earliest: utc("2026-11-29 03:40:00"), Latest: utc("2026-11-29 04:25:00")},
		{Job: "anacron:x", Planned: utc("2026-11-30 03:40:00"), Earliest: utc("2026-11-30 03:40:00"), Latest: utc("2026-11-30 04:25:00")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Project (-want +got):\n%s", diff)
	}
}

// oracleBase is the --base-time of the systemd-analyze oracle.
var oracleBase = utc("2026-11-29 12:00:00")

var analyzeTime = regexp.MustCompile(`(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC`)

// analyze runs systemd-analyze calendar for expr in UTC.
func analyze(t *testing.T, bin, expr string) []string {
	t.Helper()
	cmd := exec.Command(bin, "calendar", "--base-time=2026-11-29 12:00:00 UTC", "--iterations=5", expr)
	cmd.Env = append(os.Environ(), "TZ=UTC", "SYSTEMD_COLORS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze calendar %q: %v\n%s", expr, err, out)
	}
	var got []string
	for _, m := range analyzeTime.FindAllStringSubmatch(string(out), -1) {
		got = append(got, m[1])
	}
	return got
}

// TestOnCalendarOracleDebian compares the next five firings of every
// OnCalendar= of the Debian packages' timer units (testdata/timers/debian)
// with `systemd-analyze calendar --base-time`. Where systemd-analyze is
// missing the kept golden values (from systemd 252) are used; MEMDIAG_UPDATE_GOLDEN=1
// rewrites them from systemd-analyze.
func TestOnCalendarOracleDebian(t *testing.T) {
	golden := filepath.Join("..", "testdata", "timers", "oracle", "debian-oncalendar.json")
	jobs := inventory(t, fixture(t, "debian"))
	var exprs []string
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Source != Systemd {
			continue
		}
		for _, s := range j.Schedule {
			if !isMonotonicDesc(s) && !seen[s] {
				seen[s] = true
				exprs = append(exprs, s)
			}
		}
	}
	sort.Strings(exprs)
	if len(exprs) < 15 {
		t.Fatalf("only %d expressions found", len(exprs))
	}
	want := map[string][]string{}
	bin, err := exec.LookPath("systemd-analyze")
	switch {
	case err == nil:
		for _, e := range exprs {
			want[e] = analyze(t, bin, e)
		}
		if goldenfile.Updating() {
			b, _ := json.MarshalIndent(want, "", "  ")
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	default:
		t.Logf("systemd-analyze not found (%v); comparing with %s", err, golden)
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range exprs {
		w, ok := want[e]
		if !ok || len(w) != oracleIterations {
			t.Errorf("%q: oracle has %d values", e, len(w))
			continue
		}
		var got []string
		for _, f := range Next(Job{Name: e, Source: Systemd, Schedule: []string{e}}, oracleBase, oracleIterations, time.UTC) {
			got = append(got, f.Planned.UTC().Format("2006-01-02 15:04:05"))
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("OnCalendar=%s (-systemd-analyze +memdiag):\n%s", e, diff)
		}
	}
	// The golden file must agree with systemd-analyze when both exist.
	if b, err := os.ReadFile(golden); err == nil && bin != "" {
		var kept map[string][]string
		if err := json.Unmarshal(b, &kept); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, kept); diff != "" {
			t.Errorf("%s is stale (run with MEMDIAG_UPDATE_GOLDEN=1) (-systemd-analyze +golden):\n%s", golden, diff)
		}
	}
}

// TestProjectContextCancelled: a cancelled projection of a job firing
// every second over eight weeks (4.8 million firings, capped at a
// million) returns the context's cause and no firings.
func TestProjectContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted by SIGINT")
	cancel(stop)
	from := utc("2026-12-05 12:00:00")
	jobs := []Job{{Name: "fast.timer", Source: Systemd, Schedule: []string{"*:*:*"}}}
	fs, err := ProjectContext(ctx, jobs, from, from.AddDate(0, 0, 56), time.UTC)
	if !errors.Is(err, stop) || fs != nil {
		t.Errorf("ProjectContext = %d firings, %v; want none and %v", len(fs), err, stop)
	}
}
