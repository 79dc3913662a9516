package correlate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/timers"
	"github.com/memdiag/memdiag/units"
)

// Stat is the per-interval latency statistic spikes are detected on.
type Stat string

// Latency statistics.
const (
	StatP99  Stat = "p99"
	StatP95  Stat = "p95"
	StatMax  Stat = "max"
	StatMean Stat = "mean"
)

// ErrOption is wrapped by errors about a bad option value.
var ErrOption = errors.New("invalid option")

// ParseStat parses "p99", "p95", "max" or "mean" ("" is p99).
func ParseStat(s string) (Stat, error) {
	switch st := Stat(strings.ToLower(strings.TrimSpace(s))); st {
	case "":
		return StatP99, nil
	case StatP99, StatP95, StatMax, StatMean:
		return st, nil
	}
	return "", fmt.Errorf("%w: latency statistic %q: want max, p99, p95 or mean", ErrOption, s)
}

// SpikeRule is the floor a latency statistic must also reach to be a
// spike: an absolute latency (Floor) or a multiple of the rolling baseline
// median (Factor). Exactly one is set.
type SpikeRule struct {
	Floor  time.Duration
	Factor float64
}

// DefaultSpikeRule is "3x": three times the rolling baseline.
var DefaultSpikeRule = SpikeRule{Factor: 3}

// ParseSpikeRule parses "500ms" (any Go duration) or "3x" (a factor > 1).
func ParseSpikeRule(s string) (SpikeRule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultSpikeRule, nil
	}
	if f, ok := strings.CutSuffix(strings.ToLower(s), "x"); ok {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 1) || math.IsInf(v, 1) { // NaN and Inf are no factor
			return SpikeRule{}, fmt.Errorf("%w: spike rule %q: a factor must be a number above 1, like 3x", ErrOption, s)
		}
		return SpikeRule{Factor: v}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return SpikeRule{}, fmt.Errorf("%w: spike rule %q: want a latency like 500ms or a factor like 3x", ErrOption, s)
	}
	return SpikeRule{Floor: d}, nil
}

func (r SpikeRule) String() string {
	if r.Floor > 0 {
		return r.Floor.String()
	}
	return strconv.FormatFloat(r.Factor, 'g', -1, 64) + "x"
}

// Signal names one kernel signal an interval can raise.
type Signal string

// Signals, in the order of the timeline table.
const (
	PSISome       Signal = "psi_some"
	PSIFull       Signal = "psi_full"
	LRUDrop       Signal = "lru_drop"
	Refault       Signal = "refault"
	DirectReclaim Signal = Signal(signal.DirectReclaimName) // signal.DirectReclaim: global direct reclaim
	LimitReclaim  Signal = Signal(signal.LimitReclaimName)  // signal.LimitReclaim: reclaim at cgroup limits
	DiskIO        Signal = "disk_io"
	IOTime        Signal = "io_time"
	SwapOut       Signal = "swap_out"
)

// AllSignals lists every signal in table order.
var AllSignals = []Signal{PSISome, PSIFull, LRUDrop, Refault, DirectReclaim, LimitReclaim, DiskIO, IOTime, SwapOut}

// catalogue is the signal catalogue's entry the signal is, nil for the
// signals analyze derives itself (a PSI share of the chosen scope, the
// file LRU's shrink rate, sums of several entries).
func (s Signal) catalogue() *signal.Signal {
	switch s {
	case DirectReclaim:
		return signal.DirectReclaim
	case LimitReclaim:
		return signal.LimitReclaim
	}
	return nil
}

// Unit is the unit of the signal's values.
func (s Signal) Unit() string {
	if c := s.catalogue(); c != nil {
		return c.RateUnit()
	}
	switch s {
	case PSISome, PSIFull:
		return "share" // 0..1 of wall time
	case LRUDrop, DiskIO, SwapOut:
		return "B/s"
	case Refault:
		return "pages/s"
	case IOTime:
		return "s/s"
	}
	return ""
}

