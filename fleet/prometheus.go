// Package fleet runs memdiag's correlator over a Prometheus server's data
// (`memdiag analyze --prometheus URL`): it reads node_exporter's and
// memdiag's own series for every host a label selector matches through
// Prometheus's HTTP API (client_golang's api/prometheus/v1), turns each
// host's series into the samples of a recording (so package correlate
// runs unchanged), and aligns the hosts' episodes on the wall clock
// ([Align]): "14 of 16 hosts: cron.daily at 06:25 UTC".
//
// What each source gives (docs/fleet.md):
//
//	node_pressure_{memory,io}_{waiting,stalled}_seconds_total  PSI some/full totals (node_exporter pressure collector)
//	node_memory_{Active,Inactive}_file_bytes                   file LRU (meminfo collector)
//	node_vmstat_<counter>                                      reclaim, refaults, swap (vmstat collector; its default
//	                                                           --collector.vmstat.fields drops pgscan_* and workingset_*)
//	node_disk_{read,written}_bytes_total, node_disk_io_time_weighted_seconds_total   disks (diskstats collector)
//	memdiag_*                                                  per-unit I/O, jobs, the --cgroup group's PSI, and the
//	                                                           host signals above: taken first where memdiag is scraped
//	                                                           (one clock with its unit I/O; see Data.Recording)
//
// What is lost: everything between two scrapes. A counter read every
// scrape interval gives the stall share, reclaim and I/O per interval, not
// per second; an episode shorter than about two intervals is averaged
// away; times are known to one interval. Per-process attribution needs
// memdiag's own metrics, and even then it is per unit, not per process.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Query says what to read from Prometheus.
type Query struct {
	URL string
	// Match is the label matchers that select the hosts, as inside {}:
	// `instance=~"web-.*"`; "" selects every host.
	Match string
	// HostLabel is the label that names a host (default "instance"): a
	// host's node_exporter and memdiag targets must carry the same value.
	HostLabel string
	From, To  time.Time
	// Step is the resolution asked of Prometheus; 0 takes the scrape
	// interval detected from the series' own samples.
	Step time.Duration
	// LatencyQuery is a PromQL expression giving latency in seconds, per
	// host (by HostLabel) or one series for all hosts; "" for none.
	LatencyQuery string
}

// Series is one host's series, by metric name and then by the labels
// other than __name__ and the host label (`device="sda"`, `unit="x"`),
// each as values at the steps of [Data.Times] (NaN: no value).
type Series map[string]map[string][]float64

// Data is what was read: the steps and each host's series.
type Data struct {
	URL      string
	Step     time.Duration
	Scrape   time.Duration // the scrape interval detected (0: unknown)
	Times    []time.Time
	Hosts    map[string]Series
	Latency  map[string][]float64 // host → seconds per step; "" = every host
	Warnings []string
}

// metricsRegex selects every series the correlator reads.
const metricsRegex = `node_pressure_.*|node_memory_(Active|Inactive)_file_bytes|node_memory_Mem(Total|Available)_bytes|node_vmstat_.*|node_disk_(read|written)_bytes_total|node_disk_io_time_(weighted_)?seconds_total|memdiag_.*`

// maxPoints is Prometheus's limit of points per series in one range query.
const maxPoints = 11000

// ErrNoData is wrapped when the selector matched no series.
var ErrNoData = errors.New("no series matched")

