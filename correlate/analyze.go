package correlate

import (
	"cmp"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// Analyze finds spikes, episodes, their period and the culprits in rec.
// It is pure: the same recording and options give the same result.
// rec.Warnings are not copied into the result.
func Analyze(rec *record.Recording, opts Options) Result {
	return SeriesOf(rec).Analyze(opts)
}

// SeriesOf is the series of a recording read whole: every sample added.
func SeriesOf(rec *record.Recording) *Series {
	sr := NewSeries(rec.Header)
	for i := range rec.Samples {
		sr.Add(&rec.Samples[i])
	}
	return sr
}

// Analyze is [Analyze] of the samples added so far. Its stages run in
// this order (docs/analyze.md, "How it decides"): detectSignals (the
// kernel signals each interval raises), detectLatency (latency spikes
// and failures), buildEpisodes and splitSpikes (episodes), ioBursts and
// sustained, findPeriods, rankCulprits (the culprit model),
// memoryFindings and attachOnsets.
func (sr *Series) Analyze(opts Options) Result {
	o := opts.withDefaults()
	h := &sr.Header
	res := Result{
		Host: h.Host, Stat: o.Stat, Spike: o.Spike, Thresholds: *o.Thresholds,
		Baselines: map[Signal]float64{}, Location: Location(h, o.Location),
		Cgroup: h.Cgroup, Victim: h.Victim, CgroupLimit: h.CgroupLimit, CgroupLimitBytes: h.CgroupLimitBytes,
	}
	for _, c := range h.Collectors {
		if c.Name == "victim" {
			res.VictimNote = c.Reason
		}
	}
	ivs := sr.intervals()
	sr.parts = map[time.Time][]procPart{}
	if len(ivs) == 0 {
		res.Warnings = append(res.Warnings, Warning{Kind: WarnTooFewSamples})
		return res
	}
	res.Start, res.End, res.Intervals = ivs[0].Start, ivs[len(ivs)-1].End, len(ivs)
	res.Catalogue = episodeRates(ivs)
	res.Interval = sampleInterval(h, ivs)
	o.PSIScope = psiScope(o.PSIScope, ivs)
	res.PSIScope = o.PSIScope
	fits := sr.fitGrowth(o.GrowthMinWindow)
	raised, sums, lat, spikes, fails := sr.detect(ivs, &res, o)
	res.Totals = totals(ivs, sums, o, sr.Header.Probe != "")
	o.Require = requireSignals(&res, o)
	res.Require = o.Require
	res.Warnings = append(res.Warnings, sr.suspectPSI()...)
	eps, lone := buildEpisodes(sr, ivs, raised, spikes, sums, lat, fails, res.Interval, o, res.Baselines)
	res.Episodes, res.LoneSpikes = splitSpikes(eps, lone, o)
	if len(o.Require) > 0 {
		res.IOBursts = ioBursts(sr, ivs, raised, lat, res.Interval, o, res.Baselines, res.Episodes)
	}
	res.BurstLead = WeighBursts(&res)
	res.Sustained = sustained(sr, ivs, o)
	findPeriods(&res)
	rankCulprits(&res, sr, o)
	memoryFindings(sr, &res, <-fits)
	attachOnsets(sr, &res)
	return res
}

// detect runs the signal stage (detectSignals) and the latency stage
// (detectLatency) at once: both read the intervals, and they write apart
// (res.Baselines; the latency fields and warnings of res), so the
// results are those of running them in turn. The signals' runs on a
// goroutine, on the core the rest of Analyze leaves idle until the
// period search (0.1 s of a day's analyze, docs/benchmarks.md).
func (sr *Series) detect(ivs []ival, res *Result, o Options) (raised [][]Signal, sums []*latency.Summary, lat []float64, spikes []bool, fails []int) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		raised = detectSignals(ivs, o, res.Baselines)
	}()
	sums, lat, spikes, fails = sr.detectLatency(res, o)
	<-done
	return raised, sums, lat, spikes, fails
}

// sampleInterval is the header's sampling interval, else the median
// length of ivs.
func sampleInterval(h *record.Header, ivs []ival) time.Duration {
	if h.Interval > 0 {
		return h.Interval
	}
	dts := make([]float64, len(ivs))
	for i, iv := range ivs {
		dts[i] = float64(iv.Dt)
	}
	return time.Duration(median(dts))
}

// psiScope resolves PSIAuto: the cgroup's PSI when some interval has
// it, else the host's.
func psiScope(scope PSIScope, ivs []ival) PSIScope {
	if scope != PSIAuto {
		return scope
	}
	for _, iv := range ivs {
		if !math.IsNaN(iv.CgMemSome) {
			return PSICgroup
		}
	}
	return PSIHost
}

// detectLatency is the latency stage: each interval's request summary
// (summaries), the statistic's series, its spikes (detectSpikes, and
// bursts of failed requests unless the load was failing throughout:
// res.Failing) and failures. It sets res.HasLatency, Failing,
// LatencyBaseline and Spikes, or warns that there is no latency.
func (sr *Series) detectLatency(res *Result, o Options) (sums []*latency.Summary, lat []float64, spikes []bool, fails []int) {
	ivs := sr.intervals()
	sums = summaries(sr, ivs, o)
	lat = latencySeries(sums, o.Stat)
	for _, s := range sums {
		if s != nil {
			res.HasLatency = true
			break
		}
	}
	fails = failures(sums)
	if res.HasLatency {
		spikes = detectSpikes(lat, o)
		// A burst of failed requests is a spike too: a service that
		// refuses or times out is not fast. A load failing most of the
		// time has no burst to rise above: it is a finding of its own.
		res.Failing = failing(ivs, sums)
		if res.Failing == nil {
			for i, f := range failureSpikes(sums) {
				spikes[i] = spikes[i] || f
			}
		}
		if k := known(lat); len(k) > 0 {
			res.LatencyBaseline = time.Duration(median(k))
		}
	} else {
		spikes = make([]bool, len(ivs))
		switch {
		case sr.Header.LatencyFile != "":
			// A file was given to watch: say it yielded nothing, never
			// that none was given.
			res.Warnings = append(res.Warnings, Warning{Kind: WarnLatencyFileEmpty, LatencyFile: sr.Header.LatencyFile})
		case sr.Header.Probe != "":
			res.Warnings = append(res.Warnings, Warning{Kind: WarnProbeEmpty, Probe: sr.Header.Probe})
		default:
			res.Warnings = append(res.Warnings, Warning{Kind: WarnNoLatency})
		}
	}
	for _, s := range spikes {
		if s {
			res.Spikes++
		}
	}
	return sums, lat, spikes, fails
}

// requireSignals is Options.Require resolved: nil means psi_some and
// psi_full when the recording has memory PSI of the scope (a warning
// says when it has none).
func requireSignals(res *Result, o Options) []Signal {
	if o.Require != nil {
		return o.Require
	}
	if _, hasPSI := res.Baselines[PSISome]; hasPSI {
		// A memory-pressure episode needs memory pressure: disk and
		// page-cache activity that stalled nobody is an I/O burst.
		return []Signal{PSISome, PSIFull}
	}
	res.Warnings = append(res.Warnings, Warning{Kind: WarnNoPSI, Scope: o.PSIScope})
	return nil
}