// Thresholds are the minimum rises above the recording's median that raise
// each signal (see the package documentation for the defaults and units).
// A negative threshold disables the signal.
type Thresholds struct {
	PSISome       float64 // share of wall time, 0..1
	PSIFull       float64 // share of wall time, 0..1
	LRUDrop       float64 // bytes/s of file LRU shrinking
	LRUDropMin    float64 // bytes the file LRU must also lose within the interval
	Refault       float64 // pages/s
	DirectReclaim float64 // pages/s scanned by global direct reclaim (signal.DirectReclaim)
	LimitReclaim  float64 // pages/s scanned by reclaim at cgroup limits (signal.LimitReclaim)
	DiskIO        float64 // bytes/s read+written
	IOTime        float64 // seconds of weighted I/O time per second
	SwapOut       float64 // bytes/s
	// MADFactor is how many robust standard deviations (1.4826 × MAD) above
	// the median a value must also be.
	MADFactor float64
	// PSISomeMin and PSIFullMin are absolute floors (share of wall time,
	// 0..1) the PSI signals must also reach: PSI is absolute, and a rise
	// over a calm host's median of 0 µs is no pressure. An episode that
	// has started stays open while the stall share stays at or above
	// PSISomeMin/4 (hysteresis, see the package documentation).
	PSISomeMin float64
	PSIFullMin float64
	// Sustained is the stall share (PSI some of the scope, 0..1) above
	// which a recording that stalls for most of its length (SustainedFrac
	// of its intervals) is reported as sustained pressure
	// ([Result.Sustained]), whatever its median.
	Sustained     float64
	SustainedFrac float64
}

// DefaultThresholds returns the documented defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{
		PSISome:       0.02,
		PSIFull:       0.01,
		LRUDrop:       4 << 20,
		LRUDropMin:    32 << 20,
		Refault:       200,
		DirectReclaim: 50,
		LimitReclaim:  50,
		DiskIO:        8 << 20,
		IOTime:        0.2,
		SwapOut:       256 << 10,
		MADFactor:     4,
		PSISomeMin:    0.01,
		PSIFullMin:    0.005,
		Sustained:     0.02,
		SustainedFrac: 0.6,
	}
}

// Get returns the threshold of s.
func (t Thresholds) Get(s Signal) float64 {
	if f := t.field(s); f != nil {
		return *f
	}
	return -1
}

// field is the threshold of s, nil for an unknown signal; Get and Set
// share it so a signal cannot be wired to two different fields.
func (t *Thresholds) field(s Signal) *float64 {
	switch s {
	case PSISome:
		return &t.PSISome
	case PSIFull:
		return &t.PSIFull
	case LRUDrop:
		return &t.LRUDrop
	case Refault:
		return &t.Refault
	case DirectReclaim:
		return &t.DirectReclaim
	case LimitReclaim:
		return &t.LimitReclaim
	case DiskIO:
		return &t.DiskIO
	case IOTime:
		return &t.IOTime
	case SwapOut:
		return &t.SwapOut
	}
	return nil
}

// PSIScope says whose PSI the psi_some and psi_full signals read.
type PSIScope string

// PSI scopes.
const (
	PSIAuto   PSIScope = ""       // the --cgroup group when recorded, else the host
	PSIHost   PSIScope = "host"   // /proc/pressure/memory
	PSICgroup PSIScope = "cgroup" // the recorded --cgroup group's memory.pressure
	PSIAny    PSIScope = "any"    // whichever of the two is higher
)

// ParsePSIScope parses "auto", "host", "cgroup" or "any".
func ParsePSIScope(s string) (PSIScope, error) {
	switch v := PSIScope(strings.ToLower(strings.TrimSpace(s))); v {
	case "auto", "":
		return PSIAuto, nil
	case PSIHost, PSICgroup, PSIAny:
		return v, nil
	}
	return "", fmt.Errorf("%w: PSI scope %q: want auto, host, cgroup or any", ErrOption, s)
}

// ProjectFunc computes the firings of jobs in [from, to]; timers.Project.
type ProjectFunc func(jobs []timers.Job, from, to time.Time, loc *time.Location) []timers.Firing

