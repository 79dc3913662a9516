package exposition

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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
	// (BenchmarkAnalyzeWindow, docs/benchmarks.md), while the sampler
	// waits.
	AnalyzeEvery time.Duration
	// Window is how much recent history the correlator sees: between
	// Window/2 and Window (default 1 h).
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
// SetHeader may be called from the sampling goroutine while /metrics is
// scraped.
type Exporter struct {
	o   Options
	reg *prometheus.Registry

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

	// The correlator: two overlapping series, the older one analysed.
	series    [2]*correlate.Series
	seriesT0  [2]time.Time
	lastRun   time.Time
	episodes  uint64
	counted   time.Time // start of the newest episode counted
	active    bool
	lastStart time.Time
	culprits  []correlate.Culprit
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
	e.reg = prometheus.NewRegistry()
	e.reg.MustRegister(collector{e})
	return e
}

// Registry is the registry /metrics renders, for a caller that adds its
// own collectors (the service's segment counters).
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves /metrics in the Prometheus text (or OpenMetrics) format.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// SetHeader replaces the header (a new segment or a restart): the job
// inventory and the page size come from it. Counters go on.
func (e *Exporter) SetHeader(hdr record.Header) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hdr = hdr
}

// Observe takes one sample, in recording order.
func (e *Exporter) Observe(s *record.Sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.samples++
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
	e.analyze(s)
	cp := *s
	e.prev = &cp
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

// analyze feeds the sample to the correlator's series and re-runs it
// every AnalyzeEvery of sample time.
func (e *Exporter) analyze(s *record.Sample) {
	if e.o.AnalyzeEvery < 0 {
		return
	}
	for i := range e.series {
		// The second series starts half a window after the first, so the
		// one analysed always holds between Window/2 and Window.
		if e.series[i] == nil && (i == 0 || s.Time.Sub(e.seriesT0[0]) >= e.o.Window/2) {
			e.series[i] = correlate.NewSeries(e.hdr)
			e.seriesT0[i] = s.Time
		}
		if e.series[i] != nil {
			e.series[i].Add(s)
		}
	}
	if e.series[1] != nil && s.Time.Sub(e.seriesT0[0]) >= e.o.Window {
		e.series[0], e.seriesT0[0] = e.series[1], e.seriesT0[1]
		e.series[1] = nil
	}
	if !e.lastRun.IsZero() && s.Time.Sub(e.lastRun) < e.o.AnalyzeEvery {
		return
	}
	e.lastRun = s.Time
	res := e.series[0].Analyze(e.o.Analyze)
	e.takeResult(&res)
}

// takeResult counts the episodes not counted before and keeps the
// culprits.
func (e *Exporter) takeResult(res *correlate.Result) {
	e.active = false
	for _, ep := range res.Episodes {
		if ep.Start.After(e.counted) {
			e.episodes++
			e.counted = ep.Start
		}
		if ep.Start.After(e.lastStart) {
			e.lastStart = ep.Start
		}
		// An episode is active when it reaches the newest interval.
		if !ep.End.Before(res.End) {
			e.active = true
		}
	}
	e.culprits = slices.Clone(res.Culprits)
	if len(e.culprits) > e.o.MaxCulprits {
		e.culprits = e.culprits[:e.o.MaxCulprits]
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