// findPeriods sets res.Period, the schedule of the episodes' starts,
// and, with latency, res.SpikePeriod, that of the spikes' (spike
// episodes and lone spikes: spikes recur as spikes, whether a kernel
// signal rose with them or not).
func findPeriods(res *Result) {
	starts := make([]time.Time, len(res.Episodes))
	var spikeStarts []time.Time
	for i, e := range res.Episodes {
		starts[i] = e.Start
		if e.Spike {
			spikeStarts = append(spikeStarts, e.Start)
		}
	}
	minP := 4 * res.Interval
	res.Period = estimatePeriod(starts, res.Start, res.End, minP)
	if res.HasLatency {
		for _, sp := range res.LoneSpikes {
			spikeStarts = append(spikeStarts, sp.Start)
		}
		res.SpikePeriod = estimatePeriod(spikeStarts, res.Start, res.End, minP)
	}
}

// Location is the zone of schedules and the timeline: loc if not nil,
// else the header's TimeZone, else a fixed zone at its UTCOffset.
func Location(h *record.Header, loc *time.Location) *time.Location {
	if loc != nil {
		return loc
	}
	if h.TimeZone != "" {
		if l, err := time.LoadLocation(h.TimeZone); err == nil {
			return l
		}
	}
	if h.UTCOffset == 0 {
		return time.UTC
	}
	return time.FixedZone("", h.UTCOffset)
}

// signalValue is signal s over interval iv in s's unit, NaN if unknown.
func signalValue(s Signal, iv *ival, scope PSIScope) float64 {
	switch s {
	case PSISome:
		return scoped(scope, iv.MemSome, iv.CgMemSome)
	case PSIFull:
		return scoped(scope, iv.MemFull, iv.CgMemFull)
	case LRUDrop:
		if secs := iv.Dt.Seconds(); secs > 0 {
			return -iv.FileLRUDeltaBytes / secs
		}
	case Refault:
		if math.IsNaN(iv.RefaultAnonPerSec) {
			return iv.RefaultFilePerSec
		}
		return iv.RefaultFilePerSec + iv.RefaultAnonPerSec
	case DirectReclaim:
		return iv.DirectReclaimPerSec // signal.DirectReclaim
	case LimitReclaim:
		return iv.LimitReclaimPerSec // signal.LimitReclaim
	case DiskIO:
		return iv.DiskReadBytesPerSec + iv.DiskWriteBytesPerSec
	case IOTime:
		return iv.DiskIOTimePerSec
	case SwapOut:
		return iv.SwapOutBytesPerSec
	}
	return math.NaN()
}

// scoped is the PSI share of the scope: the host's, the group's, or
// (auto) the larger of the two that are known.
func scoped(scope PSIScope, host, cgroup float64) float64 {
	switch {
	case scope == PSIHost:
		return host
	case scope == PSICgroup:
		return cgroup
	case math.IsNaN(host):
		return cgroup
	case math.IsNaN(cgroup):
		return host
	}
	return math.Max(host, cgroup)
}

// detectSignals returns, per interval, the signals it raised, and stores
// each signal's median in baselines.
func detectSignals(ivs []ival, o Options, baselines map[Signal]float64) [][]Signal {
	raised := make([][]Signal, len(ivs))
	for _, s := range AllSignals {
		vals := make([]float64, len(ivs))
		for i := range ivs {
			vals[i] = signalValue(s, &ivs[i], o.PSIScope)
		}
		k := known(vals)
		if len(k) == 0 {
			continue
		}
		med, mad := medMAD(k)
		if s == LRUDrop && med < 0 {
			// A growing page cache is no baseline for a drop: a drop is
			// the file LRU actually shrinking.
			med = 0
		}
		psiSig := s == PSISome || s == PSIFull
		if psiSig {
			// PSI is absolute: its baseline is the quiet level (25th
			// percentile), not the median, so a burst longer than half
			// the recording is still a burst; pressure that never stops
			// is Result.Sustained.
			sorted := slices.Clone(k)
			slices.Sort(sorted)
			med, mad = sorted[len(sorted)/4], 0
		}
		baselines[s] = med
		thr := o.Thresholds.Get(s)
		if thr < 0 {
			continue
		}
		floor := math.Inf(-1)
		switch s {
		case PSISome:
			floor = o.Thresholds.PSISomeMin
		case PSIFull:
			floor = o.Thresholds.PSIFullMin
		}
		for i, v := range vals {
			if math.IsNaN(v) || v < floor || v-med < thr || v-med <= o.Thresholds.MADFactor*madScale*mad {
				continue
			}
			// With short intervals the page cache churns by tens of MiB/s
			// on a busy host: a drop must also be LRUDropMin in bytes.
			if s == LRUDrop && -ivs[i].FileLRUDeltaBytes < o.Thresholds.LRUDropMin {
				continue
			}
			raised[i] = append(raised[i], s)
		}
	}
	return raised
}

// summaries is the latency summary of each interval (nil: no request):
// from Options.Requests, else Options.IntervalStats, else Sample.Latency.
func summaries(sr *Series, ivs []ival, o Options) []*latency.Summary {
	switch {
	case o.Requests != nil:
		return requestSummaries(ivs, o.Requests, o.LatencyWithFailed)
	case len(o.IntervalStats) > 0:
		return statSummaries(ivs, o.IntervalStats)
	}
	out := make([]*latency.Summary, len(ivs))
	copy(out, sr.lat)
	return out
}

// intervalAt is the index of the interval that holds t — interval i
// holds what happened in (Start, End] — or -1 for none.
func intervalAt(ivs []ival, t time.Time) int {
	i := sort.Search(len(ivs), func(i int) bool { return !ivs[i].End.Before(t) })
	if i == len(ivs) || !t.After(ivs[i].Start) {
		return -1
	}
	return i
}

// requestSummaries summarizes the requests that started in each
// interval. A counting sort of request indexes by interval, in file
// order within each interval, instead of a copy of every request in
// per-interval buckets: for a day of 1,000,000 requests the buckets held
// ~80 MB beside Options.Requests and made this the peak of analyze's heap
// (docs/benchmarks.md); these are 8 MB.
func requestSummaries(ivs []ival, reqs *latency.Requests, withFailed bool) []*latency.Summary {
	out := make([]*latency.Summary, len(ivs))
	at := make([]int32, reqs.Len())
	first := make([]int32, len(ivs)+1)
	for k, q := range reqs.Each() {
		i := intervalAt(ivs, q.Start)
		at[k] = int32(i)
		if i >= 0 {
			first[i+1]++
		}
	}
	for i := range ivs {
		first[i+1] += first[i]
	}
	order := make([]int32, first[len(ivs)])
	next := append([]int32(nil), first[:len(ivs)]...)
	for k, i := range at {
		if i >= 0 {
			order[next[i]] = int32(k)
			next[i]++
		}
	}
	var b []latency.Request
	for i := range ivs {
		if first[i] == first[i+1] {
			continue
		}
		b = b[:0]
		for _, k := range order[first[i]:first[i+1]] {
			b = append(b, reqs.At(int(k)))
		}
		s := latency.SummarizeRequests(b, withFailed)
		out[i] = &s
	}
	return out
}

