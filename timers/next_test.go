package timers

import (
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestNextLeapDayOracle (issue 30.2): Next finds as many firings as
// systemd-analyze calendar --iterations=10, however far apart they are:
// leap days every 4 years (8 years across 2100), leap days that are
// Mondays every 28 years, up to systemd's last year 2199.
func TestNextLeapDayOracle(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		testenv.Unmet(t, "systemd-analyze not installed (Debian package systemd): "+err.Error())
	}
	const n = 10
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, e := range []string{"*-02-29", "*-02-29 06:00", "Mon *-02-29", "*-02-29 00:00 Asia/Tokyo", "2096..2199-02-29"} {
		for _, zone := range []string{"UTC", "Europe/Berlin"} {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			b, status := oracleOne(t, zone, base.Unix(), n, e)
			if status != "ok" {
				t.Fatalf("systemd-analyze calendar %q: %s", e, status)
			}
			var got []string
			for _, f := range Next(Job{Name: "leap.timer", Source: Systemd, Schedule: []string{e}}, base, n, loc) {
				got = append(got, f.Planned.UTC().Format(time.RFC3339))
			}
			if diff := cmp.Diff(b.next, got); diff != "" {
				t.Errorf("%q in %s, --next %d: (-systemd-analyze +ours)\n%s", e, zone, n, diff)
			}
		}
	}
}

// TestNextLeapDayCron: a cron line on 29 February fires on every leap
// day, the way cron's minute-by-minute check does.
func TestNextLeapDayCron(t *testing.T) {
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	var got []string
	for _, f := range Next(Job{Name: "crontab:1", Source: Cron, Schedule: []string{"0 6 29 2 *"}}, base, 5, time.UTC) {
		got = append(got, f.Planned.Format(time.DateOnly))
	}
	want := []string{"2028-02-29", "2032-02-29", "2036-02-29", "2040-02-29", "2044-02-29"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("0 6 29 2 * (-want +got):\n%s", diff)
	}
}

// TestNextNever: a schedule that can never match ("*-02-30", cron's
// 30 February) has no next firing, and Never says so; a monotonic timer
// has no projected firings but is not "never".
func TestNextNever(t *testing.T) {
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, j := range []Job{
		{Name: "feb30.timer", Source: Systemd, Schedule: []string{"*-02-30"}},
		{Name: "crontab:1", Source: Cron, Schedule: []string{"0 0 30 2 *"}},
		{Name: "past.timer", Source: Systemd, Schedule: []string{"2020-01-01"}},
	} {
		if got := Next(j, base, 5, time.UTC); len(got) != 0 {
			t.Errorf("%s: Next = %v, want none", j.Schedule[0], got)
		}
		if !Never(j, base, time.UTC) {
			t.Errorf("%s: Never = false, want true", j.Schedule[0])
		}
	}
	for _, j := range []Job{
		{Name: "boot.timer", Source: Systemd, Schedule: []string{"OnBootSec=15min"}},
		{Name: "crontab:2", Source: Cron, Schedule: []string{"@reboot"}},
		{Name: "leap.timer", Source: Systemd, Schedule: []string{"*-02-29"}},
	} {
		if Never(j, base, time.UTC) {
			t.Errorf("%s: Never = true, want false", j.Schedule[0])
		}
	}
}
