package gate

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// Scope says whose signals a gate judges.
type Scope struct {
	// Cgroup is the cgroup v2 directory judged; "" means the host
	// (/proc/pressure/*, /proc/vmstat).
	Cgroup string
	// Limit is the memory cgroup whose limit bounds Cgroup (its own
	// group or an ancestor: v1 memory.limit_in_bytes, v2 memory.max) and
	// LimitBytes that limit; "" when none is known. A group's stall is
	// most often its limit reached, not the host short of memory.
	Limit      string
	LimitBytes uint64
}

func (s Scope) String() string {
	if s.Cgroup == "" {
		return "host"
	}
	return "cgroup " + s.Cgroup
}

// Status is the outcome of one threshold.
type Status string

// Outcomes.
const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	NoData Status = "no data" // the signal could not be read: never a pass
)

// Moment is the sampling interval (or, for an EWMA, the sample) where a
// metric was at its worst.
type Moment struct {
	Start, End time.Time
	// Value in the threshold's unit's base (see [Threshold.Limit]): the
	// interval's stall share in percent, its stall time in seconds, its
	// bytes, count or rate.
	Value float64
}

// Result is the verdict on one threshold.
type Result struct {
	Threshold *Threshold
	Status    Status
	// Observed is the metric over the run in the base unit of the
	// threshold's dimension (compare with Threshold.Limit()); NaN with NoData.
	Observed float64
	Worst    *Moment       // nil with NoData
	Covered  time.Duration // wall time of the intervals that had the signal
	Why      Unjudged      // why NoData; the zero value when judged
	// SignalRate is the metric's catalogue signal over the run as analyze
	// and mem give it: Σchange / Σwall in Signal.RateUnit() (a stall
	// share 0..1, pages/s, events/s), whatever unit the threshold was
	// written in; NaN with NoData or without a catalogue signal.
	SignalRate float64
}

// UnjudgedKind is why a threshold was not judged (Status NoData); the
// report layer says it in words (report/gatereport.Reason).
type UnjudgedKind int

const (
	Judged UnjudgedKind = iota
	// MissingSignal: no interval (or, for a PSI average, no sample) had
	// the metric's signal in the scope; Unjudged.Missing says which.
	MissingSignal
	NoSamples  // the run has no samples
	OneSample  // one sample: a change needs two
	NoInterval // no sampling interval with positive length
	// PartlyCovered: the threshold held, but the signal was there for
	// less than 90 % of the run (Result.Covered of Unjudged.Span).
	PartlyCovered
	// CutShort: the threshold held over what was recorded, but the
	// recording ended abnormally (Unjudged.Ended).
	CutShort
	// SuspectPSI: not judged under --suspect-psi fail, because the
	// threshold's resource's PSI contradicts itself (Report.SuspectPSI).
	SuspectPSI
	// NotStarted: the run did not start because other thresholds'
	// signals are missing (EnvError.Report).
	NotStarted
)

// Unjudged is why a threshold was not judged, as data.
type Unjudged struct {
	Kind    UnjudgedKind
	Missing *SignalMissing // with MissingSignal
	Span    time.Duration  // with PartlyCovered: the run's span
	Ended   string         // with CutShort: why the recording ended abnormally (record.Gaps.Abnormal)
}

// SignalMissing is the error of a metric whose signal no sample carried
// in the scope: the file it comes from, and the first collector error
// the samples recorded ("" when none).
type SignalMissing struct {
	Metric     *Metric
	Scope      Scope
	FirstError string
}

func (e *SignalMissing) Error() string {
	m, scope := e.Metric, e.Scope
	var what string
	switch {
	case m.Resource != "" && scope.Cgroup != "":
		what = fmt.Sprintf("no %s PSI (%s.pressure, %q line) for %s", m.Resource, m.Resource, lineName(m), scope)
	case m.Resource != "":
		what = fmt.Sprintf("no %s PSI (/proc/pressure/%s, %q line)", m.Resource, m.Resource, lineName(m))
	case scope.Cgroup != "":
		what = fmt.Sprintf("no %s counter for %s (cgroup v2 memory.stat/memory.events, or on a hybrid host the v1 memory group of the same path; v1 has no pgscan, pgsteal or swap counters per group)", m.CounterName, scope)
	default:
		what = fmt.Sprintf("no %s counter in /proc/vmstat", m.CounterName)
	}
	if e.FirstError != "" {
		return what + "; first collector error: " + e.FirstError
	}
	return what
}

