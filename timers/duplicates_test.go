package timers

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDuplicates (issue 30.6): on testdata/timers/sysstat-twice, sa1 and
// sa2 run both from sysstat's systemd timers and from the cron.d file an
// administrator added (behind a `command -v … &&` guard). Debian's own
// cron.d/sysstat lines run debian-sa1, which does nothing while systemd
// runs: they are no second run.
func TestDuplicates(t *testing.T) {
	jobs, err := Inventory(fixture(t, "sysstat-twice"), InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The command as compared, then each definition with its period.
	want := []string{
		"sa1 1 1: sysstat-collect.timer (10m), cron.d/sysstat-local:3 (5m)",
		"sa2 -A: sysstat-summary.timer (1d), cron.d/sysstat-local:5 (1d)",
	}
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	if diff := cmp.Diff(want, dupStrings(Duplicates(jobs, base, time.UTC))); diff != "" {
		t.Errorf("Duplicates (-want +got):\n%s", diff)
	}
	if got := Duplicates(mustInventory(t, "debian"), base, time.UTC); len(got) != 0 {
		t.Errorf("Duplicates on the Debian fixture = %q, want none (its cron lines step aside for systemd)", dupStrings(got))
	}
}

// TestDuplicatesNever: two timers running /bin/true, one on a calendar
// that never matches ("*-02-30"), are not a program run twice.
func TestDuplicatesNever(t *testing.T) {
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	jobs := []Job{
		{Name: "feb30.timer", File: "feb30.timer", Source: Systemd, Schedule: []string{"*-02-30"}, Command: "/bin/true", Active: true},
		{Name: "leap.timer", File: "leap.timer", Source: Systemd, Schedule: []string{"*-02-29"}, Command: "/bin/true", Active: true},
	}
	if got := Duplicates(jobs, base, time.UTC); len(got) != 0 {
		t.Errorf("Duplicates = %q, want none: feb30.timer never fires", dupStrings(got))
	}
	jobs[0].Schedule = []string{"daily"}
	if got := Duplicates(jobs, base, time.UTC); len(got) != 1 {
		t.Errorf("Duplicates = %q, want one once both fire", dupStrings(got))
	}
}

// dupStrings is each duplicate as "COMMAND: JOB (PERIOD), …".
func dupStrings(ds []Duplicate) []string {
	var out []string
	for _, d := range ds {
		var js []string
		for _, j := range d.Jobs {
			js = append(js, j.Name+" ("+PeriodString(j)+")")
		}
		out = append(out, d.Command+": "+strings.Join(js, ", "))
	}
	return out
}

func mustInventory(t *testing.T, name string) []Job {
	t.Helper()
	jobs, err := Inventory(fixture(t, name), InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestCommandKey: guards that only test for the program are dropped, the
// program is compared by name, systemd's ExecStart= prefixes go.
func TestCommandKey(t *testing.T) {
	for in, want := range map[string]string{
		"command -v debian-sa1 > /dev/null && debian-sa1 1 1":                   "debian-sa1 1 1",
		"command -v sa1 >/dev/null 2>&1 && sa1 1 1":                             "sa1 1 1",
		"/usr/lib/sysstat/sa1 1 1":                                              "sa1 1 1",
		"test -x /usr/lib/sysstat/sa2 && /usr/lib/sysstat/sa2  -A":              "sa2 -A",
		"[ -x /usr/sbin/logrotate ] && /usr/sbin/logrotate /etc/logrotate.conf": "logrotate /etc/logrotate.conf",
		"-/usr/bin/true": "true",
		"":               "",
	} {
		if got := commandKey(in); got != want {
			t.Errorf("commandKey(%q) = %q, want %q", in, got, want)
		}
	}
}