// statSummaries merges a load tool's per-interval rows into the
// intervals their end falls in. Rows of the "Aggregated" name cover
// every request; they are used when present, else every row.
func statSummaries(ivs []ival, rows []latency.IntervalStat) []*latency.Summary {
	out := make([]*latency.Summary, len(ivs))
	agg := slices.ContainsFunc(rows, func(r latency.IntervalStat) bool { return r.Name == "Aggregated" })
	meanSum := make([]float64, len(ivs))
	for _, r := range rows {
		if agg && r.Name != "Aggregated" {
			continue
		}
		i := intervalAt(ivs, r.End)
		if i < 0 || r.Count == 0 {
			continue
		}
		s := out[i]
		if s == nil {
			s = &latency.Summary{}
			out[i] = s
		}
		s.Count += r.Count
		s.Errors += r.Errors
		meanSum[i] += float64(r.Mean) * float64(r.Count)
		s.P50, s.P95 = max(s.P50, r.P50), max(s.P95, r.P95)
		s.P99, s.Max = max(s.P99, r.P99), max(s.Max, r.Max)
	}
	for i, s := range out {
		if s != nil {
			s.Mean = time.Duration(meanSum[i] / float64(s.Count))
		}
	}
	return out
}

// failures is the number of failed requests of each interval.
func failures(sums []*latency.Summary) []int {
	out := make([]int, len(sums))
	for i, s := range sums {
		if s != nil {
			out[i] = s.Errors
		}
	}
	return out
}

// failureShareFloor is the least share of failed requests that makes an
// interval a failure spike; it must also be at least twice the median
// share of the intervals with requests, so a constant rate of expected
// failures (a 404 in every iteration of a script) raises nothing.
const failureShareFloor = 0.05

// failureSpikes flags the intervals whose share of failed requests is a
// spike (see [failureShareFloor]).
func failureSpikes(sums []*latency.Summary) []bool {
	out := make([]bool, len(sums))
	shares := failureShares(sums, len(sums))
	base := known(shares)
	if len(base) == 0 {
		return out
	}
	floor := failureFloor(base)
	for i, sh := range shares {
		out[i] = sh > 0 && sh >= floor // NaN: no requests
	}
	return out
}

// failureFloor is the share of failed requests that makes a failure
// spike over a baseline of shares (at least one): failureShareFloor, and
// at least twice their median.
func failureFloor(shares []float64) float64 { return max(failureShareFloor, 2*median(shares)) }

// risesAbove reports whether a latency statistic v is a spike over a
// baseline of median med and median absolute deviation mad: at least
// floor, and above med by more than madFactor robust standard deviations.
func risesAbove(v, med, mad, floor, madFactor float64) bool {
	return v >= floor && v-med > madFactor*madScale*mad
}

// latencySeries is the latency statistic of each interval (ns, NaN
// without requests).
func latencySeries(sums []*latency.Summary, st Stat) []float64 {
	lat := make([]float64, len(sums))
	for i, s := range sums {
		lat[i] = math.NaN()
		if s != nil && s.Latencies() > 0 {
			lat[i] = float64(statOf(*s, st))
		}
	}
	return lat
}

// summarize computes a latency summary of ds (which it sorts); percentiles
// use the nearest-rank method.
func summarize(ds []time.Duration) latency.Summary {
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(ds)))) - 1
		return ds[max(0, min(i, len(ds)-1))]
	}
	return latency.Summary{
		Count: len(ds), Mean: sum / time.Duration(len(ds)),
		P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: ds[len(ds)-1],
	}
}

func statOf(s latency.Summary, st Stat) time.Duration {
	switch st {
	case StatMax:
		return s.Max
	case StatP95:
		return s.P95
	case StatMean:
		return s.Mean
	}
	return s.P99
}

// detectSpikes flags intervals whose statistic exceeds the rolling
// baseline (see the package documentation).
func detectSpikes(lat []float64, o Options) []bool {
	spikes := make([]bool, len(lat))
	all := known(lat)
	allMed, allMAD := medMAD(all) // the baseline until 5 values are seen
	var hist rollingWindow
	for i, v := range lat {
		if math.IsNaN(v) {
			continue
		}
		med, mad := allMed, allMAD
		if len(hist.fifo) >= 5 {
			med, mad = hist.medMAD()
		}
		floor := float64(o.Spike.Floor)
		if o.Spike.Floor <= 0 {
			floor = o.Spike.Factor * med
		}
		spikes[i] = risesAbove(v, med, mad, floor, o.LatencyMADFactor)
		hist.push(v, o.BaselineWindow)
	}
	return spikes
}

// totals are the whole-recording figures. Requests/s is over the span
// the load ran, first to last request (the recording may be padded with
// idle time before and after); with the probe as the only source it is
// the probe's own fixed rate and is left 0 (unknown), with RateFromProbe.
func totals(ivs []ival, sums []*latency.Summary, o Options, probe bool) Totals {
	t := Totals{Duration: ivs[len(ivs)-1].End.Sub(ivs[0].Start)}
	for _, iv := range ivs {
		if !math.IsNaN(iv.MemSome) {
			t.MemStall += time.Duration(iv.MemSome * float64(iv.Dt))
		}
		if !math.IsNaN(iv.CgMemSome) {
			t.CgroupMemStall += time.Duration(iv.CgMemSome * float64(iv.Dt))
		}
	}
	for _, s := range sums {
		if s != nil && s.Errors > 0 {
			t.ErrorIntervals++
		}
	}
	if o.Requests != nil {
		requestTotals(&t, ivs[0].Start, ivs[len(ivs)-1].End, o)
		return t
	}
	summaryTotals(&t, ivs, sums)
	switch {
	case probe:
		t.RateFromProbe = true
	case t.Requests > 0:
		// Per-interval counts: the span of the intervals with requests.
		if secs := t.LoadTo.Sub(t.LoadFrom).Seconds(); secs > 0 {
			t.RequestsPerSec = float64(t.Requests) / secs
		}
	}
	return t
}

// requestTotals sets t's load figures from the imported requests
// (Options.Requests) sent in (from, to]: exact mean and p99, the load's
// span and its steady rate.
func requestTotals(t *Totals, from, to time.Time, o Options) {
	ds := make([]time.Duration, 0, o.Requests.Len()) // not grown: a day's 1,000,000 are 8 MB
	var first, last time.Time
	for _, r := range o.Requests.Each() {
		if !r.Start.After(from) || r.Start.After(to) {
			continue
		}
		t.Requests++
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if r.Start.After(last) {
			last = r.Start
		}
		if r.Err {
			t.Errors++
			if !o.LatencyWithFailed {
				continue
			}
		}
		ds = append(ds, r.Latency)
	}
	if len(ds) > 0 {
		s := summarize(ds)
		t.Mean, t.P99, t.P99Exact = s.Mean, s.P99, true
	}
	t.LoadFrom, t.LoadTo = first, last
	if span := last.Sub(first).Seconds(); t.Requests >= 2 && span > 0 {
		// n requests sent at a steady rate span n-1 gaps.
		t.RequestsPerSec = float64(t.Requests-1) / span
	}
}

// summaryTotals sets t's load figures from the per-interval summaries:
// the requests and errors, the span of the intervals with requests, the
// mean weighted by each interval's latencies and the p99 of the
// intervals' p99s so weighted (an estimate).
func summaryTotals(t *Totals, ivs []ival, sums []*latency.Summary) {
	type wp struct {
		p99 time.Duration
		n   int
	}
	var ps []wp
	var sum float64
	lat := 0
	for i, s := range sums {
		if s == nil || s.Count == 0 {
			continue
		}
		if t.LoadFrom.IsZero() {
			t.LoadFrom = ivs[i].Start
		}
		t.LoadTo = ivs[i].End
		t.Requests += s.Count
		t.Errors += s.Errors
		if n := s.Latencies(); n > 0 {
			lat += n
			sum += float64(s.Mean) * float64(n)
			ps = append(ps, wp{s.P99, n})
		}
	}
	if lat > 0 {
		t.Mean = time.Duration(sum / float64(lat))
		slices.SortFunc(ps, func(a, b wp) int { return cmp.Compare(a.p99, b.p99) })
		need, acc := 0.99*float64(lat), 0
		for _, p := range ps {
			acc += p.n
			if float64(acc) >= need {
				t.P99 = p.p99
				break
			}
		}
	}
}