// Report is the verdict on a run.
type Report struct {
	Scope    Scope
	Start    time.Time // first sample
	End      time.Time // last sample
	Samples  int
	Results  []Result
	Command  *CommandResult // nil unless a command was wrapped
	Warnings []string       // e.g. a truncated recording line
	// Credits are the breaches whose worst moment fell in an episode
	// analyze credits to a culprit (NoteCulprits), in Results' order.
	Credits []Credit
	// Lacks says what the judged recording does not hold (record.Gaps):
	// rendered before the verdict.
	Lacks []string
	// SuspectPSI is where the judged scope's PSI contradicts itself
	// (signal.PSICheck), on Kernel (uname -r, "" unknown): rendered in
	// every format; SuspectAction is what the gate did about it.
	SuspectPSI    []signal.PSISuspect
	Kernel        string
	SuspectAction SuspectAction
}

// SuspectAction is what a gate does with suspect PSI (--suspect-psi).
type SuspectAction string

// Actions.
const (
	// SuspectWarn: judge as usual; say in every format that the PSI is
	// suspect (the default).
	SuspectWarn SuspectAction = "warn"
	// SuspectFail: a threshold on a resource whose PSI is suspect is not
	// judged (no data: never a pass, exit 5); the warning as with warn.
	SuspectFail SuspectAction = "fail"
	// SuspectIgnore: do not check.
	SuspectIgnore SuspectAction = "ignore"
)

// SuspectActions lists the actions, for --suspect-psi's help.
var SuspectActions = []SuspectAction{SuspectWarn, SuspectFail, SuspectIgnore}

// String, Set and Type make *SuspectAction the pflag.Value of
// --suspect-psi: warn (also for ""), fail or ignore.
func (a *SuspectAction) String() string {
	if a == nil || *a == "" {
		return string(SuspectWarn)
	}
	return string(*a)
}

// Set takes one of SuspectActions.
func (a *SuspectAction) Set(s string) error {
	for _, x := range SuspectActions {
		if string(x) == s {
			*a = x
			return nil
		}
	}
	return fmt.Errorf("want warn, fail or ignore, not %q", s)
}

// Type is the value's form in help.
func (*SuspectAction) Type() string { return "warn|fail|ignore" }

// CheckPSI looks for contradictions in the PSI of the judged scope
// (signal.PSICheck) over samples and acts on them as a says. kernel is
// the kernel's release, for the warning. "" is SuspectWarn.
func (r *Report) CheckPSI(samples []record.Sample, kernel string, a SuspectAction) {
	if a == "" {
		a = SuspectWarn
	}
	r.Kernel, r.SuspectAction, r.SuspectPSI = kernel, a, nil
	if a == SuspectIgnore {
		return
	}
	chk := signal.NewPSICheck(signal.PSICheckOptions{})
	for i := range samples {
		s := &samples[i]
		if r.Scope.Cgroup != "" {
			if s.CgroupPSI != nil {
				chk.Add(s.Time, s.CgroupPSI.Snapshot(), s.VMStat.LRU(), s.CgroupVMStat.LRU())
			}
		} else if s.PSI != nil {
			chk.Add(s.Time, s.PSI.Snapshot(), s.VMStat.LRU())
		}
	}
	r.SuspectPSI = chk.Findings()
	if a != SuspectFail {
		return
	}
	for i := range r.Results {
		x := &r.Results[i]
		if x.Status == NoData {
			continue
		}
		for _, f := range r.SuspectPSI {
			if x.Threshold.Metric.Resource == f.Resource {
				x.Status, x.Why = NoData, Unjudged{Kind: SuspectPSI}
				break
			}
		}
	}
}

