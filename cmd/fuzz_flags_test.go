package cmd

import (
	"testing"
	"time"
)

// The flag parsers of cmd that no package below holds: --from, --to and
// --base-time (parseWhen), --latency-start (parseStartFlag); --mode is
// internal/flagvalue's. The analyze/compare flags parsed by correlate (--spike,
// --stat, --psi-scope, the per-signal thresholds and --lru-drop-min) are
// fuzzed beside their parsers in correlate; durations and sizes are
// units.ParseDuration/ParseBytes, fuzzed in units.

// FuzzParseWhen checks that no time flag panics, that "now" is now, and
// that an accepted time printed in RFC 3339 parses back to itself.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"now", "2026-11-29T21:43:00+01:00", "2026-11-29 21:43", "2026-11-29 21:43:05", "2026-11-29T21:43", "2026-11-29", "2026-02-30", "9999-12-31T23:59:59.999999999-23:59", "0000-01-01"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, loc := range []*time.Location{time.UTC, berlin} {
			got, err := parseWhen(s, now, loc)
			if err != nil {
				continue
			}
			if s == "now" && !got.Equal(now) {
				t.Fatalf("now = %v", got)
			}
			// RFC 3339 offsets have no seconds: a zone's local mean
			// time before 1893 (+00:53:28 in Berlin) loses them.
			back, err := parseWhen(got.Format(time.RFC3339Nano), now, loc)
			if err != nil || back.Sub(got).Abs() >= time.Minute {
				t.Fatalf("parseWhen(%q) = %v; printed and parsed again: %v, %v", s, got, back, err)
			}
		}
	})
}

// FuzzParseStartFlag checks that --latency-start never panics and that an
// accepted time is after the Unix epoch and before time.Duration's limit
// of nanoseconds since it (year 2262): a Unix time past it wrapped.
func FuzzParseStartFlag(f *testing.F) {
	for _, s := range []string{"1795988632", "1795988632.5", "2026-11-29T21:43:00+01:00", "1e300", "Inf", "NaN", "-1", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseStartFlag(s)
		if err != nil {
			return
		}
		if _, rfc := time.Parse(time.RFC3339Nano, s); rfc == nil {
			return // any RFC 3339 time, as written
		}
		if !got.After(time.Unix(0, 0)) || got.UnixNano() < 0 {
			t.Fatalf("parseStartFlag(%q) = %v, not after the epoch", s, got)
		}
	})
}

// TestFlagFuzzFindings: what the flag fuzz targets found. --latency-start
// 1e300 wrapped to 1677. (--spike's and the thresholds' findings are
// correlate's TestOptionFuzzFindings.)
func TestFlagFuzzFindings(t *testing.T) {
	if got, err := parseStartFlag("1e300"); err == nil {
		t.Errorf("parseStartFlag(1e300) = %v", got)
	}
	if got, err := parseStartFlag("1795988632.5"); err != nil || !got.Equal(time.Unix(1795988632, 5e8)) {
		t.Errorf("parseStartFlag(1795988632.5) = %v, %v", got, err)
	}
}
