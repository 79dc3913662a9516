package timers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixture returns the path of testdata/timers/<name>.
func fixture(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "testdata", "timers", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func inventory(t testing.TB, root string) map[string]Job {
	t.Helper()
	jobs, err := Inventory(root, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Job{}
	for _, j := range jobs {
		if _, dup := m[j.Name]; dup {
			t.Fatalf("job %s listed twice", j.Name)
		}
		m[j.Name] = j
	}
	return m
}

func period(d time.Duration) *float64 { return seconds(d) }

// summary is the part of a Job the tests compare.
type summary struct {
	Active     bool
	Schedule   []string
	Normalized []string
	Period     *float64
	Unit       string
	Command    string
	User       string
	ActiveVia  []string
	Reason     string
	Errors     []string
}

func summarize(j Job) summary {
	return summary{j.Active, j.Schedule, j.Normalized, j.PeriodSeconds, j.Unit, j.Command, j.User, j.ActiveVia, j.Reason, j.Errors}
}

// TestInventoryDebian checks the real unit files and crontabs of Debian's
// packages (testdata/timers/debian/SOURCE), values read off the files.
func TestInventoryDebian(t *testing.T) {
	jobs := inventory(t, fixture(t, "debian"))
	multiUser := []string{
		"default.target",
		"graphical.target (link /lib/systemd/system/default.target)",
		"multi-user.target (Requires= in /lib/systemd/system/graphical.target:13)",
	}
	tests := map[string]summary{
		// pcp activates the timer only through BindsTo= in pmlogger.service.
		"pmlogger_check.timer": {
			Active:     true,
			Schedule:   []string{"*-*-* *:25:00", "*-*-* *:55:00"},
			Normalized: []string{"*-*-* *:25:00", "*-*-* *:55:00"},
			Period:     period(30 * time.Minute),
			Unit:       "pmlogger_check.service",
			Command:    "/usr/lib/pcp/bin/pmlogger_check $PMLOGGER_CHECK_PARAMS",
			User:       "pcp",
			ActiveVia: append(append([]string{}, multiUser...),
				"pmlogger.service (link /etc/systemd/system/multi-user.target.wants/pmlogger.service)",
				"pmlogger_check.timer (BindsTo= in /lib/systemd/system/pmlogger.service:6)"),
		},
		// sysstat links the timer from sysstat.service.wants/.
		"sysstat-collect.timer": {
			Active:     true,
			Schedule:   []string{"*:00/10"},
			Normalized: []string{"*-*-* *:00/10:00"},
			Period:     period(10 * time.Minute),
			Unit:       "sysstat-collect.service",
			Command:    "/usr/lib/sysstat/sa1 1 1",
			User:       "root",
			ActiveVia: append(append([]string{}, multiUser...),
				"sysstat.service (link /etc/systemd/system/multi-user.target.wants/sysstat.service)",
				"sysstat-collect.timer (link /etc/systemd/system/sysstat.service.wants/sysstat-collect.timer)"),
		},
		"logrotate.timer": {
			Active:     true,
			Schedule:   []string{"daily"},
			Normalized: []string{"*-*-* 00:00:00"},
			Period:     period(24 * time.Hour),
			Unit:       "logrotate.service",
			Command:    "/usr/sbin/logrotate /etc/logrotate.conf",
			User:       "root",
			ActiveVia: []string{"timers.target",
				"logrotate.timer (link /etc/systemd/system/timers.target.wants/logrotate.timer)"},
		},
		// Monotonic only: a period, no calendar.
		"systemd-tmpfiles-clean.timer": {
			Active:    true,
			Schedule:  []string{"OnBootSec=15m", "OnUnitActiveSec=1d"},
			Period:    period(24 * time.Hour),
			Unit:      "systemd-tmpfiles-clean.service",
			Command:   "systemd-tmpfiles --clean",
			User:      "root",
			ActiveVia: []string{"timers.target", "systemd-tmpfiles-clean.timer (link /lib/systemd/system/timers.target.wants/systemd-tmpfiles-clean.timer)"},
		},
		// Nothing pulls pmfind.timer in.
		"pmfind.timer": {
			Schedule: []string{"OnBootSec=1m", "OnUnitActiveSec=1m"},
			Period:   period(time.Minute),
			Unit:     "pmfind.service",
			Command:  "/usr/lib/pcp/bin/pmfind_check $PMFIND_CHECK_PARAMS",
			User:     "root",
			Reason:   "nothing pulls it in: not enabled (no link in a .wants/ or .requires/ folder, no Wants=/Requires=/BindsTo=/Upholds= on a unit started at boot)",
		},
		// anacron is installed, so /etc/crontab leaves cron.daily to it.
		"crontab:19": {
			Schedule: []string{"25 6 * * *"},
			Period:   period(24 * time.Hour),
			Command:  "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }",
			User:     "root",
			Reason:   "does nothing: anacron is installed (usr/sbin/anacron), and /etc/anacrontab runs these scripts",
		},
		// sysstat's cron line steps aside for its timer under systemd.
		"cron.d/sysstat:6": {
			Schedule: []string{"5-55/10 * * * *"},
			Period:   period(10 * time.Minute),
			Command:  "command -v debian-sa1 > /dev/null && debian-sa1 1 1",
			User:     "root",
			Reason:   "does nothing when booted with systemd (sbin/init is systemd): /usr/lib/sysstat/debian-sa1 exits when /run/systemd/system exists and its systemd timer does the work",
		},
		"anacron:cron.daily": {
			Active:   true,
			Schedule: []string{"1"},
			Period:   period(24 * time.Hour),
			Command:  "run-parts --report /etc/cron.daily",
			User:     "root",
			ActiveVia: []string{"timers.target",
				"anacron.timer (link /etc/systemd/system/timers.target.wants/anacron.timer)"},
		},
		"anacron:cron.monthly": {
			Active:   true,
			Schedule: []string{"@monthly"},
			Command:  "run-parts --report /etc/cron.monthly",
			User:     "root",
			ActiveVia: []string{"timers.target",
				"anacron.timer (link /etc/systemd/system/timers.target.wants/anacron.timer)"},
		},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			j, ok := jobs[name]
			if !ok {
				t.Fatalf("job %s not found", name)
			}
			if diff := cmp.Diff(want, summarize(j)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		})
	}

	pc := jobs["pmlogger_check.timer"]
	if pc.OnBootSec != time.Minute || pc.AccuracySec != time.Minute || pc.Persistent {
		t.Errorf("pmlogger_check.timer: OnBootSec=%v AccuracySec=%v Persistent=%v, want 1m 1m false", pc.OnBootSec, pc.AccuracySec, pc.Persistent)
	}
	if diff := cmp.Diff([]string{"ConditionPathExists=!/etc/cron.d/pcp-pmlogger: true"}, pc.Conditions); diff != "" {
		t.Errorf("pmlogger_check conditions (-want +got):\n%s", diff)
	}
	an := jobs["anacron.timer"]
	if an.RandomizedDelaySec != 5*time.Minute || !an.Persistent {
		t.Errorf("anacron.timer: RandomizedDelaySec=%v Persistent=%v, want 5m true", an.RandomizedDelaySec, an.Persistent)
	}
	daily := jobs["anacron:cron.daily"]
	wantScripts := []string{"/etc/cron.daily/0anacron", "/etc/cron.daily/apt-compat", "/etc/cron.daily/logrotate", "/etc/cron.daily/man-db", "/etc/cron.daily/plocate", "/etc/cron.daily/sysstat"}
	if diff := cmp.Diff(wantScripts, daily.Scripts); diff != "" {
		t.Errorf("cron.daily scripts (-want +got):\n%s", diff)
	}
	// The daily scripts of logrotate, man-db, apt, plocate and sysstat exit
	// at once under systemd; 0anacron does not.
	if diff := cmp.Diff(wantScripts[1:], daily.IdleScripts); diff != "" {
		t.Errorf("cron.daily idle scripts (-want +got):\n%s", diff)
	}
	if daily.Delay != 5*time.Minute || daily.RandomizedDelaySec != 5*time.Minute || daily.AccuracySec != time.Minute {
		t.Errorf("anacron:cron.daily delay %v random %v accuracy %v, want 5m 5m 1m", daily.Delay, daily.RandomizedDelaySec, daily.AccuracySec)
	}
	if diff := cmp.Diff([]string{"systemd:*-*-* 07..23:30"}, daily.Trigger); diff != "" {
		t.Errorf("anacron trigger (-want +got):\n%s", diff)
	}
	if w := jobs["anacron:cron.weekly"].LastRun; w != "20261125" {
		t.Errorf("cron.weekly last run %q, want 20261125", w)
	}
	for _, n := range []string{"pmlogger_check.timer", "pmlogger_daily.timer", "pmie_check.timer", "pmlogger_farm_check.timer", "logrotate.timer", "man-db.timer", "plocate-updatedb.timer", "apt-daily.timer", "fstrim.timer", "e2scrub_all.timer", "sysstat-collect.timer"} {
		if jobs[n].Note == "" {
			t.Errorf("%s has no note", n)
		}
	}
	if p := Problems(mapJobs(jobs)); len(p) != 0 {
		t.Errorf("problems in real package files: %q", p)
	}
}

func mapJobs(m map[string]Job) []Job {
	var out []Job
	for _, j := range m {
		out = append(out, j)
	}
	return out
}

// TestInventoryEdge checks the hand-built edge cases of
// testdata/timers/edge (see its SOURCE).
func TestInventoryEdge(t *testing.T) {
	jobs := inventory(t, fixture(t, "edge"))
	viaTimers := func(n string) []string {
		return []string{"timers.target", n + " (link /etc/systemd/system/timers.target.wants/" + n + ")"}
	}
	tests := map[string]summary{
		// The drop-in's empty OnCalendar= drops hourly and *:30; the
		// /dev/null link hides 90-daily.conf from /lib.
		"edge-dropin.timer": {
			Active: true, Schedule: []string{"Mon..Fri 08:15"}, Normalized: []string{"Mon..Fri *-*-* 08:15:00"},
			Unit: "edge-dropin.service", Command: "/usr/bin/edge-dropin", User: "root", ActiveVia: viaTimers("edge-dropin.timer"),
		},
		"edge-masked.timer": {
			Reason: "masked (etc/systemd/system/edge-masked.timer is empty or a link to /dev/null)",
		},
		// The /etc copy wins over /lib; Unit= names another service; a
		// continued ExecStart= line is joined as systemd does (the
		// backslash becomes a space, the next line's indentation goes:
		// "--all \" + "    --verbose" → "--all  --verbose"); "-" is dropped.
		"edge-override.timer": {
			Active: true, Schedule: []string{"*-*-* 04:00:00"}, Normalized: []string{"*-*-* 04:00:00"}, Period: period(24 * time.Hour),
			Unit: "edge-work.service", Command: "/usr/bin/edge-work --all  --verbose", User: "backup", ActiveVia: viaTimers("edge-override.timer"),
		},
		"edge-badcal.timer": {
			Active: true, Schedule: []string{"daily"}, Normalized: []string{"*-*-* 00:00:00"}, Period: period(24 * time.Hour),
			Unit: "edge-badcal.service", Command: "/usr/bin/edge-dropin", User: "root", ActiveVia: viaTimers("edge-badcal.timer"),
			Errors: []string{
				`lib/systemd/system/edge-badcal.timer:4: malformed unit file: assignment without '=': "Persistent"`,
				`lib/systemd/system/edge-badcal.timer:2: OnCalendar=*-*-* 25:00: invalid calendar expression "*-*-* 25:00": hour 25 out of range 0..23`,
			},
		},
		"edge-cond.timer": {
			Schedule: []string{"*:0/5"}, Normalized: []string{"*-*-* *:00/5:00"}, Period: period(5 * time.Minute),
			Unit: "edge-cond.service", Command: "/usr/bin/edge-cond", User: "root", ActiveVia: viaTimers("edge-cond.timer"),
			Reason: "edge-cond.service is skipped: ConditionPathExists=/etc/edge-enabled is false (lib/systemd/system/edge-cond.service:2)",
		},
		// A template instance: %i expands in Unit= and ExecStart=.
		"backup@nightly.timer": {
			Active: true, Schedule: []string{"*-*-* 02:00"}, Normalized: []string{"*-*-* 02:00:00"}, Period: period(24 * time.Hour),
			Unit: "backup@nightly.service", Command: "/usr/bin/backup --set nightly", User: "root", ActiveVia: viaTimers("backup@nightly.timer"),
		},
		"edge-orphan.timer": {
			Schedule: []string{"Sat *-*-1..7 18:00"}, Normalized: []string{"Sat *-*-01..07 18:00:00"},
			Unit: "edge-orphan.service", Command: "/usr/bin/edge-dropin", User: "root",
			Reason: "nothing pulls it in: not enabled (no link in a .wants/ or .requires/ folder, no Wants=/Requires=/BindsTo=/Upholds= on a unit started at boot)",
		},
		"cron.d/edge:7": {
			Schedule: []string{"61 * * * *"}, Command: "/usr/bin/bad-minute", User: "root", Reason: "malformed line",
			Errors: []string{"etc/cron.d/edge:7: malformed crontab line: end of range (61) above maximum (59): 61"},
		},
		"cron.d/edge:9": {
			Schedule: []string{"@daily"}, Reason: "malformed line",
			Errors: []string{`etc/cron.d/edge:9: malformed crontab line: too few fields (want time, user, command): "@daily root"`},
		},
		"cron.d/edge:8": {
			Schedule: []string{"@reboot"}, Command: "/usr/bin/at-boot", User: "root", Reason: "@reboot: runs once when cron starts, never periodically",
			ActiveVia: []string{"multi-user.target", "cron.service (link /etc/systemd/system/multi-user.target.wants/cron.service)"},
		},
		"crontabs/alice:2": {
			Active: true, Schedule: []string{"0 */2 * * 7"}, Command: "/home/alice/bin/sunday-even-hours", User: "alice",
			ActiveVia: []string{"multi-user.target", "cron.service (link /etc/systemd/system/multi-user.target.wants/cron.service)"},
		},
		"anacron:broken": {
			Schedule: []string{"x"}, Command: "/bin/true", User: "root", Reason: "malformed line",
			Errors: []string{`etc/anacrontab:5: malformed anacrontab line: period "x" is neither a number of days nor @daily/@weekly/@monthly/@yearly`},
		},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			j, ok := jobs[name]
			if !ok {
				t.Fatalf("job %s not found", name)
			}
			if diff := cmp.Diff(want, summarize(j)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		})
	}
	if _, ok := jobs["cron.d/edge.dpkg-old:1"]; ok {
		t.Error("cron.d/edge.dpkg-old was read; cron ignores file names with a dot")
	}
	w := jobs["edge-override.timer"]
	if w.Nice != "19" || w.IOSchedulingClass != "idle" || w.CPUQuota != "20%" || w.MemoryMax != "512M" {
		t.Errorf("edge-work.service resources: Nice=%q IOSchedulingClass=%q CPUQuota=%q MemoryMax=%q", w.Nice, w.IOSchedulingClass, w.CPUQuota, w.MemoryMax)
	}
	d := jobs["edge-dropin.timer"]
	if d.RandomizedDelaySec != 10*time.Minute || d.AccuracySec != time.Second {
		t.Errorf("edge-dropin.timer RandomizedDelaySec=%v AccuracySec=%v, want 10m 1s", d.RandomizedDelaySec, d.AccuracySec)
	}
	wantDropIns := []string{"etc/systemd/system/edge-dropin.timer.d/50-random.conf", "etc/systemd/system/edge-dropin.timer.d/override.conf"}
	set := newUnitSet(fixture(t, "edge"), systemUnitDirs)
	if diff := cmp.Diff(wantDropIns, set.load("edge-dropin.timer").DropIns); diff != "" {
		t.Errorf("drop-ins (-want +got):\n%s", diff)
	}
	mono := jobs["edge-mono.timer"]
	if mono.OnBootSec != 15*time.Minute || mono.OnUnitActiveSec != 6*time.Hour || *mono.PeriodSeconds != 21600 {
		t.Errorf("edge-mono.timer OnBootSec=%v OnUnitActiveSec=%v period=%v", mono.OnBootSec, mono.OnUnitActiveSec, *mono.PeriodSeconds)
	}
	hourly := jobs["crontab:5"]
	if diff := cmp.Diff([]string{"/etc/cron.daily/hello"}, hourly.Scripts); diff != "" {
		t.Errorf("cron.daily scripts: README is not executable and must not be listed (-want +got):\n%s", diff)
	}
	var probs []string
	for _, p := range Problems(mapJobs(jobs)) {
		probs = append(probs, strings.SplitN(p, ":", 2)[0])
	}
	if len(probs) != 5 {
		t.Errorf("problems = %d (%q), want 5", len(probs), Problems(mapJobs(jobs)))
	}
}