// SuspectScope names the judged scope in a suspect-PSI sentence.
func (r *Report) SuspectScope() string {
	if r.Scope.Cgroup == "" {
		return "the host"
	}
	return r.Scope.String()
}

// CutShort marks a run whose recording ended abnormally (why: no end
// line, lines cut): a threshold that held over what is left is not
// known to have held over the run, so it is no data, never a pass. A
// breach seen stays a breach.
func (r *Report) CutShort(why string) {
	for i := range r.Results {
		if x := &r.Results[i]; x.Status == Pass {
			x.Status, x.Why = NoData, Unjudged{Kind: CutShort, Ended: why}
		}
	}
}

// CommandResult is how the wrapped command ended.
type CommandResult struct {
	Args     []string
	ExitCode int    // 0 on success; 128+n when killed by signal n
	Signal   string // the signal that killed it ("SIGKILL"), or ""
	Err      string // could not be started, or ""
	// Abort is the breach over the run so far for which memdiag stopped
	// the command before it ended (--abort-on-fail), nil when it did not.
	// An aborted command did not fail on its own.
	Abort *Result
}

// Failed reports whether the command did not succeed on its own (a
// command memdiag aborted did not).
func (c *CommandResult) Failed() bool {
	return c != nil && c.Abort == nil && (c.ExitCode != 0 || c.Err != "")
}

// Count returns how many results have status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, x := range r.Results {
		if x.Status == s {
			n++
		}
	}
	return n
}

// Passed reports whether every threshold held and the command succeeded.
func (r *Report) Passed() bool {
	return r.Count(Fail) == 0 && r.Count(NoData) == 0 && !r.Command.Failed()
}

// Outcome is what a judged run ends with, the first that applies: the
// wrapped command failed, a threshold could not be judged, a threshold
// was breached; else it passed. cmd maps each to its exit code and
// report/gatereport.Outcome says it.
type Outcome int

// The outcomes of a judged run, in order of precedence after OutcomePass.
const (
	OutcomePass Outcome = iota
	OutcomeCommandFailed
	OutcomeNoData
	OutcomeBreach
)

// Outcome is the run's outcome (see Outcome).
func (r *Report) Outcome() Outcome {
	if r.Command.Failed() {
		return OutcomeCommandFailed
	}
	return r.ThresholdOutcome()
}

// FirstFail is, for --abort-on-fail, the first threshold the samples so
// far breach; nil while every one holds or cannot be judged yet. Like
// k6's abortOnFail it judges the run so far: a share of the run can fall
// back under its limit later, but the run is stopped at the first breach.
func FirstFail(h *record.Header, samples []record.Sample, scope Scope, ths []*Threshold) *Result {
	if len(samples) < 2 {
		return nil
	}
	rep := Evaluate(h, samples, scope, ths)
	for i := range rep.Results {
		if rep.Results[i].Status == Fail {
			return &rep.Results[i]
		}
	}
	return nil
}

// Evaluate judges thresholds over the samples of one run. pageSize
// converts page counters to bytes (h.PageSize; 4096 when h is nil or 0).
// Counters that went backwards between two samples (reset, a different
// scope) and intervals lacking the signal are left out; Result.Covered
// says how much of the run was judged, and a threshold with no usable
// interval, or that held but had its signal over less than 90 % of the
// run, is NoData, never a pass.
func Evaluate(h *record.Header, samples []record.Sample, scope Scope, ths []*Threshold) *Report {
	rep := &Report{Scope: scope, Samples: len(samples)}
	if len(samples) > 0 {
		rep.Start, rep.End = samples[0].Time, samples[len(samples)-1].Time
	}
	pageSize := 4096.0
	if h != nil && h.PageSize > 0 {
		pageSize = float64(h.PageSize)
	}
	for _, t := range ths {
		r := evaluate(samples, scope, t, pageSize)
		if span := rep.End.Sub(rep.Start); r.Status == Pass && t.Metric.Kind != KindAvg && r.Covered < span*9/10 {
			// The signal was missing from part of the run (a collector
			// that failed, a group that went away): what held while it
			// was there is not known to have held over the run.
			r.Status, r.Why = NoData, Unjudged{Kind: PartlyCovered, Span: span}
		}
		rep.Results = append(rep.Results, r)
	}
	return rep
}

