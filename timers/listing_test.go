package timers

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNewListing: without all, the jobs that run and the malformed ones;
// Malformed are the errors alone, Duplicates the program run twice.
func TestNewListing(t *testing.T) {
	secs := func(s float64) *float64 { return &s }
	live := true
	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	jobs := []Job{
		{Name: "a.timer", File: "a.timer", Source: Systemd, Schedule: []string{"daily"}, Command: "/usr/bin/sa1 1 1", Active: true, PeriodSeconds: secs(86400)},
		{Name: "cron.d/local:3", File: "cron.d/local", Source: Cron, Schedule: []string{"*/5 * * * *"}, Command: "sa1 1 1", Active: true, PeriodSeconds: secs(300)},
		{Name: "off.timer", File: "off.timer", Source: Systemd, Schedule: []string{"hourly"}, Command: "/bin/true"},
		{Name: "bad.timer", File: "bad.timer", Source: Systemd, Errors: []string{"bad.timer:3: OnCalendar=: cannot parse \"dayly\""}},
		// Not enabled, but started by hand: systemd has it active.
		{Name: "started.timer", File: "started.timer", Source: Systemd, Schedule: []string{"hourly"}, Command: "/bin/true", LiveActive: &live},
	}
	names := func(js []Job) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.Name)
		}
		return out
	}
	l := NewListing(jobs, false, base, time.UTC)
	if d := cmp.Diff([]string{"a.timer", "cron.d/local:3", "bad.timer", "started.timer"}, names(l.Jobs)); d != "" {
		t.Errorf("jobs shown (-want +got):\n%s", d)
	}
	malformed := []string{"bad.timer:3: OnCalendar=: cannot parse \"dayly\""}
	if d := cmp.Diff(malformed, l.Malformed); d != "" {
		t.Errorf("Malformed (-want +got):\n%s", d)
	}
	if len(l.Duplicates) != 1 || l.Duplicates[0].Command != "sa1 1 1" || cmp.Diff([]string{"a.timer", "cron.d/local:3"}, names(l.Duplicates[0].Jobs)) != "" {
		t.Errorf("Duplicates = %+v; want sa1 1 1 from a.timer and cron.d/local:3", l.Duplicates)
	}
	if l := NewListing(jobs, true, base, time.UTC); len(l.Jobs) != 5 {
		t.Errorf("all: %v shown, want all five", names(l.Jobs))
	}
}

// TestListingStrict: --strict fails with the count of malformed
// definitions only (a duplicate program is no parse error). (How the
// problems are said: report/timersreport TestProblemsSaid.)
func TestListingStrict(t *testing.T) {
	dup := []Duplicate{{Command: "backup", Jobs: []Job{{Name: "a"}, {Name: "b"}}}}
	l := Listing{Malformed: []string{"etc/crontab:3: bad minute"}, Duplicates: dup}
	if err := l.StrictError(); err == nil || err.Error() != "1 problem in periodic job definitions (--strict)" {
		t.Errorf("StrictError = %v", err)
	}
	if err := (Listing{Duplicates: dup}).StrictError(); err != nil {
		t.Errorf("StrictError without malformed definitions = %v, want nil", err)
	}
}

// TestProbeLiveSourceOffHost: off the live root there is nothing to
// connect to: a nil LiveSource (not a nil pointer in one) and no error.
func TestProbeLiveSourceOffHost(t *testing.T) {
	src, err := ProbeLiveSource(context.Background(), t.TempDir())
	if src != nil || err != nil {
		t.Errorf("ProbeLiveSource off the host = %#v, %v; want nil, nil", src, err)
	}
}