// Options configure [Analyze]. The zero value means every default.
type Options struct {
	Stat       Stat      // "" is p99
	Spike      SpikeRule // zero is DefaultSpikeRule
	Thresholds *Thresholds

	// PSIScope chooses the PSI the memory signals read; the zero value is
	// the recorded cgroup when there is one, else the host. On a shared
	// host the cgroup of the service under test is what matters.
	PSIScope PSIScope
	// MinSignals is how many kernel signals an interval must raise to be
	// flagged without a latency spike; 0 is 1. A higher value ignores lone
	// disk bursts of unrelated work on a busy host.
	MinSignals int
	// Require, when not empty, makes an interval count only if it raises
	// one of these signals (or has a latency spike, which then forms a
	// spike outside episodes unless a required signal rose with it). Nil
	// means psi_some and psi_full whenever the recording has memory PSI of
	// the scope: a memory-pressure episode needs memory pressure, and
	// intervals that raised only disk or reclaim signals are reported as
	// I/O bursts ([Result.IOBursts]). An empty non-nil slice is no
	// requirement.
	Require []Signal

	// BaselineWindow is how many previous intervals with requests form the
	// rolling latency baseline; 0 is 30.
	BaselineWindow int
	// LatencyMADFactor: a spike exceeds the rolling median by more than this
	// many robust standard deviations; 0 is 4.
	LatencyMADFactor float64
	// GapTolerance merges flagged intervals separated by at most this much
	// quiet time; 0 is one sampling interval, negative merges only
	// adjacent intervals.
	GapTolerance time.Duration
	// LagTolerance is how long after a firing's Latest an episode may start
	// and still be matched to it; 0 is 60 s. It is capped at a quarter of
	// the job's period.
	LagTolerance time.Duration
	// GrowthMinWindow is how long a process must be observed before its
	// steady RSS growth is reported; 0 is memstate.MinGrowthWindow.
	GrowthMinWindow time.Duration
	// MinProcBytes is the I/O (read+write) a process must do in an episode
	// to be listed as one of its I/O processes; 0 is 1 MiB.
	MinProcBytes uint64
	// TopProcs is how many I/O processes an episode lists; 0 is 5.
	TopProcs int

	// Requests, when not nil, replace the recording's Sample.Latency
	// summaries (an imported load-test result file).
	Requests *latency.Requests
	// LatencyWithFailed puts failed requests into the latency statistics
	// of each interval; by default they count in Summary.Count and Errors
	// but not in Mean and the percentiles (a refused connection answers
	// fast and would pass for a fast service).
	LatencyWithFailed bool
	// IntervalStats, when Requests is nil, replace Sample.Latency with
	// per-interval rows of a results file (Locust's stats history): rows
	// ending in an interval are combined, percentiles by their maximum.
	IntervalStats []latency.IntervalStat
	// Project projects the header's jobs over the recording; nil means jobs
	// are matched only through their processes (a warning says so).
	Project ProjectFunc
	// Location is the zone schedules and the timeline use; nil derives it
	// from the header (TimeZone, else UTCOffset).
	Location *time.Location

	// Model holds the culprit model's thresholds; its zero fields are
	// DefaultModel's.
	Model ModelThresholds
}

