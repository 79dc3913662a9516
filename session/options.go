package session

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/memdiag/memdiag/latency"
)

// Options say what a recording session samples and how. cmd fills them
// from the flags of watch, record and gate; the zero value of a field is
// "not asked for".
type Options struct {
	// Root is the filesystem root collectors and inventories read:
	// "/" on a live host, a fixture tree in tests.
	Root    string
	Now     func() time.Time // nil: time.Now
	Logger  *slog.Logger     // the sampler's; nil: slog.Default
	Version string           // memdiag's version, stored in the header

	Interval time.Duration
	// Duration, when positive, ends the run after that long, rounded up
	// to whole intervals (see Limit).
	Duration time.Duration
	// Cgroup is --cgroup as given: a cgroup v2 directory (absolute, read
	// under Root) or a group path below the cgroup2 mount ("system.slice/
	// web.service"). BuildSources resolves it with cgroupfs.Resolve, as
	// gate does: one meaning for every command.
	Cgroup      string
	Victim      string // --victim PID|UNIT|CGROUP
	TopN        int
	KeepCmdline bool // store command lines (and the probe URL) unredacted
	AllDevices  bool
	Command     []string // the command after --, run and supervised

	ProbeURL    string
	ProbeEvery  time.Duration
	LatencyFile string
	LatencyFmt  string
	JMeter      *latency.JMeterSave // the columns of a header-less JMeter CSV; nil: none
	NoTimers    bool
	// Events and EBPF are "auto", "on" or "off" (EBPF "": not traced,
	// no status listed).
	Events, EBPF string
	// StallThreshold of PSI memory "some" stall within StallWindow marks
	// an onset; 0 disables.
	StallThreshold, StallWindow time.Duration
	EnableDelayAcct             bool
	// DelayAcctLeftover says and undoes the delay accounting a killed
	// run left on, before anything else (watch).
	DelayAcctLeftover bool
	// ListenAddr, when not "", serves /metrics there from the session's
	// samples (--listen), with WebConfigFile's TLS and basic auth
	// (--web.config.file); Session.MetricsURL is where.
	ListenAddr, WebConfigFile string
	// Summarize keeps the totals of the end summary (Session.Summary).
	Summarize bool

	// The wrapped command's stdin, stdout and stderr; Stderr also gets
	// the session's notes (a store's state lines, delay accounting).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Limit is the number of samples of a run of duration d at interval iv:
// d is a whole number of intervals, rounded up, so that the sample due at
// exactly d is the last one, plus the first sample at 0; fewer when
// samples were missed, as the run still ends at d (record.Sampler.Limit
// counts slots of the grid). 0 (no limit) when d is not positive.
func Limit(d, iv time.Duration) int {
	if d <= 0 {
		return 0
	}
	n := int(d / iv)
	if d%iv != 0 {
		n++
	}
	return n + 1
}

// UsageError is a bad flag value found while wiring the session (a
// --victim that names nothing, a --probe URL that cannot be probed): cmd
// prints it with the usage hint and exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// CheckModes checks the settings watch and record share: Events and
// EBPF are auto, on or off, and a StallThreshold comes with a
// StallWindow of 500ms..10s no shorter than it. Its errors are
// *UsageError naming the flags.
func (o *Options) CheckModes() error {
	for _, m := range []struct{ flag, v string }{{"events", o.Events}, {"ebpf", o.EBPF}} {
		switch m.v {
		case "auto", "on", "off":
		default:
			return &UsageError{Err: fmt.Errorf("--%s %q: want auto, on or off", m.flag, m.v)}
		}
	}
	if o.StallThreshold > 0 && (o.StallWindow < 500*time.Millisecond || o.StallWindow > 10*time.Second || o.StallThreshold > o.StallWindow) {
		return &UsageError{Err: errors.New("--stall-window must be 500ms..10s and at least --stall-threshold")}
	}
	return nil
}