// buildEpisodes merges the intervals with memory pressure into episodes
// and returns the latency spikes outside them. Episodes are built from
// the kernel signals alone: a latency spike never opens, extends or
// merges an episode, so the episodes are the same with any latency
// source or none (a spike between two stalls does not make them one). A
// spike in an episode or within the gap of one marks that episode a
// spike episode; any other run of spike intervals is a spike outside
// episodes.
func buildEpisodes(sr *Series, ivs []ival, raised [][]Signal, spikes []bool, sums []*latency.Summary,
	lat []float64, fails []int, step time.Duration, o Options, baselines map[Signal]float64) ([]Episode, []Spike) {
	gap := o.GapTolerance
	switch {
	case gap == 0:
		gap = step
	case gap < 0:
		gap = 0
	}
	gap += step / 4    // sampling jitter
	var spans [][2]int // each episode's first and last interval
	first, last := -1, -1
	flush := func() {
		if first >= 0 {
			spans = append(spans, [2]int{first, last})
		}
	}
	// Hysteresis: an open episode goes on through intervals whose stall
	// stays above the low-water mark or that still raise a reclaim signal,
	// so one continuous burst is one episode, not several cut by sampling
	// noise.
	low := lowWater(o, baselines)
	quiet := quietLevels(ivs, o)
	var own ownLevel
	for i := range ivs {
		if !flagged(false, raised[i], o) {
			if first >= 0 && i == last+1 && (continues(&ivs[i], raised[i], o, low, quiet) || own.continues(&ivs[i], o)) {
				last = i
			}
			continue
		}
		if first >= 0 && ivs[i].Start.Sub(ivs[last].End) <= gap {
			last = i
			own.add(&ivs[i], o)
			continue
		}
		flush()
		first, last = i, i
		own = ownLevel{}
		own.add(&ivs[i], o)
	}
	flush()
	// A slowdown under way before the stall is not its effect, not even
	// the part inside it: the episodes see neither its spike intervals
	// nor their latency and failures.
	prior := beforeOnset(ivs, spikes, lat, sums, spans, gap, o)
	epSpikes, epLat, epFails := without(prior, spikes, lat, fails)
	var eps []Episode
	for k, sp := range spans {
		eps = append(eps, episode(sr, ivs, raised, epSpikes, epLat, epFails, sp[0], sp[1], o, baselines))
		eps[k].Index = k
	}
	return eps, spikesOutside(ivs, spikes, prior, lat, fails, gap, eps, spans)
}

// without returns spikes, lat and fails with the intervals prior marks
// taken out (no spike, no latency, no failures); the same slices when
// prior is nil.
func without(prior, spikes []bool, lat []float64, fails []int) ([]bool, []float64, []int) {
	if prior == nil {
		return spikes, lat, fails
	}
	spikes, lat, fails = slices.Clone(spikes), slices.Clone(lat), slices.Clone(fails)
	for i, p := range prior {
		if p {
			spikes[i], lat[i], fails[i] = false, math.NaN(), 0
		}
	}
	return spikes, lat, fails
}

// beforeOnset marks the spike intervals an episode would count but its
// stall did not cause (effect before cause, issue 30.10): of every run
// of spike intervals (at most gap apart, as spikesOutside merges them),
// the part that counts for an episode (nearestEpisode) whose stall rose
// two or more intervals into the run, after intervals of the run that
// were no episode's — the slowdown or failure burst was under way on
// its own before that stall — unless the stall made it worse than its
// level just before (beforeLevel, worse). That part stays a spike
// outside episodes, with its latency and failures. A run that begins in
// the interval just before an episode is its (the stall can begin there
// before it crosses a threshold), and so is one that went from an
// earlier episode or its recovery straight into it: a slowdown one stall
// began and the next aggravated counts for both
// (TestSpikeDoesNotBridgeEpisodes). nil when no interval is so marked.
func beforeOnset(ivs []ival, spikes []bool, lat []float64, sums []*latency.Summary, spans [][2]int, gap time.Duration, o Options) []bool {
	if len(spans) == 0 {
		return nil
	}
	var prior []bool
	c := runCtx{ivs: ivs, lat: lat, shares: failureShares(sums, len(spikes)), spans: spans, gap: gap, near: make([]int, len(spikes))}
	for i := range c.near {
		c.near[i] = nearUnknown
	}
	for r0 := 0; r0 < len(spikes); r0++ {
		if !spikes[r0] {
			continue
		}
		r1 := r0 // the run's last spike interval
		for j := r0 + 1; j < len(spikes) && ivs[j].Start.Sub(ivs[r1].End) <= gap; j++ {
			if spikes[j] {
				r1 = j
			}
		}
		for _, i := range c.notCaused(spikes, r0, r1, o) {
			if prior == nil {
				prior = make([]bool, len(spikes))
			}
			prior[i] = true
		}
		r0 = r1
	}
	return prior
}

// runCtx is what beforeOnset judges runs by: the intervals, their
// latency statistics and failure shares, the episodes' spans and --gap,
// and the episode each interval looked at counts for (nearOf).
type runCtx struct {
	ivs         []ival
	lat, shares []float64
	spans       [][2]int
	gap         time.Duration
	near        []int // nearUnknown until nearOf is asked
}

const nearUnknown = -2

// nearOf is nearestEpisode of interval i (-1: none), worked out once.
func (c *runCtx) nearOf(i int) int {
	if c.near[i] == nearUnknown {
		c.near[i], _ = nearestEpisode(c.ivs, i, c.spans, c.gap)
	}
	return c.near[i]
}

// notCaused returns the spike intervals of the run r0..r1 that count for
// an episode whose stall rose two or more intervals into the run, when
// the run was under way on its own just before it (beforeLevel) and the
// stall did not make it worse (worse).
func (c *runCtx) notCaused(spikes []bool, r0, r1 int, o Options) []int {
	var out []int
	notIts := map[int]bool{} // the episodes whose part of the run was not theirs
	for k, sp := range c.spans {
		onset := sp[0] - 1 // the interval just before may hold the stall's start
		if onset > r1 {
			break // spans are in time order
		}
		if r0 >= onset {
			continue // the run began with it, or after it
		}
		before, ok := c.beforeLevel(r0, onset, notIts)
		if !ok {
			continue // from an earlier episode straight into this one
		}
		var part []int
		var in level
		for i := onset; i <= r1; i++ {
			if c.nearOf(i) != k {
				if i > sp[1] {
					break // past the episode and its --gap
				}
				continue
			}
			if spikes[i] {
				part = append(part, i)
				in.add(c.lat[i], c.shares[i])
			}
		}
		if !worse(before, in, o) {
			out = append(out, part...)
			notIts[k] = true
		}
	}
	return out
}

// beforeLevelIntervals is how many of a run's intervals just before a
// stall's onset give its level then: the most recent, so that an earlier
// stretch at another level does not stand for it (a slowdown that eased
// and was made worse again, or one another stall made worse before).
const beforeLevelIntervals = 3

