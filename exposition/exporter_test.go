package exposition

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// scrape renders the exporter's /metrics and parses it.
func scrape(t *testing.T, e *Exporter) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	out := map[string]*dto.MetricFamily{}
	for name, f := range fams {
		out[name] = f
	}
	return string(body), out
}

// value is the value of the series of family name whose labels include
// want ("k=v" pairs); ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func TestUnitIOCountsExitsOnceAndCaps(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 25, 0, 0, time.UTC)
	e := New(record.Header{PageSize: 4096}, Options{MaxUnits: 2, AnalyzeEvery: -1})
	proc := func(pid int, unit string, cum, delta uint64) record.ProcIO {
		return record.ProcIO{PID: pid, StartTicks: 7, Unit: unit, ReadBytes: cum, DeltaReadBytes: delta, WriteBytes: 2 * cum, DeltaWriteBytes: 2 * delta}
	}
	e.Observe(&record.Sample{Seq: 0, Time: t0, Procs: []record.ProcIO{proc(10, "a.service", 100, 100)}})
	e.Observe(&record.Sample{Seq: 1, Time: t0.Add(time.Second), Procs: []record.ProcIO{proc(10, "a.service", 300, 200)}})
	e.Observe(&record.Sample{Seq: 2, Time: t0.Add(2 * time.Second), Events: []record.Event{
		// pid 10 exits having read 1000 in all: 700 more than seen.
		{Kind: process.Exit, PID: 10, StartTicks: 7, Unit: "a.service", ReadBytes: 1000, WriteBytes: 2000},
		// a 300 ms job never seen by a sample: its whole life.
		{Kind: process.Exit, PID: 11, StartTicks: 9, Unit: "cron.service", ReadBytes: 5000, WriteBytes: 64},
		// past the cap of 2 units: summed under "other".
		{Kind: process.Exit, PID: 12, StartTicks: 9, Unit: "c.service", ReadBytes: 40},
		{Kind: process.Exit, PID: 13, StartTicks: 9, ReadBytes: 1},
		{Kind: process.Exec, PID: 14, Unit: "d.service"},
	}})
	_, fams := scrape(t, e)
	for _, c := range []struct {
		metric, unit string
		want         float64
	}{
		{UnitReadBytes, "a.service", 1000},
		{UnitWrittenBytes, "a.service", 2000},
		{UnitReadBytes, "cron.service", 5000},
		{UnitWrittenBytes, "cron.service", 64},
		{UnitReadBytes, "other", 41}, // c.service's 40 and the unit-less process's 1
	} {
		got, ok := value(fams, c.metric, "unit="+c.unit)
		if !ok || got != c.want {
			t.Errorf("%s{unit=%q} = %v (present %v), want %v", c.metric, c.unit, got, ok, c.want)
		}
	}
	if got, _ := value(fams, UnitOverflow); got != 2 {
		t.Errorf("%s = %v, want 2", UnitOverflow, got)
	}
	if _, ok := value(fams, UnitReadBytes, "unit=d.service"); ok {
		t.Error("an exec without I/O made a series")
	}
}

