package timers

import (
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
	want := []string{
		"runs twice: sysstat-collect.timer (10m) and cron.d/sysstat-local:3 (5m): sa1 1 1",
		"runs twice: sysstat-summary.timer (1d) and cron.d/sysstat-local:5 (1d): sa2 -A",
	}
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	if diff := cmp.Diff(want, Duplicates(jobs, base, time.UTC)); diff != "" {
		t.Errorf("Duplicates (-want +got):\n%s", diff)
	}
	if got := Duplicates(mustInventory(t, "debian"), base, time.UTC); len(got) != 0 {
		t.Errorf("Duplicates on the Debian fixture = %q, want none (its cron lines step aside for systemd)", got)
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
		t.Errorf("Duplicates = %q, want none: feb30.timer never fires", got)
	}
	jobs[0].Schedule = []string{"daily"}
	if got := Duplicates(jobs, base, time.UTC); len(got) != 1 {
		t.Errorf("Duplicates = %q, want one once both fire", got)
	}
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