// beforeLevel is the run's level just before onset: its last
// beforeLevelIntervals intervals with requests from r0 on (spike or not:
// a dip below the threshold is the slowdown's too) that were no
// episode's, back to the first that was (in an earlier episode or its
// recovery), and through an earlier episode whose part of the run was
// not its (notIts: the slowdown went on, on its own, through that
// stall); false when there is none, as when the run went from an earlier
// episode straight into this one.
func (c *runCtx) beforeLevel(r0, onset int, notIts map[int]bool) (level, bool) {
	var l level
	for i := onset - 1; i >= r0 && l.n < beforeLevelIntervals; i-- {
		if k := c.nearOf(i); k >= 0 && !notIts[k] {
			break // in an earlier episode, or its recovery
		}
		l.add(c.lat[i], c.shares[i])
	}
	return l, l.n > 0
}

// level is a run of intervals' latency statistics (ns) and shares of
// failed requests, each where known.
type level struct {
	lat, shares []float64
	n           int // intervals with requests
}

// add adds an interval's latency statistic and failure share (NaN:
// none); one without requests (both NaN) adds nothing.
func (l *level) add(lat, share float64) {
	if math.IsNaN(lat) && math.IsNaN(share) {
		return
	}
	l.n++
	if !math.IsNaN(lat) {
		l.lat = append(l.lat, lat)
	}
	if !math.IsNaN(share) {
		l.shares = append(l.shares, share)
	}
}

// worse reports whether a slowdown in a stall (in) is worse than it was
// just before the stall (before), by the detectors' own rules with
// before as the baseline: a failure share at least failureShareFloor and
// twice the median share before, and above every share before (the
// failure detector's); or a latency statistic at least the --spike
// factor times the median before (3 with an absolute --spike floor,
// which says nothing of a rise) and above it by more than
// Options.LatencyMADFactor robust standard deviations (the latency
// detector's: a steady slowdown's jitter is no rise). A latency with
// none to compare before (only failed requests then) is not worse.
func worse(before, in level, o Options) bool {
	if len(in.shares) > 0 {
		peak := slices.Max(in.shares)
		floor := failureShareFloor
		if len(before.shares) > 0 {
			floor = failureFloor(before.shares)
			if peak <= slices.Max(before.shares) {
				floor = math.Inf(1)
			}
		}
		if peak >= floor {
			return true
		}
	}
	if len(in.lat) == 0 || len(before.lat) == 0 {
		return false
	}
	factor := o.Spike.Factor
	if factor <= 0 || o.Spike.Floor > 0 { // an absolute floor says nothing of a rise
		factor = DefaultSpikeRule.Factor
	}
	peak := slices.Max(in.lat)
	med, mad := medMAD(before.lat)
	return risesAbove(peak, med, mad, factor*med, o.LatencyMADFactor)
}

// failureShares is the share of failed requests of each of n intervals
// (NaN without requests).
func failureShares(sums []*latency.Summary, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
		if i < len(sums) && sums[i] != nil && sums[i].Count > 0 {
			out[i] = float64(sums[i].Errors) / float64(sums[i].Count)
		}
	}
	return out
}

// spikesOutside marks the episodes a spike interval falls within gap of
// (the spike's latency and failed requests then count for the nearest)
// and returns the runs of the other spike intervals, merged when at most
// gap apart; an interval prior marks (beforeOnset) is never an episode's.
func spikesOutside(ivs []ival, spikes, prior []bool, lat []float64, fails []int, gap time.Duration,
	eps []Episode, spans [][2]int) []Spike {
	var out []Spike
	open := false
	for i := range ivs {
		if !spikes[i] {
			continue
		}
		near, dist := -1, time.Duration(0)
		if prior == nil || !prior[i] { // one that began before a stall is no episode's
			near, dist = nearestEpisode(ivs, i, spans, gap)
		}
		if near >= 0 {
			if dist >= 0 {
				e := &eps[near]
				e.addSpike(&ivs[i])
				e.Failed += fails[i]
				if !math.IsNaN(lat[i]) && time.Duration(lat[i]) > e.LatencyPeak {
					e.LatencyPeak = time.Duration(lat[i])
				}
			}
			open = false
			continue
		}
		if open && ivs[i].Start.Sub(out[len(out)-1].End) <= gap {
			sp := &out[len(out)-1]
			sp.End = ivs[i].End
			sp.Failed += fails[i]
			if !math.IsNaN(lat[i]) && time.Duration(lat[i]) > sp.LatencyPeak {
				sp.LatencyPeak = time.Duration(lat[i])
			}
			continue
		}
		sp := Spike{Start: ivs[i].Start, End: ivs[i].End, Failed: fails[i]}
		if !math.IsNaN(lat[i]) {
			sp.LatencyPeak = time.Duration(lat[i])
		}
		out = append(out, sp)
		open = true
	}
	return out
}

// nearestEpisode is the episode spike interval i counts for — one it is
// in (dist -1), the one whose first interval follows it, or the nearest
// whose end it follows within gap — and how far from it; near is -1 for
// none (a spike that ended an interval or more before a stall is not its).
func nearestEpisode(ivs []ival, i int, spans [][2]int, gap time.Duration) (near int, dist time.Duration) {
	near, dist = -1, time.Duration(math.MaxInt64)
	for k, sp := range spans {
		var d time.Duration
		switch {
		case i >= sp[0] && i <= sp[1]:
			d = -1 // inside: episode() counted it
		case i < sp[0]:
			d = ivs[sp[0]].Start.Sub(ivs[i].End)
			if d > 0 {
				// Effect before cause (issue 30.10): a spike that ended
				// an interval or more before the stall rose is not the
				// episode's; only the interval just before it may hold
				// a stall that crossed no threshold yet.
				continue
			}
		default:
			d = ivs[i].Start.Sub(ivs[sp[1]].End)
		}
		if d <= gap && d < dist {
			near, dist = k, d
		}
	}
	return near, dist
}

// lowWater is the stall share (scope's PSI some) above which an open
// episode continues: half of the rise that opens one above the median,
// and at least half the absolute floor.
func lowWater(o Options, baselines map[Signal]float64) float64 {
	t := o.Thresholds
	if t.PSISome < 0 {
		return math.Inf(1)
	}
	return math.Max(t.PSISomeMin/2, baselines[PSISome]+t.PSISome/2)
}

// reclaimSignals show reclaim still going on.
var reclaimSignals = [...]Signal{LRUDrop, Refault, DirectReclaim, LimitReclaim, SwapOut}

// continues says whether interval iv, not flagged itself, continues the
// episode open before it: its stall is above the low-water mark, or a
// reclaim signal is still at least its threshold above its quiet level
// (the 25th percentile: a long burst is half of a short recording, and
// then its own median).
func continues(iv *ival, raised []Signal, o Options, low float64, quiet map[Signal]float64) bool {
	if len(o.Require) == 0 {
		return false // without a stall requirement every raised signal flags
	}
	v := signalValue(PSISome, iv, o.PSIScope)
	if !math.IsNaN(v) && v >= low {
		return true
	}
	if o.PSIScope == PSICgroup {
		// The group's episode is the group's stall: it ends when the
		// group stops stalling, whatever the rest of the host reclaims.
		if math.IsNaN(v) || v <= 0 {
			return false
		}
	}
	if !cgCounters(iv, o.PSIScope) && hasAny(raised, reclaimSignals[:]) {
		return true
	}
	for _, s := range reclaimSignals {
		q, ok := quiet[s]
		thr := o.Thresholds.Get(s)
		if !ok || thr < 0 {
			continue
		}
		if v := reclaimValue(s, iv, o.PSIScope); !math.IsNaN(v) && v-q >= thr {
			if s == LRUDrop && -iv.FileLRUDeltaBytes < o.Thresholds.LRUDropMin {
				continue
			}
			return true
		}
	}
	return false
}