// TestRecordingMetrics feeds a real recording (watch on Linux 6.18 with a
// cgroup; record/testdata/v1/SOURCE) and checks the catalogue counters
// against the recording's first and last /proc/vmstat values.
func TestRecordingMetrics(t *testing.T) {
	rec, err := record.ReadFile("../record/testdata/v1/watch-6.18-cgroup.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e := New(rec.Header, Options{AnalyzeEvery: -1})
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
	}
	body, fams := scrape(t, e)
	first, last := rec.Samples[0], rec.Samples[len(rec.Samples)-1]
	// Σ per-interval deltas of a counter that never went backwards is
	// last − first: pgmajfault is an event count, pswpout pages × 4096.
	wantMaj := float64(*last.VMStat.Pgmajfault - *first.VMStat.Pgmajfault)
	if got, ok := value(fams, "memdiag_major_faults_total", "scope=host"); !ok || got != wantMaj {
		t.Errorf("memdiag_major_faults_total = %v, want %v", got, wantMaj)
	}
	wantDirect := float64(*last.VMStat.PgscanDirect-*first.VMStat.PgscanDirect) * float64(rec.Header.PageSize)
	if got, ok := value(fams, "memdiag_direct_reclaim_bytes_total"); !ok || got != wantDirect {
		t.Errorf("memdiag_direct_reclaim_bytes_total = %v, want %v", got, wantDirect)
	}
	wantSome := (last.PSI.Memory.Some.Total - first.PSI.Memory.Some.Total).Seconds()
	if got, ok := value(fams, "memdiag_psi_memory_some_seconds_total", "scope=host"); !ok || math.Abs(got-wantSome) > 1e-9 {
		t.Errorf("memdiag_psi_memory_some_seconds_total = %v, want %v", got, wantSome)
	}
	if last.CgroupPSI == nil || first.CgroupPSI == nil {
		t.Fatal("the fixture lost its cgroup PSI")
	}
	wantCg := (last.CgroupPSI.Memory.Some.Total - first.CgroupPSI.Memory.Some.Total).Seconds()
	if got, ok := value(fams, "memdiag_psi_memory_some_seconds_total", "scope=cgroup"); !ok || math.Abs(got-wantCg) > 1e-9 {
		t.Errorf("cgroup memory some = %v, want %v", got, wantCg)
	}
	lru, _ := last.Meminfo.LRU().FileLRU()
	if got, _ := value(fams, "memdiag_file_lru_bytes", "scope=host"); got != float64(lru) {
		t.Errorf("memdiag_file_lru_bytes = %v, want %v", got, lru)
	}
	var wantRead float64
	for _, d := range last.Disks {
		for _, p := range first.Disks {
			if p.Name == d.Name {
				wantRead += float64(d.ReadBytes - p.ReadBytes)
			}
		}
	}
	if got, _ := value(fams, "memdiag_disk_read_bytes_total", "scope=host"); got != wantRead {
		t.Errorf("memdiag_disk_read_bytes_total = %v, want %v", got, wantRead)
	}
	if got, _ := value(fams, Samples); got != float64(len(rec.Samples)) {
		t.Errorf("%s = %v, want %d", Samples, got, len(rec.Samples))
	}
	promtoolCheck(t, body)
}

