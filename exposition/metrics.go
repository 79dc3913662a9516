package exposition

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/signal"
)

// Namespace prefixes every metric memdiag exposes.
const Namespace = "memdiag"

// Metric names that package promql reads back (analyze --prometheus).
const (
	UnitReadBytes     = "memdiag_unit_read_bytes_total"
	UnitWrittenBytes  = "memdiag_unit_written_bytes_total"
	UnitOverflow      = "memdiag_unit_overflow_total"
	StallOnsets       = "memdiag_stall_onsets_total"
	StallOnsetLast    = "memdiag_stall_onset_last_timestamp_seconds"
	JobInfo           = "memdiag_job_info"
	JobPeriod         = "memdiag_job_period_seconds"
	JobNextFiring     = "memdiag_job_next_firing_timestamp_seconds"
	JobLastFiring     = "memdiag_job_last_firing_timestamp_seconds"
	JobStallRatio     = "memdiag_job_stall_ratio"
	JobRecentFirings  = "memdiag_job_recent_firings"
	JobStallStreak    = "memdiag_job_stall_streak"
	Episodes          = "memdiag_episodes_total"
	EpisodeActive     = "memdiag_episode_active"
	EpisodeLastStart  = "memdiag_episode_last_start_timestamp_seconds"
	CulpritConfidence = "memdiag_culprit_confidence"
	CulpritEpisodes   = "memdiag_culprit_episodes"
	FileLRUBytes      = "memdiag_file_lru_bytes"
	Samples           = "memdiag_samples_total"
	HostInfo          = "memdiag_host_info"
	// JobLabel names a periodic job in the memdiag_job_* metrics.
	JobLabel = "periodic_job"
	// ScopeLabel says whose signal a catalogue metric is: "host" or
	// "cgroup" (the group watch --cgroup names).
	ScopeLabel = "scope"
)

// SignalMetric is the metric name of a catalogue signal, derived from its
// Name, its base unit and its kind, as Prometheus's naming practice asks
// (base units, _total for counters): memdiag_psi_memory_some_seconds_total,
// memdiag_direct_reclaim_bytes_total (pages × page size),
// memdiag_oom_kills_total, memdiag_file_lru_bytes.
func SignalMetric(s *signal.Signal) string {
	n := Namespace + "_" + s.Name
	if u := s.BaseUnit(); u != "" {
		n += "_" + u
	}
	if s.Kind == signal.Counter {
		n += "_total"
	}
	return n
}

// signalHelp is the metric's help: the catalogue's Doc, how it is
// computed, the file and the kernel document.
func signalHelp(s *signal.Signal) string {
	h := s.Title + ": " + s.Doc + "."
	if s.Kind == signal.Counter {
		h = "Cumulative " + h + " Summed from memdiag's start over the change between samples (" + s.Computed + ")."
	}
	if s.Unit == signal.Pages {
		h += " Pages × page size."
	}
	src := s.Source
	if s.Kernel != "" {
		src += ", " + s.Kernel
	}
	return h + " Source: " + src + "; " + s.URL + "."
}

// collector renders an Exporter's state on each scrape, as node_exporter's
// collectors do (const metrics built in Collect).
type collector struct{ e *Exporter }

