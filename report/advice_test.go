package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// debianRoot is a root of real Debian bookworm unit files and cron
// scripts (testdata/timers/debian/SOURCE).
const debianRoot = "../testdata/timers/debian"

func jobNamed(t *testing.T, jobs []timers.Job, name string) *timers.Job {
	t.Helper()
	for i := range jobs {
		if jobs[i].Name == name {
			return &jobs[i]
		}
	}
	t.Fatalf("no job %s", name)
	return nil
}

// Issue 30 item 9: advice the unit already follows is not given. Debian's
// man-db.service sets Nice=19 and IOSchedulingClass=idle,
// plocate-updatedb.service IOSchedulingClass=idle, logrotate.service
// Nice=19 with the best-effort class; fstrim.service none of them.
func TestAdviceTimerAlreadyIdle(t *testing.T) {
	jobs, err := timers.Inventory(debianRoot, timers.InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		timer    string
		want     []string
		unwanted []string
	}{
		{"man-db.timer",
			[]string{"man-db.service already sets IOSchedulingClass=idle and Nice=19, and its episodes remain", "does not make a cache-evicting scan harmless", "MemoryHigh="},
			[]string{"lower its I/O priority"}},
		{"plocate-updatedb.timer",
			[]string{"plocate-updatedb.service already sets IOSchedulingClass=idle, and its episodes remain", "page cache"},
			[]string{"lower its I/O priority", "Nice=19"}},
		{"logrotate.timer",
			[]string{"lower its I/O priority: `systemctl edit logrotate.service` with IOSchedulingClass=idle (its Nice=19 lowers only its CPU priority"},
			[]string{"IOSchedulingClass=idle, Nice=19", "already sets"}},
		{"fstrim.timer",
			[]string{"lower its I/O priority: `systemctl edit fstrim.service` with IOSchedulingClass=idle, Nice=19"},
			[]string{"already"}},
	} {
		c := correlate.Culprit{Kind: correlate.KindTimer, Name: tc.timer, Job: jobNamed(t, jobs, tc.timer)}
		got := strings.Join(advice(&c), "\n")
		t.Logf("%s:\n%s", tc.timer, got)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: advice lacks %q:\n%s", tc.timer, w, got)
			}
		}
		for _, u := range tc.unwanted {
			if strings.Contains(got, u) {
				t.Errorf("%s: advice has %q:\n%s", tc.timer, u, got)
			}
		}
	}
}

// The Ubuntu mlocate case: cron.daily's locate script already runs
// updatedb under `ionice -c3` (Debian's plocate script, copied as it is
// into a root without systemd, where cron runs it). Prefixing the job with
// ionice -c3 is not advised; what the idle class cannot do is said. With
// a second script that does not use it (Debian's logrotate cron script),
// the prefix is still advised, and the plocate script named.
func TestAdviceCronAlreadyIonice(t *testing.T) {
	root := t.TempDir()
	copyFile(t, filepath.Join(debianRoot, "etc/crontab"), filepath.Join(root, "etc/crontab"))
	copyFile(t, filepath.Join(debianRoot, "etc/cron.daily/plocate"), filepath.Join(root, "etc/cron.daily/plocate"))
	cronDaily := func() *timers.Job {
		jobs, err := timers.Inventory(root, timers.InventoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range jobs {
			if strings.Contains(jobs[i].Command, "/etc/cron.daily") {
				return &jobs[i]
			}
		}
		t.Fatal("no cron.daily job")
		return nil
	}
	j := cronDaily()
	if len(j.IdleIOScripts) != 1 || j.IdleIOScripts[0] != "/etc/cron.daily/plocate" {
		t.Fatalf("idle I/O scripts %q; want /etc/cron.daily/plocate (IONICE=\"/usr/bin/ionice -c3\")", j.IdleIOScripts)
	}
	c := correlate.Culprit{Kind: correlate.KindCron, Name: j.Name, Job: j}
	got := strings.Join(advice(&c), "\n")
	t.Logf("%s (plocate's script alone):\n%s", j.Name, got)
	if strings.Contains(got, "prefix its command") || !strings.Contains(got, "its script /etc/cron.daily/plocate already runs in the idle I/O class (ionice -c3), and its episodes remain") ||
		!strings.Contains(got, "does not make a cache-evicting scan harmless") {
		t.Errorf("advice:\n%s\nwant no ionice prefix, and the script named with what the idle class cannot do", got)
	}

	copyFile(t, filepath.Join(debianRoot, "etc/cron.daily/logrotate"), filepath.Join(root, "etc/cron.daily/logrotate"))
	j = cronDaily()
	c = correlate.Culprit{Kind: correlate.KindCron, Name: j.Name, Job: j}
	got = strings.Join(advice(&c), "\n")
	if !strings.Contains(got, "prefix its command with `ionice -c3 nice -n19`; its script /etc/cron.daily/plocate already runs in the idle I/O class") {
		t.Errorf("advice with plocate and logrotate:\n%s", got)
	}

	// A cron.d line whose command is under ionice.
	for cmd, want := range map[string]bool{
		"ionice -c3 /usr/bin/updatedb.mlocate":          true,
		"/usr/bin/ionice -c 3 -t nice updatedb":         true,
		"ionice --class=idle tar czf /b.tgz /srv":       true,
		"start-stop-daemon --start --iosched idle -x x": true,
		"ionice -c2 -n7 tar czf /b.tgz /srv":            false,
		"tar czf /b.tgz /srv # not ionice -c3":          false,
	} {
		c := correlate.Culprit{Kind: correlate.KindCron, Name: "x", Job: &timers.Job{Source: timers.Cron, Command: cmd}}
		got := strings.Join(advice(&c), "\n")
		if has := strings.Contains(got, "its command already runs in the idle I/O class"); has != want {
			t.Errorf("%q: said already idle %v, want %v:\n%s", cmd, has, want, got)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Issue 27 item 4: a timer's or cron job's advice ends with the exact
// `memdiag confirm --with` command that tries a fix first (text only); a
// process has none, as confirm cannot hold one off or put a fix in place.
func TestAdviceTryFix(t *testing.T) {
	for _, tc := range []struct {
		c    correlate.Culprit
		want string
	}{
		{correlate.Culprit{Kind: correlate.KindTimer, Name: "fstrim.timer", Job: &timers.Job{Name: "fstrim.timer", Unit: "fstrim.service"}},
			"try a drop-in before deploying it: put its [Service] or [Timer] section in a file and run `sudo memdiag confirm --job fstrim.timer --with FILE -- LOAD`; B blocks of your load test run with it in place, and the report says whether it removed the effect"},
		{correlate.Culprit{Kind: correlate.KindCron, Name: "pmlogger_check", Job: &timers.Job{Name: "cron.d/pcp-pmlogger:8", File: "etc/cron.d/pcp-pmlogger", Line: 8}},
			"try a changed line before deploying it: put it in a file and run `sudo memdiag confirm --job cron.d/pcp-pmlogger:8 --with FILE -- LOAD`; B blocks of your load test run with it in place of the job's, and the report says whether it removed the effect"},
		{correlate.Culprit{Kind: correlate.KindProcess, Name: "postgres"}, ""},
	} {
		a := advice(&tc.c)
		got := ""
		if last := a[len(a)-1]; strings.Contains(last, "memdiag confirm") {
			got = last
		}
		if got != tc.want {
			t.Errorf("%s: last advice %q, want %q", tc.c.Name, a[len(a)-1], tc.want)
		}
	}
}
