package exposition

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/timers"
)

// Options tune an Exporter. Zero values take the defaults.
type Options struct {
	// MaxUnits caps the unit label's values (default 50); later units are
	// summed under unit="other".
	MaxUnits int
	// MaxCulprits caps the culprits exposed (default 5, best ranked first).
	MaxCulprits int
	// AnalyzeEvery is how often the correlator re-runs over the recent
	// samples (default 1 min of sample time); negative disables it. One
	// run over a full hour of 1 s samples costs ~0.2 s of CPU
	// (BenchmarkAnalyzeWindow), ~1.5 s on a busy build host
	// (bench/replayanalyze, docs/benchmarks.md); it runs on a goroutine
	// of its own, never on the sampling path, a run due while the
	// previous one still runs is skipped, and runs are spaced at least
	// CostFactor times the last one's cost apart.
	AnalyzeEvery time.Duration
	// Window is how much recent history the correlator sees: between
	// Window and Window+Window/8 (default 1 h). The analysis round trims
	// the series a Window/8 at a time (correlate.Series.Slide), so that
	// memory is bounded by one window and what came since the last round.
	Window time.Duration
	// Analyze are the correlator's options.
	Analyze correlate.Options
	// Now is the clock of the job projections (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxUnits <= 0 {
		o.MaxUnits = 50
	}
	if o.MaxCulprits <= 0 {
		o.MaxCulprits = 5
	}
	if o.AnalyzeEvery == 0 {
		o.AnalyzeEvery = time.Minute
	}
	if o.Window <= 0 {
		o.Window = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Analyze.Project == nil {
		o.Analyze.Project = timers.Project // as analyze does: firings are evidence
	}
	return o
}

// OtherUnit and NoUnit are the unit label values of the units past the
// cap and of processes in no unit.
const (
	OtherUnit = "other"
	NoUnit    = "none"
)

// Exporter holds the state the metrics are rendered from. Observe and
// SetHeader are called from the sampling goroutine; a scrape of /metrics
// reads the view Observe last published (an atomic pointer) and the
// analysis last finished, and never takes a lock the sampler waits on.
type Exporter struct {
	o   Options
	reg *prometheus.Registry

	// mu serialises Observe and SetHeader (the sampler's goroutine, and
	// a segment switch within it); scrapes never take it.
	mu       sync.Mutex
	hdr      record.Header
	prev     *record.Sample
	samples  uint64
	signals  [2][]float64 // per scope (host, cgroup), per signal.Catalogue entry: a counter's Σ change since start, a gauge's level, in base units
	known    [2][]bool    // a counter had a known change, a gauge a value, at least once
	units    map[string]*unitIO
	overflow uint64 // units summed under "other"
	lastCum  map[int]procSeen
	onsets   map[onsetKey]*onsetCount
	late     uint64 // samples taken more than half an interval after they were due (Sample.Gap)
	missed   uint64 // samples due and not taken

	cur atomic.Pointer[view] // what a scrape renders, replaced after each sample
	an  analyzer
	fir atomic.Pointer[firings]
}

// view is what one scrape renders: a copy of the sampler's state made
// after a sample, and the last analysis's findings. A view is never
// changed once published.
type view struct {
	o        Options
	hdr      record.Header
	samples  uint64
	signals  [2][]float64
	known    [2][]bool
	units    map[string]unitIO
	overflow uint64
	onsets   map[onsetKey]onsetCount
	late     uint64
	missed   uint64
	found
	fir *atomic.Pointer[firings] // the Exporter's, shared by every view
}

// found is what the last analysis found; analyzed is false until one
// ran.
type found struct {
	analyzed  bool
	episodes  uint64
	active    bool
	lastStart time.Time
	culprits  []correlate.Culprit
	// forecast is each job's recent firings judged against the
	// episodes (forecast.go), computed with the round.
	forecast []JobForecast
}

type unitIO struct{ read, written float64 }

type procSeen struct {
	start      uint64
	unit       string
	read, writ uint64
}

type onsetKey struct{ scope, resource, kind string }

type onsetCount struct {
	n    uint64
	last time.Time
}

