package cmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0}, {"500ms", 500 * time.Millisecond}, {"90s", 90 * time.Second}, {"1h30m", 90 * time.Minute},
		{"2d", 2 * day}, {"1w", 7 * day}, {"1.5d", 36 * time.Hour}, {"1d12h", 36 * time.Hour},
		{"1w2d", 9 * day}, {"2w1d6h30m", 15*day + 6*time.Hour + 30*time.Minute},
	} {
		got, err := parseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "2", "2x", "d", "2days", "1d-1h", "-2d", "2d1w", "1.2.3d"} {
		if d, err := parseDuration(in); !errors.Is(err, errDuration) {
			t.Errorf("parseDuration(%q) = %v, %v; want errDuration", in, d, err)
		}
	}
}

// TestRunTimersToDays: --to takes a duration in days after --from, and a
// bad value names the flag.
func TestRunTimersToDays(t *testing.T) {
	code, out, errOut := runCLI(t, timersRoot("debian"), "timers", "--tz", "UTC", "-f", "json",
		"--from", "2026-11-29T12:00:00Z", "--to", "2d")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, errOut)
	}
	var doc struct{ From, To string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.From != "2026-11-29T12:00:00Z" || doc.To != "2026-12-01T12:00:00Z" {
		t.Errorf("window %s – %s, want 2026-11-29T12:00:00Z – 2026-12-01T12:00:00Z", doc.From, doc.To)
	}
	code, _, errOut = runCLI(t, timersRoot("debian"), "timers", "--from", "now", "--to", "2 days")
	want := `--to "2 days": want a time (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or 'now') or a duration after --from such as 2h, 2d or 1w`
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Errorf("exit code %d, stderr %q; want %d and %q", code, errOut, exitUsage, want)
	}
}
