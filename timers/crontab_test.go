package timers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
)

// cronTimes parses "2006-01-02 15:04" times in loc.
func cronTimes(t *testing.T, loc *time.Location, ss ...string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, s := range ss {
		tt, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tt)
	}
	return out
}

// TestCronNext checks next runs computed by hand from the calendar
// (2026-11-29 is a Sunday, 2027-01-01 a Friday).
func TestCronNext(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, spec string
		after      time.Time
		want       []string
	}{
		{"dom and dow restricted: either matches", "0 12 1-7 * mon", base,
			[]string{"2026-11-30 12:00", "2026-12-01 12:00", "2026-12-02 12:00", "2026-12-03 12:00", "2026-12-04 12:00", "2026-12-05 12:00", "2026-12-06 12:00", "2026-12-07 12:00", "2026-12-14 12:00"}},
		{"dom starts with '*' (even with a step): both must match", "0 0 */2 * 5", base,
			[]string{"2026-12-11 00:00", "2026-12-25 00:00", "2027-01-01 00:00", "2027-01-15 00:00", "2027-01-29 00:00"}},
		{"dow starts with '*': dom alone", "0 0 13 * */1", base,
			[]string{"2026-12-13 00:00", "2027-01-13 00:00"}},
		{"names and steps", "*/15 9-17 * jan,jul mon-fri", base,
			[]string{"2027-01-01 09:00", "2027-01-01 09:15", "2027-01-01 09:30"}},
		{"names and steps: across a weekend", "*/15 9-17 * jan,jul mon-fri", time.Date(2027, 1, 1, 17, 45, 0, 0, time.UTC),
			[]string{"2027-01-04 09:00"}},
		{"7 is Sunday", "0 */2 * * 7", base,
			[]string{"2026-11-29 14:00", "2026-11-29 16:00", "2026-11-29 18:00", "2026-11-29 20:00", "2026-11-29 22:00", "2026-12-06 00:00"}},
		{"range ending in 7", "0 0 * * 5-7", base,
			[]string{"2026-12-04 00:00", "2026-12-05 00:00", "2026-12-06 00:00", "2026-12-11 00:00"}},
		{"weekday name", "30 7 * * sun", base, []string{"2026-12-06 07:30"}},
		{"step over a range", "5-55/10 * * * *", base, []string{"2026-11-29 12:05", "2026-11-29 12:15"}},
		{"31st only in long months", "0 0 31 * *", base, []string{"2026-12-31 00:00", "2027-01-31 00:00", "2027-03-31 00:00"}},
		{"@hourly", "@hourly", base, []string{"2026-11-29 13:00", "2026-11-29 14:00"}},
		{"@daily", "@daily", base, []string{"2026-11-30 00:00"}},
		{"@weekly is Sunday midnight", "@weekly", base, []string{"2026-12-06 00:00"}},
		{"@monthly", "@monthly", base, []string{"2026-12-01 00:00", "2027-01-01 00:00"}},
		{"@yearly", "@yearly", base, []string{"2027-01-01 00:00", "2028-01-01 00:00"}},
		{"a firing time itself is not after itself", "25 6 * * *", time.Date(2026, 11, 30, 6, 25, 0, 0, time.UTC), []string{"2026-12-01 06:25"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseCron(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Time
			for at := tt.after; len(got) < len(tt.want); {
				at = c.Next(at, time.UTC)
				got = append(got, at)
			}
			if diff := cmp.Diff(cronTimes(t, time.UTC, tt.want...), got); diff != "" {
				t.Errorf("%s: next runs (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}

// TestCronNextZone: cron runs in the host's local time.
func TestCronNextZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	c, err := parseCron("0 2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	got := c.Next(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), berlin).UTC()
	want := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC) // 02:00 CET
	if !got.Equal(want) {
		t.Errorf("next = %v, want %v", got, want)
	}
}

// TestRobfigDiffersFromVixie documents why parseCron wraps robfig/cron:
// robfig reads "*/2" in day of month as restricted and so ORs it with day
// of week, where Vixie cron (and parseCron) ANDs them, and robfig rejects
// day of week 7.
func TestRobfigDiffersFromVixie(t *testing.T) {
	s, err := cron.ParseStandard("0 0 */2 * 5")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if got, want := s.Next(base), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("robfig next = %v, want %v (OR rule); if robfig changed, revisit parseCron's wrapper", got, want)
	}
	if _, err := cron.ParseStandard("0 0 * * 7"); err == nil {
		t.Error("robfig now accepts day of week 7; fixDow7 may be unnecessary")
	}
}

func TestParseCronErrors(t *testing.T) {
	for _, spec := range []string{"61 * * * *", "* * * *", "0 0 ? * *", "0 0 * * 8", "0 0 * * 7/2", "@fortnightly", "0 0 1-40 * *"} {
		if _, err := parseCron(spec); !errors.Is(err, ErrCronParse) {
			t.Errorf("parseCron(%q) error = %v, want ErrCronParse", spec, err)
		}
	}
}

// TestParseCrontab reads Debian's /etc/crontab (cron-daemon-common
// 3.0pl1-162) from the debian fixture: the user field, PATH, and the
// command with its run-parts folder.
func TestParseCrontab(t *testing.T) {
	lines, err := readLines("../testdata/timers/debian", "etc/crontab")
	if err != nil {
		t.Fatal(err)
	}
	got := parseCrontab("etc/crontab", lines, true, "")
	path := "/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin"
	want := []cronLine{
		{File: "etc/crontab", Line: 18, Spec: "17 * * * *", User: "root", Command: "cd / && run-parts --report /etc/cron.hourly", Path: path},
		{File: "etc/crontab", Line: 19, Spec: "25 6 * * *", User: "root", Command: "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }", Path: path},
		{File: "etc/crontab", Line: 20, Spec: "47 6 * * 7", User: "root", Command: "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.weekly; }", Path: path},
		{File: "etc/crontab", Line: 21, Spec: "52 6 1 * *", User: "root", Command: "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.monthly; }", Path: path},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseCrontab (-want +got):\n%s", diff)
	}
	for i, dir := range []string{"/etc/cron.hourly", "/etc/cron.daily", "/etc/cron.weekly", "/etc/cron.monthly"} {
		if d := runPartsDir(got[i].Command); d != dir {
			t.Errorf("runPartsDir(%q) = %q, want %q", got[i].Command, d, dir)
		}
	}
}

// TestParseUserCrontab: a user crontab has no user field; the user is the
// file's name.
func TestParseUserCrontab(t *testing.T) {
	got := parseCrontab("var/spool/cron/crontabs/alice", []string{"# comment", "MAILTO=alice", "0 */2 * * 7 /home/alice/bin/x --flag", "@reboot /home/alice/bin/boot"}, false, "alice")
	want := []cronLine{
		{File: "var/spool/cron/crontabs/alice", Line: 3, Spec: "0 */2 * * 7", User: "alice", Command: "/home/alice/bin/x --flag", Path: "/usr/bin:/bin"},
		{File: "var/spool/cron/crontabs/alice", Line: 4, Spec: "@reboot", User: "alice", Command: "/home/alice/bin/boot", Path: "/usr/bin:/bin"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseCrontab (-want +got):\n%s", diff)
	}
}

// TestCronHeldLine: a line memdiag confirm holds off (commented out with
// HeldMarker) is still that job, inactive, saying so and how to put it
// back; a new user's trial found it invisible in timers --all, so that a
// lost state file left no trace of it but a grep.
func TestCronHeldLine(t *testing.T) {
	got := parseCrontab("etc/cron.d/x", []string{"# a comment", HeldMarker + "*/2 * * * * root /bin/true", "*/3 * * * * root /bin/false"}, true, "")
	want := []cronLine{
		{File: "etc/cron.d/x", Line: 2, Spec: "*/2 * * * *", User: "root", Command: "/bin/true", Path: "/usr/bin:/bin", Held: true},
		{File: "etc/cron.d/x", Line: 3, Spec: "*/3 * * * *", User: "root", Command: "/bin/false", Path: "/usr/bin:/bin"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseCrontab (-want +got):\n%s", diff)
	}
	d := daemons{cronActive: true, cronVia: []string{"cron.service"}}
	held, free := cronJob(t.TempDir(), d, got[0], "cron.d/x"), cronJob(t.TempDir(), d, got[1], "cron.d/x")
	if held.Name != "cron.d/x:2" || held.Active || held.Reason != heldReason || !strings.Contains(held.Reason, "memdiag confirm --restore") {
		t.Errorf("held line: %+v", held)
	}
	if !free.Active || free.Reason != "" {
		t.Errorf("free line: active %v, reason %q", free.Active, free.Reason)
	}
}

func TestRegularPeriod(t *testing.T) {
	tests := []struct {
		spec string
		want time.Duration
		ok   bool
	}{
		{"*/10 * * * *", 10 * time.Minute, true},
		{"5-55/10 * * * *", 10 * time.Minute, true},
		{"17 * * * *", time.Hour, true},
		{"25 6 * * *", 24 * time.Hour, true},
		{"47 6 * * 7", 7 * 24 * time.Hour, true},
		{"52 6 1 * *", 0, false},     // months differ in length
		{"30 7-23 * * *", 0, false},  // 1h gaps, then 8h overnight
		{"* * * * mon", 0, false},    // every minute, Mondays only
		{"0 0 1 1 *", 0, false},      // leap years
		{"0 12 1-7 * mon", 0, false}, // OR rule
	}
	for _, tt := range tests {
		c, err := parseCron(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := regularPeriod(func(t time.Time) time.Time { return c.Next(t, time.UTC) })
		if got != tt.want || ok != tt.ok {
			t.Errorf("period of %q = %v, %v; want %v, %v", tt.spec, got, ok, tt.want, tt.ok)
		}
	}
}

// TestParseCrontabUnicodeSpace: cron separates fields by spaces and tabs
// only; a no-break space, \v, \f, \r or U+0085 between fields used to
// panic the parser (fields counted by strings.Fields, cut at spaces and
// tabs). It is part of a field now, as for cron, and the line is an error
// or a job, never a panic.
func TestParseCrontabUnicodeSpace(t *testing.T) {
	for _, sep := range []string{"\u00a0", "\v", "\f", "\r", "\u0085"} {
		all := strings.Repeat("*"+sep, 5) + "root" + sep + "x" // the line that panicked
		lines := []string{"* * * * * root" + sep + "x", "* * * * *" + sep + "root x", "0" + sep + "* * * * root x", all}
		got := parseCrontab("etc/cron.d/x", lines, true, "")
		if len(got) != 4 {
			t.Fatalf("sep %q: %d lines, want 4", sep, len(got))
		}
		if got[3].Err == "" {
			t.Errorf("sep %q: %+v: want a too-few-fields error", sep, got[3])
		}
		// "root<sep>x" is the user field, and no command follows it.
		if got[0].Err == "" {
			t.Errorf("sep %q: %+v: want a too-few-fields error", sep, got[0])
		}
		// "*<sep>root" is the fifth time field: not a day of week.
		if got[1].Err == "" {
			t.Errorf("sep %q: %+v: want an error for the fifth field", sep, got[1])
		}
		if got[2].Err == "" {
			t.Errorf("sep %q: %+v: want an error for the first field", sep, got[2])
		}
	}
	// A tab separates, as for cron.
	got := parseCrontab("etc/cron.d/x", []string{"*\t*\t*\t*\t*\troot\tx\u00a0y"}, true, "")
	if len(got) != 1 || got[0].Err != "" || got[0].User != "root" || got[0].Command != "x\u00a0y" {
		t.Errorf("tabs: %+v", got)
	}
}

// TestCheckCronLine: a replacement line is checked as the inventory
// reads it, and each refusal names the file and line it was given.
func TestCheckCronLine(t *testing.T) {
	for _, c := range []struct {
		text   string
		system bool
		want   string
	}{
		{"25,55 * * * * root nice -n19 ionice -c3 /usr/libexec/pcp/bin/pmlogger_check -C", true, ""},
		{"@hourly nice /bin/x", false, ""},
		{"# a comment", true, `fix.cron:3: malformed crontab line: not a job line (a comment, a blank or an environment setting): "# a comment"`},
		{"MAILTO=ops", true, `fix.cron:3: malformed crontab line: not a job line (a comment, a blank or an environment setting): "MAILTO=ops"`},
		{"25,55 * * * * root", true, `fix.cron:3: malformed crontab line: too few fields (want time, user, command): "25,55 * * * * root"`},
		{"61 * * * * root x", true, "fix.cron:3: "},
	} {
		err := CheckCronLine("fix.cron", 3, c.text, c.system)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.text, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		case c.want == "fix.cron:3: " && strings.HasPrefix(err.Error(), "fix.cron:3: :"):
			t.Errorf("%q: %v: the line's place is said twice", c.text, err)
		}
	}
	if SystemCrontab("var/spool/cron/crontabs/alice") || !SystemCrontab("etc/cron.d/pcp-pmlogger") || !SystemCrontab("etc/crontab") {
		t.Error("SystemCrontab")
	}
}