// New returns an Exporter for a recording with header hdr.
func New(hdr record.Header, o Options) *Exporter {
	e := &Exporter{
		o: o.withDefaults(), hdr: hdr,
		units: map[string]*unitIO{}, lastCum: map[int]procSeen{},
		onsets: map[onsetKey]*onsetCount{},
	}
	for i := range e.signals {
		e.signals[i] = make([]float64, len(signal.Catalogue))
		e.known[i] = make([]bool, len(signal.Catalogue))
	}
	e.an.o = e.o
	e.publish()
	e.reg = prometheus.NewRegistry()
	e.reg.MustRegister(collector{e}, gapCollector{e})
	return e
}

// publish makes the sampler's state what scrapes see. Call it with mu
// held (or before the Exporter is shared).
func (e *Exporter) publish() {
	v := &view{o: e.o, hdr: e.hdr, samples: e.samples, overflow: e.overflow, late: e.late, missed: e.missed,
		units: make(map[string]unitIO, len(e.units)), onsets: make(map[onsetKey]onsetCount, len(e.onsets))}
	for i := range e.signals {
		v.signals[i] = slices.Clone(e.signals[i])
		v.known[i] = slices.Clone(e.known[i])
	}
	for u, c := range e.units {
		v.units[u] = *c
	}
	for k, c := range e.onsets {
		v.onsets[k] = *c
	}
	e.cur.Store(v)
}

// view is what a scrape renders now: the sampler's last published state
// with the last analysis's findings.
func (e *Exporter) view() *view {
	v := *e.cur.Load()
	if f := e.an.found.Load(); f != nil {
		v.found = *f
	}
	v.fir = &e.fir
	return &v
}

// firings are the jobs' last and next planned firings around one time,
// kept for the scrapes that follow while they still hold: projecting
// every job's schedule is most of what a scrape costs (BenchmarkScrape).
type firings struct {
	jobs        []record.Job // the header's jobs they were projected from
	from, until time.Time    // they hold for a scrape at from ≤ now < until
	at          map[string][2]time.Time
}

// maxFiringsAge bounds how long projected firings are reused: the last
// firing is looked for within a lookback window that moves with time.
const maxFiringsAge = time.Hour

// firingsAt returns each job's last firing at or before now and its next
// after now (jobFirings), projected again only when a job's next firing
// has come, the header's jobs changed, or maxFiringsAge passed. The last
// firing before now stays the same until the next one comes: reusing it
// changes no value a scrape shows.
func (v *view) firingsAt(now time.Time, loc *time.Location) map[string][2]time.Time {
	jobs := v.hdr.Jobs
	if f := v.fir.Load(); f != nil && len(f.jobs) == len(jobs) && len(jobs) > 0 && &f.jobs[0] == &jobs[0] &&
		!now.Before(f.from) && now.Before(f.until) {
		return f.at
	}
	f := &firings{jobs: jobs, from: now, until: now.Add(maxFiringsAge), at: make(map[string][2]time.Time, len(jobs))}
	for _, j := range jobs {
		if _, ok := f.at[j.Name]; ok {
			continue
		}
		l, n := jobFirings(j.Timers(), now, loc)
		f.at[j.Name] = [2]time.Time{l, n}
		if !n.IsZero() && n.Before(f.until) {
			f.until = n
		}
	}
	v.fir.Store(f)
	return f.at
}

// Registry is the registry /metrics renders, for a caller that adds its
// own collectors (the service's segment counters).
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves /metrics in the Prometheus text (or OpenMetrics) format.
func (e *Exporter) Handler() http.Handler {
	// One handler for every listener: OpenMetrics on request and the
	// process_*/go_* collectors (handler.go).
	return Handler(e)
}

// SetHeader replaces the header (a new segment or a restart): the job
// inventory and the page size come from it. Counters go on.
func (e *Exporter) SetHeader(hdr record.Header) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hdr = hdr
	e.publish()
}

// Observe takes one sample, in recording order, and publishes what
// scrapes see. It never waits for a scrape nor for the analysis: a due
// analysis starts on a goroutine of its own (see Options.AnalyzeEvery).
func (e *Exporter) Observe(s *record.Sample) {
	e.mu.Lock()
	hdr := e.observe(s)
	e.mu.Unlock()
	e.an.observe(s, hdr)
}