func TestParseTimespan(t *testing.T) {
	tests := map[string]time.Duration{
		"1min": time.Minute, "5m": 5 * time.Minute, "1h 30min": 90 * time.Minute, "300": 300 * time.Second,
		"2d": 48 * time.Hour, "1w": 7 * 24 * time.Hour, "500ms": 500 * time.Millisecond, "1.5h": 90 * time.Minute, "5m30s": 330 * time.Second,
	}
	for s, want := range tests {
		got, err := parseTimespan(s, time.Second)
		if err != nil || got != want {
			t.Errorf("parseTimespan(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "5 parsecs", "min"} {
		if _, err := parseTimespan(s, time.Second); err == nil {
			t.Errorf("parseTimespan(%q) succeeded", s)
		}
	}
}

func TestUnitPrecedenceMergedUsr(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr/lib/systemd/system", "etc/systemd/system"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// merged /usr: lib -> usr/lib
	if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("usr/lib/systemd/system/a.timer", "[Timer]\nOnCalendar=daily\n")
	write("etc/systemd/system/a.timer", "[Timer]\nOnCalendar=weekly\n")
	write("etc/systemd/system/empty.timer", "")
	s := newUnitSet(root, systemUnitDirs)
	for _, d := range s.dirs {
		if d == "lib/systemd/system" {
			t.Error("lib/systemd/system read although it is usr/lib/systemd/system")
		}
	}
	u := s.load("a.timer")
	if u.Fragment != "etc/systemd/system/a.timer" || len(u.values("Timer", "OnCalendar")) != 1 || u.values("Timer", "OnCalendar")[0].Value != "weekly" {
		t.Errorf("a.timer from %s with %v; want the /etc copy", u.Fragment, u.values("Timer", "OnCalendar"))
	}
	if !s.load("empty.timer").Masked {
		t.Error("an empty unit file is masked")
	}
}

// TestInventoryUserUnits: ~/.config/systemd/user of alice (who lingers)
// and a global user timer that nothing enables.
func TestInventoryUserUnits(t *testing.T) {
	jobs, err := Inventory(fixture(t, "edge"), InventoryOptions{Users: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]summary{}
	for _, j := range jobs {
		if strings.HasPrefix(j.Name, "user:") {
			got[j.Name] = summarize(j)
		}
	}
	want := map[string]summary{
		"user:sync.timer": {
			Active: true, Schedule: []string{"hourly"}, Normalized: []string{"*-*-* *:00:00"}, Period: period(time.Hour),
			Unit: "sync.service", Command: "%h/bin/sync", User: "alice",
			ActiveVia: []string{"user manager of alice (lingering)", "timers.target", "sync.timer (link /home/alice/.config/systemd/user/timers.target.wants/sync.timer)"},
		},
		"user:global.timer": {
			Schedule: []string{"weekly"}, Normalized: []string{"Mon *-*-* 00:00:00"}, Period: period(7 * 24 * time.Hour),
			Unit: "global.service", User: "(every user)",
			Reason: "nothing pulls it in: not enabled (no link in a .wants/ or .requires/ folder, no Wants=/Requires=/BindsTo=/Upholds= on a unit started at boot)",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user timers (-want +got):\n%s", diff)
	}
}

// TestInventoryWithoutSystemd: on a root whose init is not systemd, cron
// (found as usr/sbin/cron) runs anacron from Debian's /etc/cron.d/anacron,
// and the anacron jobs follow that line's schedule.
func TestInventoryWithoutSystemd(t *testing.T) {
	src := fixture(t, "debian")
	root := t.TempDir()
	copyFile := func(rel string, mode os.FileMode) {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("etc/crontab", 0o644)
	copyFile("etc/anacrontab", 0o644)
	copyFile("etc/cron.d/anacron", 0o644)
	copyFile("etc/cron.daily/logrotate", 0o755)
	copyFile("usr/sbin/anacron", 0o755)
	if err := os.WriteFile(filepath.Join(root, "usr/sbin/cron"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]Job{}
	all, err := Inventory(root, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		jobs[j.Name] = j
	}
	an := jobs["cron.d/anacron:6"]
	if !an.Active || an.Schedule[0] != "30 7-23 * * *" {
		t.Errorf("cron.d/anacron:6 active=%v schedule=%q reason=%q; want active, 30 7-23 * * *", an.Active, an.Schedule, an.Reason)
	}
	daily := jobs["anacron:cron.daily"]
	if diff := cmp.Diff([]string{"cron:30 7-23 * * *"}, daily.Trigger); diff != "" || !daily.Active {
		t.Errorf("anacron:cron.daily active=%v trigger (-want +got):\n%s", daily.Active, diff)
	}
	// No systemd: logrotate's cron script is not idle.
	if len(daily.IdleScripts) != 0 || len(daily.Scripts) != 1 {
		t.Errorf("scripts %q idle %q; want logrotate, not idle", daily.Scripts, daily.IdleScripts)
	}
	got := Project([]Job{daily}, utc("2026-11-29 00:00:00"), utc("2026-11-30 00:00:00"), time.UTC)
	want := []Firing{{Job: "anacron:cron.daily", Planned: utc("2026-11-29 07:35:00"), Earliest: utc("2026-11-29 07:35:00"), Latest: utc("2026-11-29 07:36:00")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Project (-want +got):\n%s", diff)
	}
}

// TestInventoryHostZone: jobs carry the root's zone, so projecting them
// elsewhere (loc UTC) still gives the host's local times.
func TestInventoryHostZone(t *testing.T) {
	if _, err := time.LoadLocation("Europe/Berlin"); err != nil {
		t.Skip("no tzdata:", err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/share/zoneinfo/Europe/Berlin", filepath.Join(root, "etc/localtime")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/crontab"), []byte("0 2 * * * root /bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, err := Inventory(root, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].TimeZone != "Europe/Berlin" {
		t.Fatalf("jobs %+v; want one, in Europe/Berlin", jobs)
	}
	got := Project(jobs, utc("2026-11-29 12:00:00"), utc("2026-11-30 12:00:00"), time.UTC)
	if len(got) != 1 || !got[0].Planned.Equal(utc("2026-11-30 01:00:00")) {
		t.Errorf("firings %v; want 02:00 CET = 01:00 UTC", got)
	}
}

// fakeLive stands for systemd over D-Bus.
type fakeLive map[string]LiveTimer

func (f fakeLive) Timer(name string) (LiveTimer, error) {
	if lt, ok := f[name]; ok {
		return lt, nil
	}
	return LiveTimer{}, os.ErrNotExist
}

func TestInventoryLive(t *testing.T) {
	last, next := utc("2026-11-29 11:55:03"), utc("2026-11-29 12:25:41")
	jobs, err := Inventory(fixture(t, "debian"), InventoryOptions{Live: fakeLive{"pmlogger_check.timer": {LastTrigger: last, NextElapse: next, Starts: []time.Time{last}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		switch {
		case j.Name == "pmlogger_check.timer":
			if j.LastTrigger == nil || !j.LastTrigger.Equal(last) || j.NextElapse == nil || !j.NextElapse.Equal(next) || len(j.PastStarts) != 1 {
				t.Errorf("live state not applied: %v %v %v", j.LastTrigger, j.NextElapse, j.PastStarts)
			}
		case j.LastTrigger != nil || j.NextElapse != nil:
			t.Errorf("%s has live state the source did not give", j.Name)
		}
	}
	if m, err := ProbeLive(context.Background(), fixture(t, "debian")); m != nil || err != nil {
		t.Errorf("ProbeLive on a fixture root = %v, %v; want nil, nil (files only, nothing to report)", m, err)
	}
}