// ModelThresholds are the culprit model's thresholds (docs/analyze.md,
// "The culprit model", names the stage that applies each).
type ModelThresholds struct {
	// CreditFloor is the I/O (read+write, bytes) a culprit's processes
	// must do in an episode, or the memory (RSS growth, bytes) they must
	// take, to be credited with it; under a traced chain, the victim's
	// pages reclaim must take for the chain to judge the episode, and
	// the cost a culprit must have (creditEpisode, creditPatterns,
	// creditShared, chainEpisodes). Default 4 MiB.
	CreditFloor uint64
	// MinShare is the share (0..1) of the episode's in-scope I/O (or
	// memory taken, or the victim's loss) a culprit must have, alone or
	// with the jobs of its wake-up, to be credited. Default 0.25.
	MinShare float64
	// SoloShare is the share (0..1) a culprit credited with one episode
	// needs, with a start no later than one interval after the stall
	// began; or one credited with more, when chance is not ruled out
	// (nameJob, weighPatterns, weighShared). Default 0.5.
	SoloShare float64
	// MaxChance is the chance probability (null model or firings) below
	// which a culprit credited with two or more episodes is named.
	// Default 0.01.
	MaxChance float64
	// SoloCap caps the confidence (0..1) of a culprit credited with one
	// episode. Default 0.6.
	SoloCap float64
	// BlindCap caps the confidence of a job named from its firings
	// alone, when the recording has no per-process data. Default 0.45.
	BlindCap float64
	// RideAlongCap caps the confidence of a job credited only together
	// with the jobs of its wake-up: its own median share is below
	// MinShare, so it is never more than low (weighNull). Default 0.49.
	RideAlongCap float64
	// LateFactor scales the confidence when the culprit's processes
	// started after the stall had begun in every credited episode
	// (Proof.confidence). Default 0.8.
	LateFactor float64
	// UnknownMinHits is how many episodes on its schedule a recurrence
	// that no job or process explains needs to be reported, kind unknown
	// (explainUnknown). Default 5.
	UnknownMinHits int
	// UnknownFactor scales the period's score into the confidence of a
	// recurrence of unknown cause (explainUnknown). Default 0.5.
	UnknownFactor float64
	// FiringsMatched is the share (0..1) of a job's counted firings that
	// must fall at episodes for it to be named from its firings alone
	// (no per-process data; nameJob). Default 0.5.
	FiringsMatched float64
	// BusyFactor is how many times busier, in I/O per interval, a
	// program must be inside episodes than outside them for its episodes
	// to be specific to it (specific: the service itself, always busy,
	// is not). Default 3.
	BusyFactor float64
	// PresentRate is the share of its median rate in the credited
	// episodes at which a culprit's processes count as present in an
	// interval outside them (presence: the null model's "present").
	// Default 0.5.
	PresentRate float64
	// WakeIntervals and WakeMin bound a wake-up: processes that started
	// within max(WakeIntervals sampling intervals, WakeMin) of each other
	// started together (the jobs of one wake-up; a process started
	// before an episode within it began it). Defaults 2 and 5 s.
	WakeIntervals int
	WakeMin       time.Duration
	// UndecidedShare and UndecidedOverlap decide the undecided stage
	// (splitUndecided): jobs fired together are undecided when the
	// second's work is at least UndecidedShare of the first's, or when
	// the first did less than 1/UndecidedShare times the other's work in
	// more than 1 − UndecidedOverlap of the episodes both are credited
	// with; two jobs fired together share at least UndecidedOverlap of
	// the smaller one's credited episodes. Defaults 0.5 and 0.8.
	UndecidedShare   float64
	UndecidedOverlap float64
}

// DefaultModel returns the culprit model's documented thresholds.
func DefaultModel() ModelThresholds {
	return ModelThresholds{
		CreditFloor:      4 << 20,
		MinShare:         0.25,
		SoloShare:        0.5,
		MaxChance:        0.01,
		SoloCap:          0.6,
		BlindCap:         0.45,
		RideAlongCap:     0.49,
		LateFactor:       0.8,
		UnknownMinHits:   5,
		UnknownFactor:    0.5,
		FiringsMatched:   0.5,
		BusyFactor:       3,
		PresentRate:      0.5,
		WakeIntervals:    2,
		WakeMin:          5 * time.Second,
		UndecidedShare:   0.5,
		UndecidedOverlap: 0.8,
	}
}

// withDefaults fills m's zero fields from DefaultModel.
func (m ModelThresholds) withDefaults() ModelThresholds {
	d := DefaultModel()
	if m.CreditFloor == 0 {
		m.CreditFloor = d.CreditFloor
	}
	for _, f := range []struct{ v, d *float64 }{
		{&m.MinShare, &d.MinShare}, {&m.SoloShare, &d.SoloShare}, {&m.MaxChance, &d.MaxChance},
		{&m.SoloCap, &d.SoloCap}, {&m.BlindCap, &d.BlindCap}, {&m.RideAlongCap, &d.RideAlongCap},
		{&m.LateFactor, &d.LateFactor}, {&m.UnknownFactor, &d.UnknownFactor}, {&m.FiringsMatched, &d.FiringsMatched},
		{&m.BusyFactor, &d.BusyFactor}, {&m.PresentRate, &d.PresentRate},
		{&m.UndecidedShare, &d.UndecidedShare}, {&m.UndecidedOverlap, &d.UndecidedOverlap},
	} {
		if *f.v == 0 {
			*f.v = *f.d
		}
	}
	if m.UnknownMinHits == 0 {
		m.UnknownMinHits = d.UnknownMinHits
	}
	if m.WakeIntervals == 0 {
		m.WakeIntervals = d.WakeIntervals
	}
	if m.WakeMin == 0 {
		m.WakeMin = d.WakeMin
	}
	return m
}

