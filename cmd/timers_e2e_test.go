package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/timers"
)

type e2eJob struct {
	Name          string   `json:"name"`
	Source        string   `json:"source"`
	Schedule      []string `json:"schedule"`
	PeriodSeconds *float64 `json:"period_seconds"`
	Next          []string `json:"next"`
	Command       string   `json:"command"`
	Scripts       []string `json:"scripts"`
	Active        bool     `json:"active"`
	ActiveVia     []string `json:"active_via"`
	Errors        []string `json:"errors"`
}

// listHost runs `memdiag timers -f json` on the real root "/".
func listHost(t *testing.T, args ...string) map[string]e2eJob {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &factory{IO: ios, Now: time.Now, Root: "/"}
	if code := execute(t.Context(), f, append([]string{"timers", "-f", "json"}, args...)); code != 0 {
		t.Fatalf("memdiag timers exit code %d; stderr:\n%s", code, errOut)
	}
	var doc struct {
		Jobs []e2eJob `json:"jobs"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := map[string]e2eJob{}
	for _, j := range doc.Jobs {
		m[j.Name] = j
	}
	return m
}

var analyzeLine = regexp.MustCompile(`(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \S+`)

// systemdAnalyze returns the next n elapses of expr after base from
// systemd-analyze calendar run in the host's zone, as UTC times.
func systemdAnalyze(t *testing.T, base time.Time, n int, expr string) []time.Time {
	t.Helper()
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.Unmet(t, "systemd-analyze (package systemd) is the oracle for next elapses: "+err.Error())
	}
	cmd := exec.Command(bin, "calendar", fmt.Sprintf("--base-time=@%d", base.Unix()), fmt.Sprintf("--iterations=%d", n), expr)
	zone := timers.HostZone("/")
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "TZ="+zone, "SYSTEMD_COLORS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze calendar %q: %v\n%s", expr, err, out)
	}
	var ts []time.Time
	for _, m := range analyzeLine.FindAllStringSubmatch(string(out), -1) {
		tt, err := time.ParseInLocation("2006-01-02 15:04:05", m[1], loc)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tt.UTC())
	}
	if len(ts) != n {
		t.Fatalf("systemd-analyze calendar %q: %d times in\n%s", expr, len(ts), out)
	}
	return ts
}

func parseNext(t *testing.T, ss []string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, s := range ss {
		tt, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tt.UTC())
	}
	return out
}

// TestTimersHostE2E lists the periodic jobs of this host after a real
// install of Debian's pcp, sysstat and cron (.ci/timers-setup.sh), with
// the default root "/" and without --all.
func TestTimersHostE2E(t *testing.T) {
	testenv.RequireRoot(t, "the real install of pcp/sysstat/cron done by .ci/timers-setup.sh")
	if _, err := os.Stat("/lib/systemd/system/pmlogger_check.timer"); err != nil {
		testenv.Unmet(t, "pcp is not installed (run .ci/timers-setup.sh as root): "+err.Error())
	}
	if b, err := os.ReadFile("/var/lib/memdiag-ci/timers-install"); err == nil {
		t.Logf("install method: %s", strings.TrimSpace(string(b)))
	} else {
		t.Logf("install method unknown (%v): pcp was installed by other means", err)
	}
	// A base time that is not a firing of any schedule below.
	base := time.Now().UTC().Truncate(time.Minute).Add(17 * time.Second)
	jobs := listHost(t, "--base-time", base.Format(time.RFC3339), "--next", "3")

	pc, ok := jobs["pmlogger_check.timer"]
	if !ok {
		t.Fatal("pmlogger_check.timer is not listed")
	}
	if diff := cmp.Diff([]string{"*-*-* *:25:00", "*-*-* *:55:00"}, pc.Schedule); diff != "" {
		t.Errorf("pmlogger_check.timer schedule (-want +got):\n%s", diff)
	}
	if pc.PeriodSeconds == nil || *pc.PeriodSeconds != 1800 {
		t.Errorf("pmlogger_check.timer period %v, want 1800 s", pc.PeriodSeconds)
	}
	if !pc.Active || len(pc.ActiveVia) < 2 || !strings.HasPrefix(pc.ActiveVia[len(pc.ActiveVia)-2], "pmlogger.service ") || !strings.Contains(pc.ActiveVia[len(pc.ActiveVia)-1], "BindsTo=") {
		t.Errorf("pmlogger_check.timer active=%v via %q; want pulled in by BindsTo= of pmlogger.service", pc.Active, pc.ActiveVia)
	}
	// Next elapses: the union of both lines, from systemd-analyze.
	a := append(systemdAnalyze(t, base, 3, "*-*-* *:25:00"), systemdAnalyze(t, base, 3, "*-*-* *:55:00")...)
	want := mergeFirst(a, 3)
	if diff := cmp.Diff(want, parseNext(t, pc.Next)); diff != "" {
		t.Errorf("pmlogger_check.timer next (-systemd-analyze +memdiag):\n%s", diff)
	}

	sc, ok := jobs["sysstat-collect.timer"]
	if !ok {
		t.Fatal("sysstat-collect.timer is not listed")
	}
	if sc.PeriodSeconds == nil || *sc.PeriodSeconds != 600 || !sc.Active {
		t.Errorf("sysstat-collect.timer period %v active %v, want 600 s and active", sc.PeriodSeconds, sc.Active)
	}
	if diff := cmp.Diff(systemdAnalyze(t, base, 3, sc.Schedule[0]), parseNext(t, sc.Next)); diff != "" {
		t.Errorf("sysstat-collect.timer next (-systemd-analyze +memdiag):\n%s", diff)
	}

	// The daily run-parts: /etc/crontab's line, or anacron's when installed.
	zone, err := timers.RootZone("/")
	if err != nil {
		t.Fatal(err)
	}
	loc := zone.Loc
	var daily *e2eJob
	for _, j := range jobs {
		if j.Active && strings.Contains(j.Command, "run-parts --report /etc/cron.daily") {
			j := j
			daily = &j
		}
	}
	if daily == nil {
		t.Fatal("no active job runs /etc/cron.daily")
	}
	if len(daily.Scripts) == 0 || daily.PeriodSeconds == nil || *daily.PeriodSeconds != 86400 {
		t.Errorf("%s: scripts %q period %v; want the cron.daily scripts and 1d", daily.Name, daily.Scripts, daily.PeriodSeconds)
	}
	if daily.Source == "cron" {
		// Independent of the cron parser: "M H * * *" fires at H:M local time.
		var m, h int
		if _, err := fmt.Sscanf(daily.Schedule[0], "%d %d * * *", &m, &h); err != nil {
			t.Fatalf("%s schedule %q: %v", daily.Name, daily.Schedule[0], err)
		}
		lb := base.In(loc)
		first := time.Date(lb.Year(), lb.Month(), lb.Day(), h, m, 0, 0, loc)
		if !first.After(base) {
			first = time.Date(lb.Year(), lb.Month(), lb.Day()+1, h, m, 0, 0, loc)
		}
		wantDaily := []time.Time{first.UTC(), time.Date(first.Year(), first.Month(), first.Day()+1, h, m, 0, 0, loc).UTC(), time.Date(first.Year(), first.Month(), first.Day()+2, h, m, 0, 0, loc).UTC()}
		if diff := cmp.Diff(wantDaily, parseNext(t, daily.Next)); diff != "" {
			t.Errorf("%s next (-want +got):\n%s", daily.Name, diff)
		}
	}
	t.Logf("cron.daily runs from %s (%s), scripts %q, next %q", daily.Name, daily.Schedule, daily.Scripts, daily.Next)

	// pcp's pmfind.timer is enabled by nothing: absent without --all.
	if _, ok := jobs["pmfind.timer"]; ok {
		t.Error("pmfind.timer listed without --all although nothing pulls it in")
	}
	all := listHost(t, "--all", "--base-time", base.Format(time.RFC3339))
	if j, ok := all["pmfind.timer"]; !ok || j.Active {
		t.Errorf("pmfind.timer with --all: listed=%v active=%v; want listed, inactive", ok, j.Active)
	}
}

// mergeFirst returns the first n times of ts in order.
func mergeFirst(ts []time.Time, n int) []time.Time {
	s := append([]time.Time(nil), ts...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j].Before(s[i]) {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[:min(n, len(s))]
}
