package fleet

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/timers"
)

func TestAlignNamesTheSharedJobOnce(t *testing.T) {
	at := func(hms string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04:05", "2026-12-01 "+hms)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	host := func(name string, eps ...correlate.Episode) HostResult {
		return HostResult{Host: name, Res: correlate.Result{Episodes: eps}}
	}
	ep := func(hms, culprit string) correlate.Episode {
		return correlate.Episode{Start: at(hms), Culprit: culprit}
	}
	rs := []HostResult{
		host("web-1", ep("06:25:02", "cron.daily"), ep("09:00:00", "")),
		host("web-2", ep("06:24:58", "cron.daily")),
		host("web-3", ep("06:25:40", ""), ep("06:25:50", "cron.daily")), // twice in the group: counted once
		host("web-4"),
	}
	got := Align(rs, time.Minute)
	want := []Aligned{
		{At: at("06:24:58"), Hosts: []string{"web-1", "web-2", "web-3"}, Of: 4, Job: "cron.daily", JobHosts: 3},
		{At: at("09:00:00"), Hosts: []string{"web-1"}, Of: 4},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Align (-want +got):\n%s", d)
	}
	if l := got[0].Line(time.UTC, time.Minute); l != "3 of 4 hosts: cron.daily at 06:24 UTC" {
		t.Errorf("line %q", l)
	}
	if l := got[1].Line(time.UTC, 5*time.Second); l != "1 of 4 hosts: an episode at 09:00:00 UTC, no culprit named" {
		t.Errorf("line %q", l)
	}
	got[0].JobHosts = 2
	if l := got[0].Line(time.UTC, time.Minute); l != "3 of 4 hosts: cron.daily at 06:24 UTC (named on 2 of them)" {
		t.Errorf("line %q", l)
	}
}

// TestRecordingFromMemdiagMetrics builds a host's recording from
// memdiag's own series only (no node_exporter): PSI, file LRU, catalogue
// counters back to pages, per-unit I/O as one process per unit with
// deltas, and the job inventory.
func TestRecordingFromMemdiagMetrics(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 25, 0, 0, time.UTC)
	nan := math.NaN()
	d := &Data{URL: "http://prom:9090", Step: time.Second, Times: []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)},
		Hosts: map[string]Series{"web-2": {
			exposition.Samples:                      {"": {10, 11, 12}},
			"memdiag_psi_memory_some_seconds_total": {hostKey: {1.5, 1.75, 2}, cgroupKey: {0.25, 0.5, 0.75}},
			"memdiag_psi_memory_full_seconds_total": {hostKey: {0.5, 0.5, nan}},
			"memdiag_file_lru_bytes":                {hostKey: {8 << 20, 4 << 20, 4 << 20}},
			"memdiag_direct_reclaim_bytes_total":    {hostKey: {0, 4096 * 10, 4096 * 25}},
			exposition.UnitReadBytes:                {`unit="cron.service"`: {100, 600, 600}, `unit="none"`: {0, 0, 7}},
			exposition.UnitWrittenBytes:             {`unit="cron.service"`: {0, 50, 50}},
			exposition.JobInfo:                      {`periodic_job="cron.d/x:1",schedule="25 6 * * *",source="cron",unit=""`: {1, 1, 1}},
			exposition.JobPeriod:                    {`periodic_job="cron.d/x:1"`: {86400, 86400, 86400}},
			exposition.HostInfo:                     {`host="web-2",kernel="6.1.0",time_zone="Europe/Berlin",version="x"`: {1, 1, 1}},
		}}}
	h := d.Recording("web-2")
	rec := h.Rec
	if len(rec.Samples) != 3 || rec.Header.TimeZone != "Europe/Berlin" || rec.Header.Interval != time.Second {
		t.Fatalf("samples %d, zone %q, interval %s", len(rec.Samples), rec.Header.TimeZone, rec.Header.Interval)
	}
	s1, s2 := rec.Samples[1], rec.Samples[2]
	if got := s1.PSI.Memory.Some.Total; got != 1750*time.Millisecond {
		t.Errorf("memory some total %s, want 1.75s", got)
	}
	if got := s1.CgroupPSI.Memory.Some.Total; got != 500*time.Millisecond {
		t.Errorf("cgroup memory some total %s, want 0.5s", got)
	}
	if s2.PSI.Memory.Full != nil {
		t.Errorf("a missing full value became %v", s2.PSI.Memory.Full)
	}
	if lru, _ := s1.Meminfo.LRU().FileLRU(); lru != 4<<20 {
		t.Errorf("file LRU %d", lru)
	}
	if got := *s2.VMStat.PgscanDirect; got != 25 {
		t.Errorf("pgscan_direct %d pages, want 25 (25×4096 bytes)", got)
	}
	// The first value of a unit holds I/O from before the window: only
	// what changed is an interval's I/O.
	if len(rec.Samples[0].Procs) != 0 || len(s1.Procs) != 1 || s1.Procs[0].Unit != "cron.service" ||
		s1.Procs[0].DeltaReadBytes != 500 || s1.Procs[0].DeltaWriteBytes != 50 {
		t.Errorf("sample 1 procs %+v", s1.Procs)
	}
	if len(s2.Procs) != 1 || s2.Procs[0].Comm != "(none)" || s2.Procs[0].Unit != "" || s2.Procs[0].DeltaReadBytes != 7 {
		t.Errorf("sample 2 procs %+v", s2.Procs)
	}
	jobs := rec.Header.Jobs
	if len(jobs) != 1 || jobs[0].Name != "cron.d/x:1" || jobs[0].Schedule[0] != "25 6 * * *" || *jobs[0].PeriodSeconds != 86400 {
		t.Errorf("jobs %+v", jobs)
	}
	if !h.Memdiag {
		t.Error("memdiag metrics not seen")
	}
	wantLacks := 2 // no disks, per unit not per process
	if len(h.Lacks) != wantLacks {
		t.Errorf("lacks %q", h.Lacks)
	}
}