func (o Options) withDefaults() Options {
	if o.Stat == "" {
		o.Stat = StatP99
	}
	if o.Spike.Floor <= 0 && o.Spike.Factor <= 0 {
		o.Spike = DefaultSpikeRule
	}
	if o.Thresholds == nil {
		t := DefaultThresholds()
		o.Thresholds = &t
	} else {
		t, d := *o.Thresholds, DefaultThresholds()
		if t.MADFactor <= 0 {
			t.MADFactor = d.MADFactor
		}
		if t.PSISomeMin == 0 {
			t.PSISomeMin = d.PSISomeMin
		}
		if t.PSIFullMin == 0 {
			t.PSIFullMin = d.PSIFullMin
		}
		if t.Sustained == 0 {
			t.Sustained = d.Sustained
		}
		if t.SustainedFrac == 0 {
			t.SustainedFrac = d.SustainedFrac
		}
		o.Thresholds = &t
	}
	if o.MinSignals <= 0 {
		o.MinSignals = 1
	}
	if o.BaselineWindow <= 0 {
		o.BaselineWindow = 30
	}
	if o.LatencyMADFactor <= 0 {
		o.LatencyMADFactor = 4
	}
	if o.LagTolerance <= 0 {
		o.LagTolerance = 60 * time.Second
	}
	if o.MinProcBytes == 0 {
		o.MinProcBytes = 1 << 20
	}
	if o.TopProcs <= 0 {
		o.TopProcs = 5
	}
	o.Model = o.Model.withDefaults()
	return o
}

// ParseSignals parses a comma-separated list of signal names
// ("psi_some,psi_full"; "psi" is both PSI signals).
func ParseSignals(v string) ([]Signal, error) {
	var out []Signal
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(strings.ReplaceAll(strings.ToLower(f), "-", "_"))
		switch {
		case f == "":
			continue
		case f == "psi":
			out = append(out, PSISome, PSIFull)
			continue
		}
		s := Signal(f)
		if !slices.Contains(AllSignals, s) {
			return nil, fmt.Errorf("%w: signal %q: want one of %v or psi", ErrOption, f, AllSignals)
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseThreshold parses a threshold for signal s as a user writes it:
// "2%" or "0.02" for PSI shares, "4MiB" (per second implied, "/s"
// allowed; B, KiB, MiB, GiB, KB, MB, GB) for byte rates, plain numbers for
// pages/s and s/s, and "off" to disable the signal (-1).
func ParseThreshold(s Signal, v string) (float64, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "off") {
		return -1, nil
	}
	bad := func() (float64, error) {
		return 0, fmt.Errorf("%w: %s threshold %q: want %s or off", ErrOption, s, v, thresholdHint(s))
	}
	var x float64
	var err error
	switch s.Unit() {
	case "share":
		if x, err = units.ParseShare(v); err != nil {
			return bad()
		}
	case "B/s":
		x, err = parseBytes(strings.TrimSuffix(v, "/s"))
		if err != nil {
			return bad()
		}
	default:
		x, err = strconv.ParseFloat(strings.TrimSuffix(v, "/s"), 64)
		if err != nil || x < 0 {
			return bad()
		}
	}
	if math.IsNaN(x) || math.IsInf(x, 0) { // "NaN" and "Inf" parse as floats
		return bad()
	}
	return x, nil
}

func thresholdHint(s Signal) string {
	switch s.Unit() {
	case "share":
		return "a share of wall time like 2% or 0.02"
	case "B/s":
		return "a rate like 8MiB (per second)"
	case "s/s":
		return "seconds of I/O time per second like 0.2"
	}
	return "a rate in pages per second like 200"
}

// parseBytes parses "4MiB", "512KiB", "1.5GB", "1048576" (units.ParseBytes).
func parseBytes(v string) (float64, error) {
	x, err := units.ParseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("bad size %q", strings.TrimSpace(v))
	}
	return x, nil
}

// Set sets the threshold of s.
func (t *Thresholds) Set(s Signal, v float64) {
	if f := t.field(s); f != nil {
		*f = v
	}
}