// TestEpisodesAndCulpritsAsTheyHappen feeds a recording whose answer is
// known (correlate/testdata/SOURCE: union.jsonl.gz, two PCP timers) and
// checks the live episode count and culprits against analyze's, and the
// job inventory's firings against the schedules (*:05/20, *:15/20, UTC).
func TestEpisodesAndCulpritsAsTheyHappen(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	end := rec.Samples[len(rec.Samples)-1].Time
	e := New(rec.Header, Options{Window: 24 * time.Hour, AnalyzeEvery: time.Minute, Now: func() time.Time { return end }})
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
		e.an.wait() // an analysis as fast as the samples come: none skipped
	}
	// The last analysis ran on the final sample (30 s samples, 1 min).
	e.an.run.Lock()
	res := e.an.series.Analyze(correlate.Options{Project: timers.Project})
	e.an.run.Unlock()
	want := correlate.Analyze(rec, correlate.Options{Project: timers.Project})
	if len(want.Culprits) < 2 || want.Culprits[0].Name != "pmlogger_check.timer" {
		t.Fatalf("fixture's verdict changed: %+v", want.Culprits)
	}
	if len(res.Episodes) != len(want.Episodes) {
		t.Fatalf("series holds %d episodes, analyze %d", len(res.Episodes), len(want.Episodes))
	}
	body, fams := scrape(t, e)
	if got, _ := value(fams, Episodes); got != float64(len(want.Episodes)) {
		t.Errorf("%s = %v, want %d (each episode counted once as it appeared)", Episodes, got, len(want.Episodes))
	}
	for _, c := range want.Culprits {
		got, ok := value(fams, CulpritConfidence, "culprit="+c.Name, "kind="+string(c.Kind))
		if !ok || got != c.Confidence {
			t.Errorf("%s{culprit=%q} = %v (present %v), want %v", CulpritConfidence, c.Name, got, ok, c.Confidence)
		}
		n, _ := value(fams, CulpritEpisodes, "culprit="+c.Name)
		if n != float64(c.EpisodesExplained) {
			t.Errorf("%s{culprit=%q} = %v, want %d", CulpritEpisodes, c.Name, n, c.EpisodesExplained)
		}
	}
	last := want.Episodes[len(want.Episodes)-1].Start
	if got, _ := value(fams, EpisodeLastStart); got != float64(last.Unix()) {
		t.Errorf("%s = %v, want %v (%s)", EpisodeLastStart, got, last.Unix(), last)
	}
	// Firings: pmlogger_check at *:05/20 (UTC); the recording ends at
	// end, so the last is the :05/:25/:45 at or before it.
	wantLast := end.Truncate(20 * time.Minute).Add(5 * time.Minute)
	if wantLast.After(end) {
		wantLast = wantLast.Add(-20 * time.Minute)
	}
	if got, _ := value(fams, JobLastFiring, "periodic_job=pmlogger_check.timer"); got != float64(wantLast.Unix()) {
		t.Errorf("last firing = %v, want %v (%s; end %s)", got, wantLast.Unix(), wantLast, end)
	}
	if got, _ := value(fams, JobNextFiring, "periodic_job=pmlogger_check.timer"); got != float64(wantLast.Add(20*time.Minute).Unix()) {
		t.Errorf("next firing = %v, want %s", got, wantLast.Add(20*time.Minute))
	}
	if got, _ := value(fams, JobPeriod, "periodic_job=pmlogger_farm_check.timer"); got != 1200 {
		t.Errorf("period = %v, want 1200", got)
	}
	if got, ok := value(fams, JobInfo, "periodic_job=pmlogger_check.timer", "unit=pmlogger_check.service", "schedule=*:05/20", "source=systemd"); !ok || got != 1 {
		t.Errorf("%s for pmlogger_check.timer missing: %v %v", JobInfo, got, ok)
	}
	promtoolCheck(t, body)
}

// promtoolCheck runs Prometheus's own linter (promtool check metrics:
// naming, _total, base units, help) on an exposition.
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Unmet(t, "promtool is not installed (apt-get install prometheus)")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestOnsetScopeAndJobActive: a stall onset in the --cgroup directory is
// scope="cgroup" (record.StallOnset.Scope holds its path), as the signal
// metrics label it; memdiag_job_info says whether a job will run.
func TestOnsetScopeAndJobActive(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 25, 0, 0, time.UTC)
	hdr := record.Header{PageSize: 4096, Jobs: []record.Job{
		{Name: "on.timer", Source: timers.Systemd, Unit: "on.service", Schedule: []string{"*:*:0/20"}, Active: true},
		{Name: "off.timer", Source: timers.Systemd, Unit: "off.service", Schedule: []string{"daily"}},
	}}
	e := New(hdr, Options{AnalyzeEvery: -1, Now: func() time.Time { return t0 }})
	e.Observe(&record.Sample{Time: t0, Onsets: []record.StallOnset{
		{Scope: "/sys/fs/cgroup/unified/mdtrial", Resource: "memory", Kind: "some"},
		{Scope: "/sys/fs/cgroup/unified/mdtrial", Resource: "memory", Kind: "some"},
		{Scope: "host", Resource: "memory", Kind: "some"},
	}})
	body, fams := scrape(t, e)
	if got, ok := value(fams, StallOnsets, "scope=cgroup", "resource=memory", "kind=some"); !ok || got != 2 {
		t.Errorf(`%s{scope="cgroup"} = %v (present %v), want 2`, StallOnsets, got, ok)
	}
	if got, ok := value(fams, StallOnsets, "scope=host", "resource=memory", "kind=some"); !ok || got != 1 {
		t.Errorf(`%s{scope="host"} = %v (present %v), want 1`, StallOnsets, got, ok)
	}
	if strings.Contains(body, "mdtrial") {
		t.Errorf("a cgroup path in a label:\n%s", body)
	}
	for job, active := range map[string]string{"on.timer": "true", "off.timer": "false"} {
		if got, ok := value(fams, JobInfo, "periodic_job="+job, "active="+active); !ok || got != 1 {
			t.Errorf(`%s{periodic_job=%q,active=%q} missing`, JobInfo, job, active)
		}
	}
}

