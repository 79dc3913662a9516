package cmd

import (
	"testing"
)

// The flag parsers of cmd that no package below holds: --mode
// (parseMode). The time flags of timers are fuzzed beside ParseWhen in
// timers, --latency-start beside analysis.ParseStart; the analyze/compare
// flags parsed by correlate (--spike, --stat, --psi-scope, the per-signal
// thresholds and --lru-drop-min) beside their parsers in correlate;
// durations and sizes are units.ParseDuration/ParseBytes, fuzzed in units.

// FuzzParseMode checks that --mode never panics and accepts only
// permission bits that keep the owner's read and write.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"0600", "640", "0o644", "0777", "04755", "0400", "", "0x1ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMode(s)
		if err != nil {
			return
		}
		if m&^0o777 != 0 || m&0o600 != 0o600 {
			t.Fatalf("parseMode(%q) = %o", s, m)
		}
		if back, err := parseMode(modeValue{&m}.String()); err != nil || back != m {
			t.Fatalf("parseMode(%q) = %o; its String %q parses to %o, %v", s, m, modeValue{&m}.String(), back, err)
		}
	})
}
