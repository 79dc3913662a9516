package timersreport

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/timers"
)

// TestProblemsSaid: the definitions' errors first, then each program run
// from several definitions in one line with their periods (issue 30.6,
// moved from package timers with its strings: the real sysstat-twice
// fixture); under CSV they are said on stderr, one "memdiag: " line each.
func TestProblemsSaid(t *testing.T) {
	jobs, err := timers.Inventory("../../testdata/timers/sysstat-twice", timers.InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	l := timers.NewListing(jobs, false, base, time.UTC)
	l.Malformed = []string{"etc/crontab:3: bad minute"}
	want := []string{
		"etc/crontab:3: bad minute",
		"runs twice: sysstat-collect.timer (10m) and cron.d/sysstat-local:3 (5m): sa1 1 1",
		"runs twice: sysstat-summary.timer (1d) and cron.d/sysstat-local:5 (1d): sa2 -A",
	}
	if d := cmp.Diff(want, Problems(l)); d != "" {
		t.Errorf("Problems (-want +got):\n%s", d)
	}
	var b strings.Builder
	WriteProblems(&b, l)
	if got := b.String(); got != "memdiag: "+strings.Join(want, "\nmemdiag: ")+"\n" {
		t.Errorf("WriteProblems = %q", got)
	}
	three := timers.Duplicate{Command: "backup", Jobs: []timers.Job{{Name: "a.timer"}, {Name: "b.timer"}, {Name: "cron.d/x:1"}}}
	if got, want := duplicateLine(three), "runs 3 times: a.timer (irregular), b.timer (irregular) and cron.d/x:1 (irregular): backup"; got != want {
		t.Errorf("three definitions: %q, want %q", got, want)
	}
	if got := Problems(timers.Listing{}); got == nil || len(got) != 0 {
		t.Errorf("no problems: %#v, want an empty list (JSON [])", got)
	}
}