// A scrape stuck half-way (a client that stops reading: here nobody
// takes the metrics from the channel) holds nothing the sampler waits
// on: Observe returns, and the stuck scrape still renders the view it
// started from. With one lock for both, Observe would wait forever.
func TestScrapeNeverBlocksObserve(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	e := New(record.Header{PageSize: 4096, Interval: time.Second}, Options{AnalyzeEvery: -1})
	e.Observe(&record.Sample{Time: t0})
	ch := make(chan prometheus.Metric)
	go func() { collector{e}.Collect(ch); close(ch) }()
	first := <-ch // the scrape has started and is stuck sending the next metric
	for i := 1; i <= 5; i++ {
		e.Observe(&record.Sample{Time: t0.Add(time.Duration(i) * time.Second)})
	}
	var m dto.Metric
	if err := first.Write(&m); err != nil || m.Counter.GetValue() != 1 {
		t.Errorf("the stuck scrape's %s = %v (%v), want 1: the view it started from", Samples, m.Counter.GetValue(), err)
	}
	for range ch { // let the scrape finish
	}
	_, fams := scrape(t, e)
	if got, _ := value(fams, Samples); got != 6 {
		t.Errorf("%s = %v after the stuck scrape, want 6", Samples, got)
	}
}

// The analysis runs off the sampling path: while a round holds the
// series, Observe queues its sample and returns, a round due meanwhile
// is skipped, and the next sample after it adds the queue and starts the
// round that was due.
func TestAnalysisOffTheSamplingPath(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	e := New(rec.Header, Options{Window: 24 * time.Hour, AnalyzeEvery: time.Minute})
	e.Observe(&rec.Samples[0]) // the first sample starts a round
	e.an.wait()
	if f := e.an.found.Load(); f == nil || !f.analyzed {
		t.Fatal("no analysis after the first sample")
	}
	first := e.an.lastRun
	e.an.run.Lock() // a slow round holds the series
	for i := 1; i <= 4; i++ {
		e.Observe(&rec.Samples[i]) // 30 s samples: a round is due at the second
	}
	e.an.qmu.Lock()
	queued := len(e.an.queue)
	e.an.qmu.Unlock()
	if queued != 4 || e.an.lastRun != first || e.an.series.Header.Host != rec.Header.Host {
		t.Errorf("while a round runs: %d samples queued (want 4), last round at %s (want %s, none started)", queued, e.an.lastRun, first)
	}
	e.an.run.Unlock()
	e.Observe(&rec.Samples[5])
	e.an.wait()
	if want := rec.Samples[5].Time; !e.an.lastRun.Equal(want) || len(e.an.queue) != 0 {
		t.Errorf("after the round: last round at %s, want %s; %d still queued", e.an.lastRun, want, len(e.an.queue))
	}
	e.an.run.Lock()
	from, to, _ := e.an.series.Span()
	e.an.run.Unlock()
	if !from.Equal(rec.Samples[0].Time) || !to.Equal(rec.Samples[5].Time) {
		t.Errorf("the series spans %s to %s, want every sample, %s to %s", from, to, rec.Samples[0].Time, rec.Samples[5].Time)
	}
}