func TestSelector(t *testing.T) {
	for in, want := range map[string]string{
		"":                     `{__name__="x"}`,
		`instance=~"web-.*"`:   `{__name__="x",instance=~"web-.*"}`,
		` {job="node", a="b"}`: `{__name__="x",job="node", a="b"}`,
	} {
		if got := selector(`__name__="x"`, in); got != want {
			t.Errorf("selector(%q) = %s, want %s", in, got, want)
		}
	}
}

// clockSkewHost is one host as Prometheus returns it at 1 s steps when
// both node_exporter and memdiag are scraped for it, from a CI run of
// e2e/prometheus_test.go that named no culprit on web-1: a timer's job
// (every 12 s) stalls memory for one step; node_exporter, read at its own
// scrape, shows the stall at the step after the firing's second one,
// memdiag shows the same stall one step later, in the same sample as the
// job's unit I/O (256 MiB written, 512 MiB read). withMinePSI false
// drops memdiag's PSI (an exporter without the signal catalogue).
func clockSkewHost(t0 time.Time, withMinePSI bool) *Data {
	const n = 60
	d := &Data{URL: "http://prom:9090", Step: time.Second}
	for i := range n {
		d.Times = append(d.Times, t0.Add(time.Duration(i)*time.Second))
	}
	series := func(f func(i int) float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	fired := func(i, lag int) int { // firings before step i, seen lag steps after the firing
		k := 0
		for _, f := range []int{12, 24, 36, 48} {
			if i >= f+lag {
				k++
			}
		}
		return k
	}
	const nodeLag, mineLag = 2, 3
	psiSome := func(lag int) []float64 {
		return series(func(i int) float64 { return 40 + 0.001*float64(i) + 0.35*float64(fired(i, lag)) })
	}
	psiFull := func(lag int) []float64 {
		return series(func(i int) float64 { return 20 + 0.2*float64(fired(i, lag)) })
	}
	s := Series{
		"node_pressure_memory_waiting_seconds_total": {"": psiSome(nodeLag)},
		"node_pressure_memory_stalled_seconds_total": {"": psiFull(nodeLag)},
		exposition.Samples:                           {"": series(func(i int) float64 { return float64(100 + i) })},
		exposition.UnitReadBytes:                     {`unit="x.service"`: series(func(i int) float64 { return float64(fired(i, mineLag) * 512 << 20) })},
		exposition.UnitWrittenBytes:                  {`unit="x.service"`: series(func(i int) float64 { return float64(fired(i, mineLag) * 256 << 20) })},
		exposition.JobInfo:                           {`active="true",periodic_job="x.timer",schedule="*:*:0/12",source="systemd",unit="x.service"`: series(func(int) float64 { return 1 })},
		exposition.JobPeriod:                         {`periodic_job="x.timer"`: series(func(int) float64 { return 12 })},
	}
	if withMinePSI {
		s["memdiag_psi_memory_some_seconds_total"] = map[string][]float64{hostKey: psiSome(mineLag)}
		s["memdiag_psi_memory_full_seconds_total"] = map[string][]float64{hostKey: psiFull(mineLag)}
	}
	d.Hosts = map[string]Series{"web-1": s}
	return d
}

// TestOneClockPerHost: a host scraped from node_exporter and memdiag
// takes its signals from memdiag, whose samples also hold its per-unit
// I/O. With node_exporter's PSI the job's I/O fell one step after each
// one-step stall it caused, and the timer was credited with none of them.
func TestOneClockPerHost(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 25, 0, 0, time.UTC)
	h := clockSkewHost(t0, true).Recording("web-1")
	if h.Sources[0] != "memdiag PSI" {
		t.Errorf("sources %q, want memdiag PSI first (one clock with the unit I/O)", h.Sources)
	}
	if len(h.Notes) != 0 {
		t.Errorf("notes %q", h.Notes)
	}
	res := correlate.Analyze(h.Rec, correlate.Options{Project: timers.Project})
	var starts []string
	for _, e := range res.Episodes {
		starts = append(starts, e.Start.Format("15:04:05")+" "+e.Culprit)
	}
	// memdiag's PSI rose in the interval ending at firing + 3 s.
	want := []string{"06:25:14 x.timer", "06:25:26 x.timer", "06:25:38 x.timer", "06:25:50 x.timer"}
	if d := cmp.Diff(want, starts); d != "" {
		t.Errorf("episodes (-want +got):\n%s", d)
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "x.timer" || res.Culprits[0].EpisodesExplained != 4 {
		t.Errorf("culprits %+v, want x.timer explaining 4 episodes", res.Culprits)
	}

	// Without memdiag's PSI node_exporter's is used, and the report
	// says the unit I/O may then miss the episodes.
	h = clockSkewHost(t0, false).Recording("web-1")
	if h.Sources[0] != "node_exporter PSI" || len(h.Notes) != 1 || !strings.Contains(h.Notes[0], "node_exporter's are used beside memdiag's per-unit I/O") {
		t.Errorf("sources %q, notes %q", h.Sources, h.Notes)
	}
}

// TestRecordingShortSeries: a Data whose series hold fewer points than
// its Times (built by hand, or by a future reader that does not pad)
// gives samples with those steps unknown, not a panic.
func TestRecordingShortSeries(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 25, 0, 0, time.UTC)
	d := &Data{URL: "http://prom:9090", Step: time.Second, Times: []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)},
		Hosts: map[string]Series{
			"node": {
				"node_memory_Active_file_bytes":            {"": {8 << 20}},
				"node_memory_Inactive_file_bytes":          {"": {4 << 20}},
				"node_disk_read_bytes_total":               {`device="vda"`: {0, 4096}},
				"node_disk_written_bytes_total":            {`device="vda"`: {0, 4096}},
				"node_disk_io_time_seconds_total":          {`device="vda"`: {0}},
				"node_disk_io_time_weighted_seconds_total": {`device="vda"`: {}},
				"node_vmstat_pgscan_direct":                {"": {1}},
			},
			"mine": {
				exposition.Samples:       {"": {10}},
				"memdiag_file_lru_bytes": {hostKey: {8 << 20}},
			},
		}}
	for _, host := range []string{"node", "mine"} {
		rec := d.Recording(host).Rec
		if len(rec.Samples) != 3 {
			t.Fatalf("%s: %d samples, want 3", host, len(rec.Samples))
		}
		if rec.Samples[0].Meminfo == nil || rec.Samples[2].Meminfo != nil {
			t.Errorf("%s: file LRU at steps 0 and 2: %+v, %+v; want known, then unknown", host, rec.Samples[0].Meminfo, rec.Samples[2].Meminfo)
		}
	}
	node := d.Recording("node").Rec
	if len(node.Samples[1].Disks) != 1 || len(node.Samples[2].Disks) != 0 || node.Samples[2].VMStat != nil {
		t.Errorf("node step 1 disks %+v; step 2 disks %+v, vmstat %+v", node.Samples[1].Disks, node.Samples[2].Disks, node.Samples[2].VMStat)
	}
}
