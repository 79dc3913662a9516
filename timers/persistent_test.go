package timers

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPersistentStampCatchUp: Debian's logrotate.timer (OnCalendar=daily,
// Persistent=true) and sysstat-summary.timer (OnCalendar=00:07:00, no
// Persistent=), copied unchanged into a root with a stamp file each, as
// systemd keeps them in /var/lib/systemd/timers. The persistent timer's
// stamp is its LastTrigger, and a daily elapse since it is owed at the
// timer's next start; the other timer's stamp is not read (systemd keeps
// and loads none for it). A stamp dated in the future is not used (nor
// by systemd).
func TestPersistentStampCatchUp(t *testing.T) {
	root := t.TempDir()
	units := filepath.Join("..", "testdata", "timers", "debian", "lib", "systemd", "system")
	for _, u := range []string{"logrotate.timer", "logrotate.service", "sysstat-summary.timer", "sysstat-summary.service"} {
		b, err := os.ReadFile(filepath.Join(units, u))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "lib/systemd/system"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "lib/systemd/system", u), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamps := filepath.Join(root, stampDir)
	if err := os.MkdirAll(stamps, 0o755); err != nil {
		t.Fatal(err)
	}
	stamp := func(unit string, at time.Time) {
		t.Helper()
		p := filepath.Join(stamps, "stamp-"+unit)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	// Times at whole seconds in UTC, the zone the root names (none: UTC).
	last := time.Now().UTC().Add(-50 * time.Hour).Truncate(time.Second)
	stamp("logrotate.timer", last)
	stamp("sysstat-summary.timer", last)

	jobs := inventory(t, root)
	lr, ss := jobs["logrotate.timer"], jobs["sysstat-summary.timer"]
	if lr.LastTrigger == nil || !lr.LastTrigger.Equal(last) {
		t.Fatalf("logrotate.timer LastTrigger %v, want the stamp's %s", lr.LastTrigger, last)
	}
	if ss.LastTrigger != nil {
		t.Errorf("sysstat-summary.timer (no Persistent=) LastTrigger %v, want none", ss.LastTrigger)
	}
	// daily = *-*-* 00:00:00: the first midnight after the stamp.
	want := last.Truncate(24 * time.Hour).Add(24 * time.Hour)
	now := last.Add(50 * time.Hour)
	if e, ok := CatchUp(lr, now, time.UTC); !ok || !e.Equal(want) {
		t.Errorf("CatchUp(logrotate) = %s, %v; want %s, true", e, ok, want)
	}
	// No elapse between the last trigger and now: nothing owed.
	if e, ok := CatchUp(lr, want.Add(-time.Second), time.UTC); ok {
		t.Errorf("CatchUp before the first elapse = %s, true; want nothing owed", e)
	}
	if e, ok := CatchUp(ss, now, time.UTC); ok {
		t.Errorf("CatchUp(sysstat-summary) = %s, true; want nothing (not Persistent=)", e)
	}

	stamp("logrotate.timer", time.Now().Add(time.Hour))
	if lr := inventory(t, root)["logrotate.timer"]; lr.LastTrigger != nil {
		t.Errorf("a stamp in the future gave LastTrigger %s, want none", lr.LastTrigger)
	}
	if err := os.Remove(filepath.Join(stamps, "stamp-logrotate.timer")); err != nil {
		t.Fatal(err)
	}
	if lr := inventory(t, root)["logrotate.timer"]; lr.LastTrigger != nil {
		t.Errorf("no stamp gave LastTrigger %s, want none", lr.LastTrigger)
	}
}