// Late and missed samples (the gaps the sampler records) are counted,
// and are 0 from the first scrape.
func TestLateAndMissedSamples(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	e := New(record.Header{PageSize: 4096, Interval: time.Second}, Options{AnalyzeEvery: -1})
	body, fams := scrape(t, e)
	for _, n := range []string{SamplesLate, SamplesMissed} {
		if got, ok := value(fams, n); !ok || got != 0 {
			t.Errorf("%s = %v (present %v) before any sample, want 0", n, got, ok)
		}
	}
	promtoolCheck(t, body)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, s := range []*record.Sample{
		{Time: at(0)}, {Time: at(1000)},
		{Time: at(2600), Gap: &record.Gap{Start: at(1000), End: at(2600), Late: 600 * time.Millisecond, Reason: record.GapLate}},
		{Time: at(6200), Gap: &record.Gap{Start: at(2600), End: at(6200), Missed: 3, Late: 0, Reason: record.GapMissed}},
		{Time: at(8700), Gap: &record.Gap{Start: at(6200), End: at(8700), Missed: 1, Late: 700 * time.Millisecond, Reason: record.GapMissed}},
	} {
		e.Observe(s)
	}
	_, fams = scrape(t, e)
	if got, _ := value(fams, SamplesLate); got != 2 {
		t.Errorf("%s = %v, want 2", SamplesLate, got)
	}
	if got, _ := value(fams, SamplesMissed); got != 4 {
		t.Errorf("%s = %v, want 4", SamplesMissed, got)
	}
}

// A slow round spaces the next ones: after a round that cost 10 s, the
// next waits CostFactor × 10 s of sample time, not AnalyzeEvery.
func TestAnalysisCostBounded(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	e := New(rec.Header, Options{Window: 24 * time.Hour, AnalyzeEvery: time.Minute})
	e.Observe(&rec.Samples[0])
	e.an.wait()
	first := e.an.lastRun
	if first.IsZero() || e.an.lastCost <= 0 {
		t.Fatalf("first round at %s, cost %s; want a round with its cost measured", first, e.an.lastCost)
	}
	e.an.run.Lock()
	e.an.lastCost = 10 * time.Second // as if the round had taken 10 s
	e.an.run.Unlock()
	step := rec.Samples[1].Time.Sub(rec.Samples[0].Time)
	due := CostFactor * 10 * time.Second
	var ran time.Time
	for i := 1; i < len(rec.Samples); i++ {
		e.Observe(&rec.Samples[i])
		e.an.wait()
		if e.an.lastRun != first {
			ran = e.an.lastRun
			break
		}
	}
	if got := ran.Sub(first); ran.IsZero() || got < due || got >= due+step {
		t.Errorf("next round %s after the first (samples every %s); want the first sample at or past %s", got, step, due)
	}
}

// TestAnalysisSlidingWindow: the analysed series holds between Window
// and Window+Window/8 of samples once that much has come (trimmed a
// Window/8 at a time, never two series), and each episode of the
// recording is counted once though the trims cut those in progress
// (counted as new, 13 or 16 instead of 12 at windows of 20 or 10 min).
func TestAnalysisSlidingWindow(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	const window = 15 * time.Minute
	e := New(rec.Header, Options{Window: window, AnalyzeEvery: time.Minute})
	t0 := rec.Samples[0].Time
	trims := 0
	var prevFrom time.Time
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
		e.an.wait()
		e.an.run.Lock()
		from, to, ok := e.an.series.Span()
		e.an.run.Unlock()
		if !ok {
			continue
		}
		if !from.Equal(prevFrom) && !prevFrom.IsZero() {
			trims++
		}
		prevFrom = from
		if span := to.Sub(from); span > window+window/8 || (to.Sub(t0) > window+window/8 && span < window) {
			t.Fatalf("at %s the series spans %s (from %s): want %s to %s", to, span, from, window, window+window/8)
		}
	}
	// 2 h of samples: trims at 16m52s and every 1m52s after (~55).
	if trims < 50 {
		t.Errorf("%d trims over 2 h, want one every %s after the first %s", trims, window/8, window+window/8)
	}
	want := correlate.Analyze(rec, correlate.Options{Project: timers.Project})
	_, fams := scrape(t, e)
	if got, _ := value(fams, Episodes); got != float64(len(want.Episodes)) {
		t.Errorf("%s = %v, want %d (each episode counted once as it appeared)", Episodes, got, len(want.Episodes))
	}
}
