package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/usage"
)

// ThresholdFlag is the flag of one signal's threshold (analyze --psi-some).
type ThresholdFlag struct {
	Signal correlate.Signal
	Flag   string // without the dashes
	Help   string
}

// ThresholdFlags are the threshold flags of analyze, one per signal.
var ThresholdFlags = []ThresholdFlag{
	{correlate.PSISome, "psi-some", "PSI memory some rise (share of wall time: 2% or 0.02)"},
	{correlate.PSIFull, "psi-full", "PSI memory full rise (share of wall time)"},
	{correlate.LRUDrop, "lru-drop", "file LRU shrink rate, bytes/s"},
	{correlate.Refault, "refault", "workingset refault rise, pages/s"},
	{correlate.DirectReclaim, "direct-reclaim", "global direct reclaim scan rise (pgscan_direct), pages/s"},
	{correlate.LimitReclaim, "limit-reclaim", "cgroup-limit reclaim scan rise (pgscan_anon+file − kswapd − direct), pages/s"},
	{correlate.DiskIO, "disk-io", "disk read+write rise, bytes/s"},
	{correlate.IOTime, "io-time", "disk weighted I/O time rise, s/s"},
	{correlate.SwapOut, "swap-out", "swap-out rise, bytes/s"},
}

// DefaultThreshold is threshold v of signal s as its flag's default
// shows it: a share as a percentage, a byte rate with its unit.
func DefaultThreshold(s correlate.Signal, v float64) string {
	switch s.Unit() {
	case "share":
		return fmt.Sprintf("%g%%", v*100)
	case "B/s":
		return correlate.FormatBytes(uint64(v))
	}
	return fmt.Sprint(v)
}

// Settings are the analysis flags of analyze and compare as typed; see
// analyze --help for each.
type Settings struct {
	Stat, Spike string // --stat, --spike
	PSIScope    string // --psi-scope
	MinSignals  int    // --min-signals
	Require     string // --require; "" = the default, "none" = no requirement
	// Thresholds holds the threshold flags that were given, by signal.
	Thresholds   map[correlate.Signal]string
	LRUDropMin   string // --lru-drop-min; "" = default
	Gap, Lag     time.Duration
	GrowthWindow time.Duration // --growth-min-window
}

// Correlate turns the settings into correlate's options; a value that
// cannot be used is a *usage.Error naming its flag.
func (s Settings) Correlate() (correlate.Options, error) {
	var co correlate.Options
	var err error
	if co.Stat, err = correlate.ParseStat(s.Stat); err != nil {
		return co, usage.Flag("--stat", err)
	}
	if co.Spike, err = correlate.ParseSpikeRule(s.Spike); err != nil {
		return co, usage.Flag("--spike", err)
	}
	if co.PSIScope, err = correlate.ParsePSIScope(s.PSIScope); err != nil {
		return co, usage.Flag("--psi-scope", err)
	}
	if s.MinSignals < 0 || s.MinSignals > len(correlate.AllSignals) {
		return co, usage.Errorf("--min-signals: want 1 to %d", len(correlate.AllSignals))
	}
	co.MinSignals = s.MinSignals
	if co.Require, err = parseRequire(s.Require); err != nil {
		return co, err
	}
	th, err := s.thresholds()
	if err != nil {
		return co, err
	}
	co.Thresholds = &th
	co.GapTolerance, co.LagTolerance = s.Gap, s.Lag
	if s.GrowthWindow < 0 {
		return co, usage.Errorf("--growth-min-window must not be negative")
	}
	co.GrowthMinWindow = s.GrowthWindow
	return co, nil
}

// parseRequire reads --require: nil for the default (the cgroup's memory
// PSI when one was recorded), none for no requirement.
func parseRequire(s string) ([]correlate.Signal, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return nil, nil
	case "none":
		return []correlate.Signal{}, nil
	}
	req, err := correlate.ParseSignals(s)
	if err != nil {
		return nil, usage.Flag("--require", err)
	}
	return req, nil
}

// thresholds are the default thresholds with the given flags applied.
func (s Settings) thresholds() (correlate.Thresholds, error) {
	th := correlate.DefaultThresholds()
	for _, t := range ThresholdFlags {
		v, ok := s.Thresholds[t.Signal]
		if !ok {
			continue
		}
		x, err := correlate.ParseThreshold(t.Signal, v)
		if err != nil {
			return th, usage.Flag("--"+t.Flag, err)
		}
		th.Set(t.Signal, x)
	}
	if s.LRUDropMin != "" {
		v, err := correlate.ParseThreshold(correlate.DiskIO, s.LRUDropMin) // a byte count, same syntax
		if err != nil || v < 0 {
			return th, usage.Errorf("--lru-drop-min: want a size like 32MiB")
		}
		th.LRUDropMin = v
	}
	return th, nil
}
