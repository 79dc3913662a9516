package analysis

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/usage"
)

// analyze's defaults, as its flags give them.
var defaults = Settings{Stat: "p99", Spike: "3x", PSIScope: "auto", MinSignals: 1, LRUDropMin: "32MiB", Lag: time.Minute}

func TestSettingsCorrelate(t *testing.T) {
	s := defaults
	s.Thresholds = map[correlate.Signal]string{correlate.DiskIO: "64MiB", correlate.PSISome: "5%"}
	s.Require, s.LRUDropMin, s.Gap = "none", "8MiB", 2*time.Second
	co, err := s.Correlate()
	if err != nil {
		t.Fatal(err)
	}
	if got := co.Thresholds.Get(correlate.DiskIO); got != 64<<20 {
		t.Errorf("--disk-io 64MiB = %g B/s", got)
	}
	if got := co.Thresholds.Get(correlate.PSISome); got != 0.05 {
		t.Errorf("--psi-some 5%% = %g", got)
	}
	def := correlate.DefaultThresholds()
	if got := co.Thresholds.Get(correlate.SwapOut); got != def.Get(correlate.SwapOut) {
		t.Errorf("--swap-out not given = %g, want the default %g", got, def.Get(correlate.SwapOut))
	}
	if co.Thresholds.LRUDropMin != 8<<20 || co.Require == nil || len(co.Require) != 0 || co.GapTolerance != 2*time.Second || co.LagTolerance != time.Minute {
		t.Errorf("options %+v", co)
	}
	if co, _ := defaults.Correlate(); co.Require != nil {
		t.Errorf("--require not given = %v, want nil (the recording decides)", co.Require)
	}
}

// Each bad value is a usage error naming its flag.
func TestSettingsCorrelateBad(t *testing.T) {
	for flag, bad := range map[string]func(*Settings){
		"--stat":              func(s *Settings) { s.Stat = "median" },
		"--spike":             func(s *Settings) { s.Spike = "lots" },
		"--psi-scope":         func(s *Settings) { s.PSIScope = "galaxy" },
		"--min-signals":       func(s *Settings) { s.MinSignals = 99 },
		"--require":           func(s *Settings) { s.Require = "latency" },
		"--disk-io":           func(s *Settings) { s.Thresholds = map[correlate.Signal]string{correlate.DiskIO: "fast"} },
		"--lru-drop-min":      func(s *Settings) { s.LRUDropMin = "-1MiB" },
		"--growth-min-window": func(s *Settings) { s.GrowthWindow = -time.Second },
	} {
		s := defaults
		bad(&s)
		_, err := s.Correlate()
		var ue *usage.Error
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), flag) {
			t.Errorf("%s: %T %v; want a usage error naming it", flag, err, err)
		}
	}
}