// point is one interval's (or sample's) value of a metric.
type point struct {
	start, end time.Time
	delta      float64 // the signal's delta in its unit (pages, events), stall in ns; or the EWMA for KindAvg
	dt         time.Duration
}

func evaluate(samples []record.Sample, scope Scope, t *Threshold, pageSize float64) Result {
	m := t.Metric
	res := Result{Threshold: t, Observed: math.NaN(), SignalRate: math.NaN()}
	pts, why := points(samples, scope, m)
	if len(pts) == 0 {
		res.Status, res.Why = NoData, why
		return res
	}
	// value converts a sum of deltas over wall time into the threshold's
	// base unit; it is used for the run and for each interval alike.
	value := func(delta float64, dt time.Duration) float64 {
		switch m.Kind {
		case KindStall:
			if dt <= 0 {
				return math.NaN()
			}
			return math.Min(1, delta/float64(dt)) * 100
		case KindTotal:
			return delta / 1e9
		case KindBytes:
			return delta * pageSize
		case KindCount:
			return delta
		case KindRate, KindEventRate:
			if dt <= 0 {
				return math.NaN()
			}
			r := delta / dt.Seconds()
			if t.Unit.Dim == DimByteRate {
				r *= pageSize
			}
			return r
		}
		return delta // KindAvg: the EWMA itself
	}
	var sum float64
	var covered time.Duration
	var worst *Moment
	for _, p := range pts {
		sum += p.delta
		covered += p.dt
		v := value(p.delta, p.dt)
		if math.IsNaN(v) {
			continue
		}
		better := worst == nil || v > worst.Value
		if t.Op.LowerIsWorse() {
			better = worst == nil || v < worst.Value
		}
		if better {
			worst = &Moment{Start: p.start, End: p.end, Value: v}
		}
	}
	res.Covered, res.Worst = covered, worst
	if m.Kind == KindAvg {
		if worst == nil {
			res.Status, res.Why = NoData, why
			return res
		}
		// The peak (or, for a floor, the lowest) EWMA over the run is the
		// observed value, and its sample is the worst moment.
		res.Observed = worst.Value
	} else {
		res.Observed = value(sum, covered)
		res.SignalRate = signalRate(m.Signal, sum, covered)
	}
	if math.IsNaN(res.Observed) {
		res.Status, res.Why = NoData, Unjudged{Kind: NoInterval}
		return res
	}
	res.Status = Fail
	if t.Op.Holds(res.Observed, t.Limit()) {
		res.Status = Pass
	}
	return res
}

// points extracts the metric's per-interval deltas (or per-sample EWMA
// values) from the samples, skipping those where the signal is missing or
// the counter went backwards. why says why there are none.
func points(samples []record.Sample, scope Scope, m *Metric) (pts []point, why Unjudged) {
	psiOf := func(s *record.Sample) *record.PSI {
		if scope.Cgroup != "" {
			return s.CgroupPSI
		}
		return s.PSI
	}
	reading := func(s *record.Sample) *signal.Reading {
		if scope.Cgroup != "" {
			return s.CgroupReading(nil)
		}
		return s.Reading(nil)
	}
	line := func(s *record.Sample) *record.PSILine {
		r := psiOf(s).Get(m.Resource)
		if r == nil {
			return nil
		}
		if m.Full {
			return r.Full
		}
		return &r.Some
	}
	if len(samples) == 0 {
		return nil, Unjudged{Kind: NoSamples}
	}
	if m.Kind == KindAvg {
		for i := range samples {
			l := line(&samples[i])
			if l == nil {
				continue
			}
			v := l.Avg10
			switch m.Avg {
			case 60:
				v = l.Avg60
			case 300:
				v = l.Avg300
			}
			start := samples[i].Time
			if i > 0 {
				start = samples[i-1].Time
			}
			pts = append(pts, point{start: start, end: samples[i].Time, delta: v})
		}
		if len(pts) == 0 {
			return nil, missing(samples, scope, m)
		}
		return pts, Unjudged{}
	}
	if len(samples) < 2 {
		return nil, Unjudged{Kind: OneSample}
	}
	for i := 1; i < len(samples); i++ {
		a, b := &samples[i-1], &samples[i]
		dt := b.Time.Sub(a.Time)
		if dt <= 0 {
			continue
		}
		d, ok := m.Signal.Between(reading(a), reading(b))
		if !ok {
			continue
		}
		if m.Signal.Unit == signal.Seconds {
			d = math.Round(d * 1e9) // whole ns, as the kernel counts (µs), summed exactly
		}
		pts = append(pts, point{start: a.Time, end: b.Time, delta: d, dt: dt})
	}
	if len(pts) == 0 {
		return nil, missing(samples, scope, m)
	}
	return pts, Unjudged{}
}