// cgCounters says whether iv's reclaim is read from the --cgroup group's
// own counters: the scope is the group and its memory.stat was recorded.
func cgCounters(iv *ival, scope PSIScope) bool {
	return scope == PSICgroup && (!math.IsNaN(iv.CgRefaultPerSec) || !math.IsNaN(iv.CgReclaimPerSec))
}

// reclaimValue is reclaim signal s over iv in the scope: under a cgroup
// scope with the group's counters recorded, the group's own (its
// memory.stat refaults, reclaim scans and swap-out; NaN where the group
// lacks the counter, and for lru_drop, whose level is recorded for the
// host only); else the host's (signalValue). A recording without the
// group's counters falls back to the host's reclaim, but only while the
// group itself still stalls (continues, ownLevel.continues).
func reclaimValue(s Signal, iv *ival, scope PSIScope) float64 {
	if !cgCounters(iv, scope) {
		return signalValue(s, iv, scope)
	}
	switch s {
	case Refault:
		return iv.CgRefaultPerSec
	case DirectReclaim, LimitReclaim:
		return iv.CgReclaimPerSec
	case SwapOut:
		return iv.CgSwapOutBytesPerSec
	}
	return math.NaN()
}

// ownLevel is an open episode's own reclaim level: the mean of each
// reclaim signal over the episode's flagged intervals. It is the
// hysteresis of a burst that covers most of a short recording, where the
// recording's quiet level (25th percentile) lies inside the burst and no
// interval rises above it: the episode goes on while reclaim stays at its
// absolute threshold and at least half the episode's own level.
type ownLevel struct {
	sum [len(reclaimSignals)]float64
	n   [len(reclaimSignals)]int
}

func (l *ownLevel) add(iv *ival, o Options) {
	for k, s := range reclaimSignals {
		if v := reclaimValue(s, iv, o.PSIScope); !math.IsNaN(v) {
			l.sum[k] += v
			l.n[k]++
		}
	}
}

func (l *ownLevel) continues(iv *ival, o Options) bool {
	if len(o.Require) == 0 {
		return false
	}
	for k, s := range reclaimSignals {
		thr := o.Thresholds.Get(s)
		if thr <= 0 || l.n[k] == 0 {
			continue
		}
		if o.PSIScope == PSICgroup {
			if v := signalValue(PSISome, iv, o.PSIScope); math.IsNaN(v) || v <= 0 {
				return false // the group stopped stalling
			}
		}
		v := reclaimValue(s, iv, o.PSIScope)
		if math.IsNaN(v) || v < thr || v < l.sum[k]/float64(l.n[k])/2 {
			continue
		}
		if s == LRUDrop && -iv.FileLRUDeltaBytes < o.Thresholds.LRUDropMin {
			continue
		}
		return true
	}
	return false
}