// Fetch reads the window from Prometheus.
func Fetch(ctx context.Context, q Query) (*Data, error) {
	if q.HostLabel == "" {
		q.HostLabel = "instance"
	}
	c, err := api.NewClient(api.Config{Address: q.URL})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %s: %w", q.URL, err)
	}
	a := v1.NewAPI(c)
	d := &Data{URL: q.URL, Hosts: map[string]Series{}, Latency: map[string][]float64{}}
	sel := selector(`__name__=~"`+metricsRegex+`"`, q.Match)
	if q.Step <= 0 {
		d.Scrape, err = scrapeInterval(ctx, a, q)
		if err != nil {
			return nil, err
		}
		q.Step = max(d.Scrape, time.Second)
	}
	if span := q.To.Sub(q.From); span/q.Step > maxPoints {
		old := q.Step
		q.Step = (span/maxPoints + time.Second).Truncate(time.Second)
		d.Warnings = append(d.Warnings, fmt.Sprintf("the window holds more than %d steps of %s: read at %s steps instead", maxPoints, old, q.Step))
	}
	d.Step = q.Step
	for t := q.From; !t.After(q.To); t = t.Add(q.Step) {
		d.Times = append(d.Times, t)
	}
	val, warns, _, err := a.QueryRange(ctx, sel, v1.Range{Start: q.From, End: q.To, Step: q.Step})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %s: query %s: %w", q.URL, sel, err)
	}
	d.Warnings = append(d.Warnings, warns...)
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("--prometheus %s: query %s: want a range vector, got %s", q.URL, sel, val.Type())
	}
	for _, ss := range m {
		host := string(ss.Metric[model.LabelName(q.HostLabel)])
		if host == "" {
			continue
		}
		name := string(ss.Metric[model.MetricNameLabel])
		s := d.Hosts[host]
		if s == nil {
			s = Series{}
			d.Hosts[host] = s
		}
		if s[name] == nil {
			s[name] = map[string][]float64{}
		}
		key := labelsKey(ss.Metric, q.HostLabel)
		s[name][key] = d.align(ss.Values)
	}
	if len(d.Hosts) == 0 {
		return nil, fmt.Errorf("--prometheus %s: %w %s between %s and %s (by label %q)", q.URL, ErrNoData, sel,
			q.From.UTC().Format(time.RFC3339), q.To.UTC().Format(time.RFC3339), q.HostLabel)
	}
	if q.LatencyQuery != "" {
		val, warns, _, err := a.QueryRange(ctx, q.LatencyQuery, v1.Range{Start: q.From, End: q.To, Step: q.Step})
		if err != nil {
			return nil, fmt.Errorf("--latency-query %s: %w", q.LatencyQuery, err)
		}
		d.Warnings = append(d.Warnings, warns...)
		m, ok := val.(model.Matrix)
		if !ok {
			return nil, fmt.Errorf("--latency-query %s: want a range vector, got %s", q.LatencyQuery, val.Type())
		}
		if len(m) == 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("--latency-query %s returned no series in the window: analysing pressure episodes only", q.LatencyQuery))
		}
		for _, ss := range m {
			host := string(ss.Metric[model.LabelName(q.HostLabel)])
			if _, dup := d.Latency[host]; dup {
				d.Warnings = append(d.Warnings, fmt.Sprintf("--latency-query returned several series for %s=%q: the first is used (aggregate it, e.g. max by (%s) (...))", q.HostLabel, host, q.HostLabel))
				continue
			}
			d.Latency[host] = d.align(ss.Values)
		}
	}
	return d, nil
}

// selector joins matchers into one {…} selector.
func selector(ms ...string) string {
	var parts []string
	for _, m := range ms {
		if m = strings.TrimSpace(strings.Trim(strings.TrimSpace(m), "{}")); m != "" {
			parts = append(parts, m)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// labelsKey is the series' labels other than the name and the host label,
// sorted, as `k="v",…`.
func labelsKey(m model.Metric, host string) string {
	var ks []string
	for k, v := range m {
		if k == model.MetricNameLabel || string(k) == host || k == "job" {
			continue
		}
		ks = append(ks, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// align puts a series' points on the steps; a step without a point is NaN.
func (d *Data) align(ps []model.SamplePair) []float64 {
	out := make([]float64, len(d.Times))
	for i := range out {
		out[i] = math.NaN()
	}
	if len(d.Times) == 0 {
		return out
	}
	t0 := d.Times[0]
	for _, p := range ps {
		i := int(math.Round(float64(p.Timestamp.Time().Sub(t0)) / float64(d.Step)))
		if i >= 0 && i < len(out) {
			out[i] = float64(p.Value)
		}
	}
	return out
}

// scrapeInterval is the median spacing of the raw samples of `up` for the
// selected hosts over the last 5 minutes of the window (at least 2 s).
func scrapeInterval(ctx context.Context, a v1.API, q Query) (time.Duration, error) {
	look := min(5*time.Minute, max(q.To.Sub(q.From), 2*time.Second))
	expr := "up" + selector(q.Match) + fmt.Sprintf("[%ds]", int(look.Seconds()))
	val, _, _, err := a.Query(ctx, expr, q.To)
	if err != nil {
		return 0, fmt.Errorf("--prometheus %s: query %s: %w", q.URL, expr, err)
	}
	m, _ := val.(model.Matrix)
	var gaps []float64
	for _, ss := range m {
		for i := 1; i < len(ss.Values); i++ {
			gaps = append(gaps, float64(ss.Values[i].Timestamp.Sub(ss.Values[i-1].Timestamp)))
		}
	}
	if len(gaps) == 0 {
		return 15 * time.Second, nil // Prometheus's default; the report says it was not measured
	}
	slices.Sort(gaps)
	return time.Duration(gaps[len(gaps)/2]).Round(time.Millisecond), nil
}

// HostNames are the hosts read, sorted.
func (d *Data) HostNames() []string {
	out := make([]string, 0, len(d.Hosts))
	for h := range d.Hosts {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}