func (c collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

// descs holds each metric's Desc once built: a Desc is constant (name,
// help, labels), and building one per metric per scrape (label checks,
// hashing, the catalogue's help text) was 6 % of rendering /metrics
// (BenchmarkScrape/render).
var descs sync.Map // metric name → *prometheus.Desc

// desc returns the Desc of metric name, built with help and labels the
// first time.
func desc(name, help string, labels ...string) *prometheus.Desc {
	if d, ok := descs.Load(name); ok {
		return d.(*prometheus.Desc)
	}
	d, _ := descs.LoadOrStore(name, prometheus.NewDesc(name, help, labels, nil))
	return d.(*prometheus.Desc)
}

// signalDesc is desc for a catalogue signal, whose help is composed only
// the first time.
func signalDesc(sig *signal.Signal) *prometheus.Desc {
	name := SignalMetric(sig)
	if d, ok := descs.Load(name); ok {
		return d.(*prometheus.Desc)
	}
	return desc(name, signalHelp(sig), ScopeLabel)
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	e := c.e.view() // never a lock the sampler waits on
	counter := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, lv...)
	}
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	counter(desc(Samples, "Samples memdiag took since it started."), float64(e.samples))
	gauge(desc(HostInfo, "The recorded host: value 1; time_zone is the zone its cron and OnCalendar schedules run in, kernel the uname release.", "host", "kernel", "time_zone", "version"),
		1, e.hdr.Host, e.hdr.Kernel, e.hdr.TimeZone, e.hdr.MemdiagVersion)
	for i, sig := range signal.Catalogue {
		d := signalDesc(sig)
		for sc, scope := range []string{"host", "cgroup"} {
			if !e.known[sc][i] {
				continue
			}
			if sig.Kind == signal.Gauge {
				gauge(d, e.signals[sc][i], scope)
			} else {
				counter(d, e.signals[sc][i], scope)
			}
		}
	}

	rd := desc(UnitReadBytes, "Bytes the unit's processes caused to be read from storage (/proc/PID/io read_bytes): the top processes of each interval plus every exited process's life total (taskstats at exit). unit=\"other\" sums units past the cap, unit=\"none\" processes in no unit.", "unit")
	wr := desc(UnitWrittenBytes, "Bytes the unit's processes caused to be written to storage (/proc/PID/io write_bytes), counted as memdiag_unit_read_bytes_total.", "unit")
	names := make([]string, 0, len(e.units))
	for u := range e.units {
		names = append(names, u)
	}
	sort.Strings(names)
	for _, u := range names {
		counter(rd, e.units[u].read, u)
		counter(wr, e.units[u].written, u)
	}
	counter(desc(UnitOverflow, "Unit I/O observations summed under unit=\"other\" because the unit label cap was reached."), float64(e.overflow))

	on := desc(StallOnsets, "Stall onsets: times PSI stall time crossed memdiag's --stall-threshold within --stall-window (a PSI trigger or 50 ms polling).", "scope", "resource", "kind")
	onLast := desc(StallOnsetLast, "Unix time of the last stall onset.", "scope", "resource", "kind")
	keys := make([]onsetKey, 0, len(e.onsets))
	for k := range e.onsets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].scope+keys[i].resource+keys[i].kind < keys[j].scope+keys[j].resource+keys[j].kind
	})
	for _, k := range keys {
		counter(on, float64(e.onsets[k].n), k.scope, k.resource, k.kind)
		gauge(onLast, unixSeconds(e.onsets[k].last), k.scope, k.resource, k.kind)
	}

	collectJobs(e, ch, gauge)

	if e.o.AnalyzeEvery >= 0 && e.analyzed {
		counter(desc(Episodes, "Memory-pressure episodes the correlator found since memdiag started (memdiag analyze's episodes, counted once each)."), float64(e.episodes))
		active := 0.0
		if e.active {
			active = 1
		}
		gauge(desc(EpisodeActive, "1 while an episode reaches the newest analysed interval, else 0."), active)
		if !e.lastStart.IsZero() {
			gauge(desc(EpisodeLastStart, "Unix time the newest episode started."), unixSeconds(e.lastStart))
		}
		conf := desc(CulpritConfidence, "Confidence (0..1) of each culprit the correlator names over the recent window, best ranked first (correlate.Proof).", "culprit", "kind")
		eps := desc(CulpritEpisodes, "Episodes of the recent window each culprit explains.", "culprit", "kind")
		jl := jobLabels(e.hdr.Jobs)
		for _, cu := range e.culprits {
			name := cu.Name
			if l, ok := jl[name]; ok && (cu.Kind == correlate.KindCron || cu.Kind == correlate.KindTimer) {
				name = l // the job's periodic_job label
			}
			gauge(conf, cu.Confidence, name, string(cu.Kind))
			gauge(eps, float64(cu.EpisodesExplained), name, string(cu.Kind))
		}
		collectForecast(e, gauge)
	}
}

// collectForecast renders what each job's recent firings did (forecast.go),
// as the last analysis round found it.
func collectForecast(e *view, gauge func(*prometheus.Desc, float64, ...string)) {
	ratio := desc(JobStallRatio, "Share (0..1) of the job's recent firings (memdiag_job_recent_firings of them, at most 10 within the analysis window) that were followed by a memory-pressure episode of the analysed scope (the victim's cgroup, or the host) within the job's lag.", JobLabel)
	n := desc(JobRecentFirings, "Firings of the job the stall ratio is taken over: its last planned firings (at most 10) wholly within the analysis window.", JobLabel)
	streak := desc(JobStallStreak, "How many of the job's most recent firings in a row were followed by an episode (0: the last one was not).", JobLabel)
	for _, f := range e.forecast {
		if f.Firings == 0 {
			continue
		}
		gauge(ratio, f.Ratio(), f.Label)
		gauge(n, float64(f.Firings), f.Label)
		gauge(streak, float64(f.Streak), f.Label)
	}
}

// collectJobs renders the periodic-job inventory of the header.
func collectJobs(e *view, ch chan<- prometheus.Metric, gauge func(*prometheus.Desc, float64, ...string)) {
	if len(e.hdr.Jobs) == 0 {
		return
	}
	info := desc(JobInfo, "A periodic job memdiag knows on this host (systemd timer, cron, anacron): value 1; schedule as written; location the file (and line) that defines it. The label is periodic_job, not job: Prometheus's target label job would rename it. A cron job's periodic_job is its crontab and command, which editing other lines leaves alone. active is false for a job that will not run (a disabled timer: memdiag timers lists it only with --all).", JobLabel, "source", "unit", "schedule", "active", LocationLabel)
	period := desc(JobPeriod, "Typical time between the job's firings, seconds (absent when irregular).", JobLabel)
	next := desc(JobNextFiring, "Unix time of the job's next planned firing, projected from its schedule.", JobLabel)
	last := desc(JobLastFiring, "Unix time of the job's last planned firing at or before the scrape; a change marks a firing (Grafana annotation: changes(...[1m]) > 0).", JobLabel)
	now := e.o.Now()
	loc := correlate.Location(&e.hdr, nil)
	labels := jobLabels(e.hdr.Jobs)
	fs := e.firingsAt(now, loc)
	seen := map[string]bool{}
	for _, j := range e.hdr.Jobs {
		if seen[j.Name] {
			continue
		}
		seen[j.Name] = true
		name := labels[j.Name]
		gauge(info, 1, name, string(j.Source), j.Unit, strings.Join(j.Schedule, "; "), strconv.FormatBool(j.Active), jobLocation(j))
		if j.PeriodSeconds != nil {
			gauge(period, *j.PeriodSeconds, name)
		}
		l, n := fs[j.Name][0], fs[j.Name][1]
		if !n.IsZero() {
			gauge(next, unixSeconds(n), name)
		}
		if !l.IsZero() {
			gauge(last, unixSeconds(l), name)
		}
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