// signalRate is sum (the change of sig over the intervals points kept,
// whole ns for a Seconds signal) per second of covered, in
// sig.RateUnit(): the same value as analyze's and mem's for the same
// samples.
func signalRate(sig *signal.Signal, sum float64, covered time.Duration) float64 {
	if sig == nil || covered <= 0 {
		return math.NaN()
	}
	if sig.Unit == signal.Seconds {
		sum /= 1e9
	}
	r := sum / covered.Seconds()
	if sig.PSI != nil {
		r = math.Min(r, 1)
	}
	return r
}

// missing is the signal's absence, with the first collector error
// recorded in the samples, if any.
func missing(samples []record.Sample, scope Scope, m *Metric) Unjudged {
	e := &SignalMissing{Metric: m, Scope: scope}
	for _, s := range samples {
		if len(s.Errors) > 0 {
			e.FirstError = s.Errors[0]
			break
		}
	}
	return Unjudged{Kind: MissingSignal, Missing: e}
}

func lineName(m *Metric) string {
	if m.Full {
		return "full"
	}
	return "some"
}

// EnvError says the signals some thresholds need cannot be read here, so
// the gate cannot judge them (`memdiag gate` exits 5, never a pass).
type EnvError struct {
	Problems []Problem
}

// Problem is one threshold whose signal is missing, and which.
type Problem struct {
	Threshold *Threshold
	Missing   *SignalMissing
}

func (e *EnvError) Error() string {
	var lines []string
	for _, p := range e.Problems {
		lines = append(lines, p.Threshold.Expr+": "+p.Missing.Error())
	}
	if len(lines) == 1 {
		return "cannot judge " + lines[0]
	}
	return "cannot judge these thresholds:\n  " + strings.Join(lines, "\n  ")
}

// Report is the verdict when the run could not start: every threshold is
// NoData, with its own reason or, if its signal was there, because the
// run did not take place.
func (e *EnvError) Report(scope Scope, at time.Time, ths []*Threshold) *Report {
	rep := &Report{Scope: scope, Start: at, End: at, Samples: 1}
	for _, t := range ths {
		r := Result{Threshold: t, Status: NoData, Observed: math.NaN(), SignalRate: math.NaN(), Why: Unjudged{Kind: NotStarted}}
		for _, p := range e.Problems {
			if p.Threshold == t {
				r.Why = Unjudged{Kind: MissingSignal, Missing: p.Missing}
			}
		}
		rep.Results = append(rep.Results, r)
	}
	return rep
}

// Preflight checks that one sample taken before the run carries every
// signal the thresholds need in scope, so a gate fails at once with an
// *EnvError instead of after a long load test.
func Preflight(s *record.Sample, scope Scope, ths []*Threshold) error {
	var probs []Problem
	for _, t := range ths {
		m := t.Metric
		one := []record.Sample{*s}
		if m.Kind != KindAvg {
			// points needs two samples; the same one twice checks presence.
			one = append(one, *s)
			one[1].Time = s.Time.Add(time.Second)
		}
		// Two samples of positive length: only a missing signal leaves
		// no point.
		if pts, why := points(one, scope, m); len(pts) == 0 && why.Missing != nil {
			probs = append(probs, Problem{Threshold: t, Missing: why.Missing})
		}
	}
	if len(probs) > 0 {
		return &EnvError{Problems: probs}
	}
	return nil
}
