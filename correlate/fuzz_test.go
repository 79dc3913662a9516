package correlate

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// The option strings of analyze and compare that correlate parses: --stat
// (ParseStat), --spike (ParseSpikeRule), --psi-scope (ParsePSIScope), the
// per-signal thresholds and --lru-drop-min (ParseThreshold) and signal
// lists (ParseSignals). Seeds are the values docs/analyze.md and the
// flags' help show, and the inputs the targets once found (testdata/fuzz).

// FuzzParseSpikeRule checks --spike: no panic; an accepted rule is a
// positive floor or a finite factor above 1, and prints as a rule parsing
// back to itself.
func FuzzParseSpikeRule(f *testing.F) {
	for _, s := range []string{"3x", "1.5X", "500ms", "1x", "NaNx", "Infx", "-1s", "0s", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseSpikeRule(s)
		if err != nil {
			if !errors.Is(err, ErrOption) {
				t.Fatalf("ParseSpikeRule(%q): %v does not wrap ErrOption", s, err)
			}
			return
		}
		if r.Floor < 0 || (r.Floor == 0 && !(r.Factor > 1 && !math.IsInf(r.Factor, 0))) {
			t.Fatalf("ParseSpikeRule(%q) = %+v", s, r)
		}
		if back, err := ParseSpikeRule(r.String()); err != nil || back != r {
			t.Fatalf("ParseSpikeRule(%q) = %+v; %q parses to %+v, %v", s, r, r.String(), back, err)
		}
	})
}

// FuzzParseThreshold checks every signal's threshold: no panic; an
// accepted value is "off" (-1) or a finite number of 0 or more, a share at
// most 1.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"2%", "1%", "0.02", "4MiB", "8MiB", "256KiB", "32MiB", "200", "50", "0.2",
		"off", "1e400", "NaN", "-1%", "Inf", "10MB", "4MiB/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, sig := range AllSignals {
			x, err := ParseThreshold(sig, v)
			if err != nil {
				if !errors.Is(err, ErrOption) {
					t.Fatalf("ParseThreshold(%s, %q): %v does not wrap ErrOption", sig, v, err)
				}
				continue
			}
			if x != -1 && (math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || (sig.Unit() == "share" && x > 1)) {
				t.Fatalf("ParseThreshold(%s, %q) = %v", sig, v, x)
			}
		}
	})
}

// FuzzParseOptions checks --stat, --psi-scope and signal lists: no panic,
// an error wraps ErrOption, and what is accepted is a known value that
// parses back to itself.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"p99", "P95", " max ", "mean", "", "auto", "host", "cgroup", "any",
		"psi", "psi_some,psi-full", "lru_drop,refault,disk_io", ",,", "p50"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if st, err := ParseStat(s); err == nil {
			if !slices.Contains([]Stat{StatP99, StatP95, StatMax, StatMean}, st) {
				t.Fatalf("ParseStat(%q) = %q", s, st)
			}
		} else if !errors.Is(err, ErrOption) {
			t.Fatalf("ParseStat(%q): %v", s, err)
		}
		if sc, err := ParsePSIScope(s); err == nil {
			if back, err := ParsePSIScope(string(sc)); err != nil || back != sc {
				t.Fatalf("ParsePSIScope(%q) = %q; it parses to %q, %v", s, sc, back, err)
			}
		} else if !errors.Is(err, ErrOption) {
			t.Fatalf("ParsePSIScope(%q): %v", s, err)
		}
		sigs, err := ParseSignals(s)
		if err != nil {
			if !errors.Is(err, ErrOption) {
				t.Fatalf("ParseSignals(%q): %v", s, err)
			}
			return
		}
		for _, sig := range sigs {
			if !slices.Contains(AllSignals, sig) {
				t.Fatalf("ParseSignals(%q) = %v: %q is no signal", s, sigs, sig)
			}
		}
	})
}

// TestOptionFuzzFindings: what the option fuzz targets found: --spike
// NaNx and Infx were accepted as factors; a threshold of NaN or Inf was
// accepted (NaN compares false: never crossed, silently off).
func TestOptionFuzzFindings(t *testing.T) {
	for _, s := range []string{"NaNx", "Infx", "+Infx"} {
		if r, err := ParseSpikeRule(s); err == nil {
			t.Errorf("ParseSpikeRule(%q) = %+v", s, r)
		}
	}
	for _, c := range []struct {
		sig Signal
		v   string
	}{{PSISome, "NaN"}, {PSISome, "NaN%"}, {IOTime, "Inf"}, {Refault, "NaN"}} {
		if x, err := ParseThreshold(c.sig, c.v); err == nil {
			t.Errorf("ParseThreshold(%s, %q) = %v", c.sig, c.v, x)
		}
	}
	if x, err := ParseThreshold(PSISome, "5%"); err != nil || x != 0.05 {
		t.Errorf("ParseThreshold(psi_some, 5%%) = %v, %v", x, err)
	}
}