func (e *Exporter) observe(s *record.Sample) record.Header {
	e.samples++
	if g := s.Gap; g != nil {
		e.missed += uint64(g.Missed)
		if g.Late > 0 {
			e.late++
		}
	}
	e.observeSignals(s)
	e.observeIO(s)
	for _, on := range s.Onsets {
		k := onsetKey{onsetScope(on.Scope), on.Resource, on.Kind}
		c := e.onsets[k]
		if c == nil {
			c = &onsetCount{}
			e.onsets[k] = c
		}
		c.n++
		if on.Time.After(c.last) {
			c.last = on.Time
		}
	}
	cp := *s
	e.prev = &cp
	e.publish()
	return e.hdr
}

// observeIO adds the interval's per-process I/O to the units: the deltas
// of the processes listed, and for each exit what its life total holds
// beyond what was seen of it before.
func (e *Exporter) observeIO(s *record.Sample) {
	for _, p := range s.Procs {
		e.addUnit(unitOf(p.Unit), float64(p.DeltaReadBytes), float64(p.DeltaWriteBytes))
		e.lastCum[p.PID] = procSeen{start: p.StartTicks, unit: p.Unit, read: p.ReadBytes, writ: p.WriteBytes}
	}
	for _, ev := range s.Events {
		if ev.Kind != process.Exit {
			continue
		}
		seen, ok := e.lastCum[ev.PID]
		if ok && ev.StartTicks != 0 && seen.start != ev.StartTicks {
			ok = false // the PID was reused
		}
		r, w := ev.ReadBytes, ev.WriteBytes
		if ok {
			r, w = sub(r, seen.read), sub(w, seen.writ)
		}
		e.addUnit(unitOf(ev.Unit), float64(r), float64(w))
		delete(e.lastCum, ev.PID)
	}
	// Processes that vanished without an exit event (the connector is
	// off or dropped it) are forgotten after a while so the map stays
	// bounded by the processes alive.
	if len(e.lastCum) > 4*max(len(s.Procs), 64) {
		live := map[int]bool{}
		for _, p := range s.Procs {
			live[p.PID] = true
		}
		for pid := range e.lastCum {
			if !live[pid] {
				delete(e.lastCum, pid)
			}
		}
	}
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func unitOf(u string) string {
	if u == "" {
		return NoUnit
	}
	return u
}

// addUnit adds I/O to unit u, or to "other" once MaxUnits have a label.
func (e *Exporter) addUnit(u string, read, written float64) {
	if read == 0 && written == 0 {
		if _, ok := e.units[u]; !ok {
			return // no series for a unit that never did I/O
		}
	}
	c := e.units[u]
	if c == nil {
		named := len(e.units)
		if _, ok := e.units[OtherUnit]; ok {
			named--
		}
		if named >= e.o.MaxUnits {
			e.overflow++
			u = OtherUnit
			c = e.units[u]
		}
		if c == nil {
			c = &unitIO{}
			e.units[u] = c
		}
	}
	c.read += read
	c.written += written
}

// observeSignals updates every catalogue signal of both scopes: a
// counter by its change since the previous sample (so it only grows, from
// memdiag's start, whatever devices come and go), a gauge to its level.
func (e *Exporter) observeSignals(s *record.Sample) {
	cur := [2]*signal.Reading{s.Reading(&e.hdr), nil}
	if s.CgroupPSI != nil || s.CgroupVMStat != nil {
		cur[1] = s.CgroupReading(&e.hdr)
	}
	var prev [2]*signal.Reading
	if e.prev != nil {
		prev[0] = e.prev.Reading(&e.hdr)
		if e.prev.CgroupPSI != nil || e.prev.CgroupVMStat != nil {
			prev[1] = e.prev.CgroupReading(&e.hdr)
		}
	}
	for sc := range cur {
		if cur[sc] == nil {
			continue
		}
		for i, sig := range signal.Catalogue {
			if sig.Kind == signal.Gauge {
				if v, ok := sig.BaseValue(cur[sc]); ok {
					e.signals[sc][i], e.known[sc][i] = v, true
				}
				continue
			}
			if prev[sc] == nil {
				continue
			}
			if d, ok := sig.Between(prev[sc], cur[sc]); ok {
				if sig.Unit == signal.Pages {
					d *= float64(pageSize(&e.hdr))
				}
				e.signals[sc][i] += d
				e.known[sc][i] = true
			}
		}
	}
}

func pageSize(h *record.Header) int {
	if h.PageSize > 0 {
		return h.PageSize
	}
	return 4096
}

// analyzer runs the correlator over the recent samples every
// AnalyzeEvery of sample time, off the sampling path: Observe queues each
// sample and adds the queue to the series only when no analysis holds
// it; a due analysis runs on a goroutine of its own, and one due while
// the previous still runs is skipped (the next sample tries again).
type analyzer struct {
	o Options

	// run is held while the series is worked on: by Observe for the
	// adds (microseconds), by a round for its whole analysis. Observe
	// only ever tries it.
	run sync.Mutex
	// series is the correlator's sliding window of the samples.
	series  *correlate.Series
	newest  time.Time     // the last sample added
	hdr     record.Header // the header of the last sample added
	lastRun time.Time     // sample time of the last analysis started
	// lastCost is the wall time the last round took: the next waits at
	// least CostFactor times as long (a bounded share of one CPU).
	lastCost time.Duration
	counted  time.Time // start of the newest episode counted
	// countedEnd is where that episode ended when last analysed: an
	// episode the trim cut is it if it starts by then.
	countedEnd time.Time
	episodes   uint64
	rounds     sync.WaitGroup

	qmu   sync.Mutex
	queue []queued // samples not yet added to the series

	found atomic.Pointer[found]
}

type queued struct {
	s   *record.Sample
	hdr record.Header
}

// maxQueued bounds the samples waiting for a slow analysis (1 h at
// 1 s); past it the oldest are dropped from the analysis, never from the
// recording or the counters.
const maxQueued = 3600

func (a *analyzer) observe(s *record.Sample, hdr record.Header) {
	if a.o.AnalyzeEvery < 0 {
		return
	}
	cp := *s
	a.qmu.Lock()
	a.queue = append(a.queue, queued{&cp, hdr})
	if n := len(a.queue) - maxQueued; n > 0 {
		a.queue = slices.Delete(a.queue, 0, n)
	}
	a.qmu.Unlock()
	if !a.run.TryLock() {
		return // a round runs: it adds the queue when done
	}
	a.drain()
	if !a.lastRun.IsZero() && a.newest.Sub(a.lastRun) < max(a.o.AnalyzeEvery, CostFactor*a.lastCost) {
		a.run.Unlock()
		return
	}
	a.lastRun = a.newest
	a.rounds.Add(1)
	go func() {
		defer a.rounds.Done()
		defer a.run.Unlock()
		t0 := time.Now()
		a.round()
		a.lastCost = time.Since(t0)
		a.drain()
	}()
}

// CostFactor bounds the in-process analysis to 1/CostFactor of one CPU:
// a round that took d is followed by the next no sooner than
// CostFactor·d (of sample time) after it started, whatever AnalyzeEvery
// says. A 1 h window on a busy build host took ~1.5 s a round
// (docs/benchmarks.md): rounds every 30 s would still be allowed there.
const CostFactor = 20

// drain adds the queued samples to the series; run is held.
func (a *analyzer) drain() {
	a.qmu.Lock()
	q := a.queue
	a.queue = nil
	a.qmu.Unlock()
	for _, x := range q {
		a.add(x.s, x.hdr)
	}
}

// add feeds a sample to the correlator's series; run is held.
func (a *analyzer) add(s *record.Sample, hdr record.Header) {
	if a.series == nil {
		a.series = correlate.NewWindowSeries(hdr)
	}
	a.series.Header = hdr // the newest: its job inventory
	a.series.Add(s)
	a.newest = s.Time
	a.hdr = hdr
}

// round slides the series to the last Window (correlate.Series.Slide: a
// trim, a pass over the window, once every Window/8 of samples, here off
// the sampling path), analyses it and publishes what it found: the
// episodes not counted before and the culprits; run is held.
func (a *analyzer) round() {
	a.series.Slide(a.o.Window)
	res := a.series.Analyze(a.o.Analyze)
	f := &found{analyzed: true}
	if prev := a.found.Load(); prev != nil {
		f.lastStart = prev.lastStart
	}
	for _, ep := range res.Episodes {
		// An episode that starts where the window does may be the one
		// counted last with its start trimmed off: the same one if it
		// starts before that one (as last seen) ended.
		cont := !ep.Start.After(res.Start) && !a.countedEnd.IsZero() && !ep.Start.After(a.countedEnd)
		if ep.Start.After(a.counted) && !cont {
			a.episodes++
			a.counted = ep.Start
		}
		if ep.Start.Equal(a.counted) || cont {
			a.countedEnd = ep.End
		}
		if ep.Start.After(f.lastStart) && !cont {
			f.lastStart = ep.Start
		}
		// An episode is active when it reaches the newest interval.
		if !ep.End.Before(res.End) {
			f.active = true
		}
	}
	f.episodes = a.episodes
	f.culprits = slices.Clone(res.Culprits)
	if len(f.culprits) > a.o.MaxCulprits {
		f.culprits = f.culprits[:a.o.MaxCulprits]
	}
	f.forecast = forecast(&res, &a.hdr, a.o.Analyze)
	a.found.Store(f)
}

// wait returns once no analysis runs.
func (a *analyzer) wait() { a.rounds.Wait() }

// settle waits for the running analysis, then analyses what was queued
// meanwhile (a sample that came while a round ran is only queued: the
// next sample's round reads it). For tests and the end of a run, where
// no next sample comes.
func (a *analyzer) settle() {
	a.wait()
	if a.o.AnalyzeEvery < 0 {
		return
	}
	a.run.Lock()
	defer a.run.Unlock()
	a.drain()
	if a.series != nil {
		a.round()
	}
}

// jobFirings returns a job's last planned firing at or before now and its
// next one after now; zero when unknown.
func jobFirings(j timers.Job, now time.Time, loc *time.Location) (last, next time.Time) {
	if fs := timers.Next(j, now, 1, loc); len(fs) > 0 {
		next = fs[0].Planned
	}
	look := 25 * time.Hour
	if j.PeriodSeconds != nil {
		look = max(look, time.Duration(2**j.PeriodSeconds*float64(time.Second)))
	}
	if fs := timers.Project([]timers.Job{j}, now.Add(-look), now, loc); len(fs) > 0 {
		last = fs[len(fs)-1].Planned
	}
	return last, next
}

// onsetScope is the scope label of a stall onset: "host", or "cgroup" for
// the --cgroup directory (record.StallOnset.Scope holds its path), the
// same two values the signal metrics' scope label takes.
func onsetScope(recorded string) string {
	if recorded == "" || recorded == "host" {
		return "host"
	}
	return "cgroup"
}

// Metric names of the sampler's own timeliness.
const (
	SamplesLate   = "memdiag_samples_late_total"
	SamplesMissed = "memdiag_samples_missed_total"
)

// gapCollector renders the sampler's late and missed samples, the gaps
// the recording holds (record.Gap).
type gapCollector struct{ e *Exporter }

var (
	lateDesc   = desc(SamplesLate, "Samples memdiag took more than half an interval after they were due (each is recorded as a gap in the recording).")
	missedDesc = desc(SamplesMissed, "Samples that were due and never taken: the recorder was stopped, starved of CPU or blocked for more than an interval (recorded as gaps).")
)

func (c gapCollector) Describe(ch chan<- *prometheus.Desc) { ch <- lateDesc; ch <- missedDesc }

func (c gapCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.e.cur.Load()
	ch <- prometheus.MustNewConstMetric(lateDesc, prometheus.CounterValue, float64(v.late))
	ch <- prometheus.MustNewConstMetric(missedDesc, prometheus.CounterValue, float64(v.missed))
}