// quietLevels is the 25th percentile of each reclaim signal.
func quietLevels(ivs []ival, o Options) map[Signal]float64 {
	out := map[Signal]float64{}
	for _, s := range reclaimSignals {
		var vals []float64
		for i := range ivs {
			if v := reclaimValue(s, &ivs[i], o.PSIScope); !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		slices.Sort(vals)
		q := vals[len(vals)/4]
		if s == LRUDrop && q < 0 {
			q = 0
		}
		out[s] = q
	}
	return out
}

// flagged says whether an interval belongs in an episode or a spike: a
// latency spike, or MinSignals raised signals — or, when Options.Require
// is set, one of the required signals.
func flagged(spike bool, raised []Signal, o Options) bool {
	if spike {
		return true
	}
	if len(o.Require) > 0 {
		return hasAny(raised, o.Require)
	}
	return len(raised) >= o.MinSignals
}

func hasAny(raised, want []Signal) bool {
	for _, s := range raised {
		if slices.Contains(want, s) {
			return true
		}
	}
	return false
}

// splitSpikes moves the episodes that raised no kernel signal (or none of
// the required ones) out of eps: they are latency spikes outside episodes.
func splitSpikes(eps []Episode, lone []Spike, o Options) ([]Episode, []Spike) {
	var keep []Episode
	spikes := lone
	for _, e := range eps {
		var sigs []Signal
		for _, p := range e.Signals {
			sigs = append(sigs, p.Signal)
		}
		pressure := len(sigs) > 0
		if len(o.Require) > 0 {
			pressure = hasAny(sigs, o.Require)
		}
		if !pressure {
			if e.Spike {
				spikes = append(spikes, Spike{Start: e.Start, End: e.End, LatencyPeak: e.LatencyPeak, Failed: e.Failed})
			}
			continue
		}
		e.Index = len(keep)
		keep = append(keep, e)
	}
	slices.SortStableFunc(spikes, func(a, b Spike) int { return a.Start.Compare(b.Start) })
	return keep, spikes
}

// addSpike marks the episode as a spike episode and widens its spike
// span to the interval's.
func (e *Episode) addSpike(iv *ival) {
	if !e.Spike || iv.Start.Before(e.SpikeStart) {
		e.SpikeStart = iv.Start
	}
	if !e.Spike || iv.End.After(e.SpikeEnd) {
		e.SpikeEnd = iv.End
	}
	e.Spike = true
}

// episode is the episode of intervals first..last: its stall and signal
// peaks (episodeSignals), its processes' I/O (episodeProcs), the memory
// they took (episodeMemory) and its largest I/O processes; the processes
// are kept in sr.parts for the culprit model.
func episode(sr *Series, ivs []ival, raised [][]Signal, spikes []bool,
	lat []float64, fails []int, first, last int, o Options, baselines map[Signal]float64) Episode {
	e := Episode{Start: ivs[first].Start, End: ivs[last].End, Intervals: last - first + 1, Stall: []float64{math.NaN(), math.NaN()},
		Catalogue: episodeRates(ivs[first : last+1])}
	e.episodeSignals(ivs, raised, spikes, lat, fails, first, last, o, baselines)
	// Under a cgroup scope the culprit model weighs only the processes
	// that can cause the group's reclaim (docs/analyze.md).
	scoped := o.PSIScope == PSICgroup && sr.Header.Cgroup != ""
	procs, parts, started, exited := sr.episodeProcs(&e, first, last, scoped)
	parts = sr.episodeMemory(&e, parts, first, last, scoped)
	sr.parts[e.Start] = parts
	var top []*ProcActivity
	for _, p := range procs {
		if p.Bytes() >= o.MinProcBytes {
			top = append(top, p)
		}
	}
	byIO := func(a, b *ProcActivity) int {
		if c := cmp.Compare(b.Bytes(), a.Bytes()); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	}
	slices.SortFunc(top, byIO)
	for i, p := range top {
		if i == o.TopProcs {
			break
		}
		e.Processes = append(e.Processes, *p)
	}
	for _, p := range started {
		e.Started = append(e.Started, p.ProcActivity)
	}
	for _, p := range exited {
		e.Exited = append(e.Exited, p.ProcActivity)
	}
	return e
}

// episodeSignals sets e's stall peaks (PSI some and full of the scope),
// the peaks of the signals its intervals first..last raised, its spike
// span, failed requests and latency peak.
func (e *Episode) episodeSignals(ivs []ival, raised [][]Signal, spikes []bool,
	lat []float64, fails []int, first, last int, o Options, baselines map[Signal]float64) {
	peaks := map[Signal]float64{}
	for i := first; i <= last; i++ {
		for k, s := range []Signal{PSISome, PSIFull} {
			if v := signalValue(s, &ivs[i], o.PSIScope); !math.IsNaN(v) && (math.IsNaN(e.Stall[k]) || v > e.Stall[k]) {
				e.Stall[k] = v
			}
		}
		for _, s := range raised[i] {
			v := signalValue(s, &ivs[i], o.PSIScope)
			if p, ok := peaks[s]; !ok || v > p {
				peaks[s] = v
			}
		}
		if spikes[i] {
			e.addSpike(&ivs[i])
		}
		e.Failed += fails[i]
		if !math.IsNaN(lat[i]) && time.Duration(lat[i]) > e.LatencyPeak {
			e.LatencyPeak = time.Duration(lat[i])
		}
	}
	for _, s := range AllSignals {
		if p, ok := peaks[s]; ok {
			e.Signals = append(e.Signals, SignalPeak{Signal: s, Peak: p, Baseline: baselines[s]})
		}
	}
}

// episodeProcs is the I/O of the processes of intervals first..last
// (activity, from the interval before), each placed in or outside a
// cgroup scope (scoped), with a row for the children each reaped
// unseen; it adds their I/O to e's totals.
func (sr *Series) episodeProcs(e *Episode, first, last int, scoped bool) (procs []*ProcActivity, parts []procPart, started, exited []*procPart) {
	order, started, exited := sr.activity(max(first, 1), first+1, last+1)
	procs = make([]*ProcActivity, 0, len(order))
	parts = make([]procPart, 0, len(order))
	for _, en := range order {
		en.p.Program = programOf(en.p.Comm, en.p.Cmdline)
		if en.p.start == 0 {
			en.p.start = en.start
		}
		if scoped {
			if en.cgroup == "" {
				// Not seen in the episode: where the recording last saw it.
				en.cgroup = sr.cgroupOf(en.p.PID, en.p.start)
			}
			if en.cgroup == "" {
				en.p.CgroupUnknown = true
			} else {
				en.p.OutsideScope = !sr.inScope(en.p.PID, en.cgroup)
			}
		}
		ps := []*procPart{en.p}
		if en.reaped != [2]uint64{} {
			// Children it reaped between two scans, never seen: their
			// I/O is theirs, not its, but they were its job's processes.
			ps = append(ps, reapedPart(en.p, en.reaped))
			e.ReapedBytes += en.reaped[0] + en.reaped[1]
		}
		for _, p := range ps {
			procs = append(procs, &p.ProcActivity)
			e.IOBytes += p.Bytes()
			if p.OutsideScope {
				e.OutsideBytes += p.Bytes()
			}
			parts = append(parts, *p)
		}
	}
	return procs, parts, started, exited
}

// episodeMemory is the memory taken in intervals first..last: each of
// the largest RSS holders' growth from the sample before the episode's
// first interval began (a job starts, then its allocations raise the
// stall) to its peak in it. It adds the growth to its process's part
// (a new part for a holder that did no I/O) and to e's totals.
func (sr *Series) episodeMemory(e *Episode, parts []procPart, first, last int, scoped bool) []procPart {
	before := map[procKey]uint64{}
	for _, h := range sr.rssOf(max(first-1, 0)) {
		before[procKey{h.pid, h.start}] = h.anon + h.file
	}
	peak := map[procKey]uint64{}
	for k := first + 1; k <= last+1; k++ {
		for _, h := range sr.rssOf(k) {
			key := procKey{h.pid, h.start}
			peak[key] = max(peak[key], h.anon+h.file)
		}
	}
	for key, pk := range peak {
		g := pk - min(pk, before[key])
		if g == 0 {
			continue
		}
		e.MemTaken += g
		if j := slices.IndexFunc(parts, func(p procPart) bool {
			return p.PID == key.pid && (p.start == 0 || key.start == 0 || p.start == key.start)
		}); j >= 0 {
			parts[j].memGrowth += g
			if parts[j].OutsideScope {
				e.OutsideMem += g
			}
			continue
		}
		// Seen in the episode only among the RSS holders, which
		// carry no cgroup: where the recording last saw it.
		p := procPart{ProcActivity: ProcActivity{PID: key.pid}, start: key.start, memGrowth: g}
		if scoped {
			if cg := sr.cgroupOf(key.pid, key.start); cg == "" {
				p.CgroupUnknown = true
			} else if p.OutsideScope = !sr.inScope(key.pid, cg); p.OutsideScope {
				e.OutsideMem += g
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// actEntry is one process's activity over a span of samples
// ([Series.activity]).
type actEntry struct {
	p       *procPart
	start   uint64
	cum     [2]uint64 // last cumulative read/write bytes seen in Procs
	seenCum bool
	exit    *[2]uint64 // life totals from an exit event
	cgroup  string     // its cgroup path (/proc/PID/cgroup), "" unknown
	reaped  [2]uint64  // read/write of children it reaped unseen
}

// actTable is the processes activity met, in order, and by PID.
type actTable struct {
	// A process is identified by PID and start time; the process-events
	// connector reports no start time, so an entry without one matches any
	// of its PID (PID reuse within one episode is not a concern).
	byPID           map[int][]*actEntry
	order           []*actEntry
	started, exited []*procPart
	evBuf           []process.Event // scratch for actEvents
}

// get is the entry of the process, added when new. The latest
// observation names a process: an exec changes its comm, and a job's
// wrapper (sh) moves itself into the unit's cgroup before it execs the
// job, so the first sighting may have neither.
func (t *actTable) get(pid, ppid int, start uint64, comm, cmdline, unit string) *actEntry {
	var e *actEntry
	for _, x := range t.byPID[pid] {
		if x.start == 0 || start == 0 || x.start == start {
			e = x
			break
		}
	}
	if e == nil {
		e = &actEntry{p: &procPart{ProcActivity: ProcActivity{PID: pid}}}
		t.byPID[pid] = append(t.byPID[pid], e)
		t.order = append(t.order, e)
	}
	if e.start == 0 {
		e.start = start
	}
	if comm != "" {
		e.p.Comm = comm
	}
	if cmdline != "" {
		e.p.Cmdline = cmdline
	}
	if unit != "" {
		e.p.Unit = unit
	}
	if ppid != 0 {
		e.p.PPID = ppid
	}
	return e
}

// activity is each process's I/O over samples evFrom..to (their events)
// and rowFrom..to (their rows; sample i's rows cover the interval ending
// at it), counted once: a row's deltas, and of an exit's life totals
// only what no row held (all of it for a process that started in the
// span, what it did after the last row that saw it for one seen before,
// all of it for one never seen otherwise). order is every process met,
// in order; started and exited those with an exec or exit event.
func (sr *Series) activity(evFrom, rowFrom, to int) (order []*actEntry, started, exited []*procPart) {
	t := &actTable{byPID: map[int][]*actEntry{}}
	// In time order. Sample i holds the events since sample i-1, then the
	// processes' I/O at i. An episode gives the events of the interval
	// before it too (evFrom < rowFrom): a job starts, then its I/O raises
	// the signals.
	for i := evFrom; i <= to; i++ {
		sr.actEvents(t, i)
		if i >= rowFrom {
			sr.actRows(t, i)
		}
	}
	// An exit carries the process's life totals: what it did after the
	// last sample that saw it. A process that started in the span did
	// all of its I/O there.
	for _, e := range t.order {
		if e.exit == nil {
			continue
		}
		switch {
		case e.p.Started:
			e.p.ReadBytes = max(e.p.ReadBytes, e.exit[0])
			e.p.WriteBytes = max(e.p.WriteBytes, e.exit[1])
		case e.seenCum:
			if e.exit[0] > e.cum[0] {
				e.p.ReadBytes += e.exit[0] - e.cum[0]
			}
			if e.exit[1] > e.cum[1] {
				e.p.WriteBytes += e.exit[1] - e.cum[1]
			}
		case e.p.Bytes() == 0:
			e.p.ReadBytes, e.p.WriteBytes = e.exit[0], e.exit[1]
		}
	}
	return t.order, t.started, t.exited
}

// actEvents adds sample i's process events to t: execs and exits, an
// exit's life totals and, for a process seen before the span, its
// cumulative I/O then.
func (sr *Series) actEvents(t *actTable, i int) {
	var prior []cumPrior
	t.evBuf, prior = sr.eventsWithPrior(i, t.evBuf)
	for j, ev := range t.evBuf {
		e := t.get(ev.PID, ev.PPID, ev.StartTicks, ev.Comm, ev.Cmdline, ev.Unit)
		if ev.Cgroup != "" {
			e.cgroup = ev.Cgroup
		}
		switch ev.Kind {
		case process.Exec:
			if !e.p.Started {
				e.p.Started = true
				e.p.execAt = ev.Time
				if ev.Time.IsZero() {
					e.p.execAt = sr.sampleTime(i)
				}
				t.started = append(t.started, e.p)
			}
		case process.Exit:
			if !e.p.Exited {
				e.p.Exited = true
				t.exited = append(t.exited, e.p)
			}
			e.exit = &[2]uint64{ev.ReadBytes, ev.WriteBytes}
			if prior[j].ok && !e.seenCum {
				// Seen before the span: only what it did since.
				e.cum, e.seenCum = prior[j].cum, true
			}
		}
	}
}

// actRows adds sample i's process rows to t: their I/O deltas, the
// children they reaped unseen, and their cumulative I/O and cgroup.
func (sr *Series) actRows(t *actTable, i int) {
	for _, p := range sr.procsOf(i, nil) {
		n := &sr.names[p.name]
		e := t.get(p.pid, p.ppid, p.start, n.comm, n.cmdline, n.unit)
		if e.p.start == 0 {
			e.p.start = p.start
		}
		e.p.ReadBytes += p.dReadBytes
		e.p.WriteBytes += p.dWriteByte
		e.reaped[0] += p.rReadBytes
		e.reaped[1] += p.rWriteBytes
		e.cum, e.seenCum = [2]uint64{p.readBytes, p.writeBytes}, true
		if n.cgroup != "" {
			e.cgroup = n.cgroup
		}
	}
}

// reapedPart is the row of the children parent reaped between two scans
// of the diskio scanner that no scan saw (record.ProcIO.DeltaReaped*Bytes),
// with their read/write bytes rw: PID 0, PPID the parent, named by
// [ReapedComm], and in the parent's unit and cgroup.
func reapedPart(parent *procPart, rw [2]uint64) *procPart {
	pa := parent.ProcActivity
	return &procPart{ProcActivity: ProcActivity{PPID: pa.PID, Comm: ReapedComm(pa.Comm), Program: ReapedComm(pa.Program),
		Unit: pa.Unit, ReadBytes: rw[0], WriteBytes: rw[1], Reaped: true, OutsideScope: pa.OutsideScope, CgroupUnknown: pa.CgroupUnknown},
		start: parent.start}
}

// ReapedComm names the row of I/O the kernel added to parent's counters
// that no process row or exit record holds (record.ProcIO.DeltaReaped*Bytes):
// "exited threads or children of parent". The kernel adds both a reaped
// child's I/O and an exited thread's to the process's signal->ioac
// (kernel/exit.c wait_task_zombie and __exit_signal; fs/proc/base.c
// do_io_accounting shows it in /proc/PID/io), and /proc cannot tell them
// apart in an interval in which the process also reaped a child. The
// scanner counts the gain as the process's own when it reaped none
// (package diskio); a recording made before that
// (record.ProcIOAccountingThreads) holds exited threads' I/O here
// whatever the interval: a threaded server's request threads.
func ReapedComm(parent string) string { return "exited threads or children of " + parent }

// cgroupWithin says whether cgroup proc (a path relative to its
// hierarchy's root, as /proc/PID/cgroup and the kernel log's
// task_memcg= give it: "/a/b") is the recorded group dir (a directory
// under a cgroup mount) or one of its descendants. dir is taken relative
// to its hierarchy's root (hierarchyPath), so on a hybrid host the v1
// memory controller's "/a/b" matches the v2 group
// /sys/fs/cgroup/unified/a.
func cgroupWithin(dir, proc string) bool {
	if proc == "" {
		return false
	}
	rel, ok := hierarchyPath(dir)
	if !ok {
		return false
	}
	proc = path.Clean("/" + proc)
	return proc == rel || rel == "/" || strings.HasPrefix(proc, rel+"/")
}

// hierarchyPath is dir's path relative to the root of its cgroup
// hierarchy: the part after <root>/sys/fs/cgroup, without the v1
// controller's or the hybrid v2 mount's directory (unified, memory,
// cpu,cpuacct, name=systemd's systemd …) when there is one. ok is false
// when dir is not under a sys/fs/cgroup mount.
func hierarchyPath(dir string) (string, bool) {
	d := path.Clean("/" + dir)
	const mnt = "/sys/fs/cgroup"
	i := strings.LastIndex(d, mnt)
	if i < 0 || (len(d) > i+len(mnt) && d[i+len(mnt)] != '/') {
		return "", false
	}
	rest := d[i+len(mnt):]
	if rest == "" {
		return "/", true
	}
	first, tail, _ := strings.Cut(rest[1:], "/")
	if cgroupMountDirs[first] || strings.Contains(first, ",") {
		return path.Clean("/" + tail), true
	}
	return rest, true
}

// cgroupMountDirs are the directories under /sys/fs/cgroup where a hybrid
// or v1 host mounts one hierarchy each (the v2 one at unified, each v1
// controller at its name, systemd's named hierarchy at systemd); see
// https://docs.kernel.org/admin-guide/cgroup-v1/cgroups.html and
// systemd's "hybrid" layout.
var cgroupMountDirs = map[string]bool{
	"unified": true, "systemd": true, "memory": true, "cpu": true, "cpuacct": true, "cpuset": true,
	"blkio": true, "io": true, "pids": true, "devices": true, "freezer": true, "net_cls": true,
	"net_prio": true, "perf_event": true, "hugetlb": true, "rdma": true, "misc": true,
}

// cgroupRelated says whether a process in cgroup proc (its /proc/PID/cgroup
// path, "/a/b") can cause reclaim in the recorded group dir (a directory
// under the cgroup mount, "/sys/fs/cgroup/unified/a"): it is in the group,
// in a descendant (charged to the group) or in an ancestor other than the
// root (whose limit reclaims from the group too). The root's processes
// cause only host-wide reclaim. The mount is taken as dir's path up to the
// longest suffix that is proc's path or one of its ancestors or
// descendants.
func cgroupRelated(dir, proc string) bool {
	proc = path.Clean("/" + proc)
	if proc == "/" {
		return false
	}
	d := path.Clean(dir)
	for {
		// d is a suffix of dir: a candidate for the group's path below
		// the mount.
		if d == proc || strings.HasPrefix(proc, d+"/") || strings.HasPrefix(d, proc+"/") {
			return true
		}
		i := strings.Index(d[1:], "/")
		if i < 0 {
			return false
		}
		d = d[i+1:]
	}
}
