package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/tables"
)

// metric is one line of a before/after comparison. Values are in the
// unit named by the key; nil when a recording lacks it.
type metric struct {
	key    string // JSON/CSV name, with its unit
	label  string
	before *float64
	after  *float64
	format func(float64) string
	better int // +1: higher is better, -1: lower is better
	// shareBefore and shareAfter, for a total over the recording (stall
	// time), are that total per second of recording, in percent: they
	// drive the change, so that runs of different lengths compare, and
	// show beside the total; nil for a metric that is a rate already.
	shareBefore, shareAfter *float64
	// uneven: a count over the whole recording (episodes) of two
	// recordings of different lengths, whose change says nothing; its
	// rate per hour is a row of its own.
	uneven bool
}

func f64(v float64) *float64 { return &v }

func compareMetrics(a, b *correlate.Result) []metric {
	lat := func(r *correlate.Result, d time.Duration) *float64 {
		if r.Totals.Requests == r.Totals.Errors { // no successful request: no latency
			return nil
		}
		return f64(float64(d) / 1e6)
	}
	rps := func(r *correlate.Result) *float64 {
		// Unknown with the probe as the only source: its rate is its own.
		if r.Totals.Requests == 0 || r.Totals.RateFromProbe || r.Totals.RequestsPerSec == 0 {
			return nil
		}
		return f64(r.Totals.RequestsPerSec)
	}
	spikes := func(r *correlate.Result) *float64 {
		if !r.HasLatency {
			return nil
		}
		return f64(float64(r.Spikes))
	}
	// spikeShare is the spike intervals' share of the intervals analysed,
	// in percent: recordings of different lengths (or intervals) compare.
	spikeShare := func(r *correlate.Result) *float64 {
		if !r.HasLatency || r.Intervals <= 0 {
			return nil
		}
		return f64(float64(r.Spikes) / float64(r.Intervals) * 100)
	}
	msFmt := func(v float64) string {
		if v < 1000 {
			return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
		}
		return correlate.FormatDuration(time.Duration(v * 1e6))
	}
	sFmt := func(v float64) string { return correlate.FormatDuration(time.Duration(v * 1e9)) }
	nFmt := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	errPct := func(r *correlate.Result) *float64 {
		if r.Totals.Requests == 0 {
			return nil
		}
		return f64(float64(r.Totals.Errors) / float64(r.Totals.Requests) * 100)
	}
	perHour := func(r *correlate.Result, n float64) *float64 {
		if r.Totals.Duration <= 0 {
			return nil
		}
		return f64(n / r.Totals.Duration.Hours())
	}
	// One scope per row: the episodes are counted in each recording's
	// PSI scope, so with both scoped to their recorded cgroup the stall
	// row is the cgroup's too (Totals.CgroupMemStall), and the host's
	// follows under its own label.
	cg := a.PSIScope == correlate.PSICgroup && b.PSIScope == correlate.PSICgroup
	episodes := "Episodes"
	if cg {
		episodes = "Episodes (cgroup)"
	}
	share := func(r *correlate.Result, d time.Duration) *float64 {
		if r.Totals.Duration <= 0 {
			return nil
		}
		return f64(d.Seconds() / r.Totals.Duration.Seconds() * 100)
	}
	host := metric{key: "mem_stall_s", label: "Memory stall % (host)", before: f64(a.Totals.MemStall.Seconds()), after: f64(b.Totals.MemStall.Seconds()), format: sFmt, better: -1}
	host.shareBefore, host.shareAfter = share(a, a.Totals.MemStall), share(b, b.Totals.MemStall)
	stall := []metric{host}
	if cg {
		group := metric{key: "cgroup_mem_stall_s", label: "Memory stall % (cgroup)",
			before: f64(a.Totals.CgroupMemStall.Seconds()), after: f64(b.Totals.CgroupMemStall.Seconds()), format: sFmt, better: -1}
		group.shareBefore, group.shareAfter = share(a, a.Totals.CgroupMemStall), share(b, b.Totals.CgroupMemStall)
		stall = append([]metric{group}, stall...)
	}
	return append([]metric{
		{key: "duration_s", label: "Recording length", before: f64(a.Totals.Duration.Seconds()), after: f64(b.Totals.Duration.Seconds()), format: sFmt},
		{key: "requests_per_s", label: "Requests/s", before: rps(a), after: rps(b), format: func(v float64) string { return fmt.Sprintf("%.1f", v) }, better: +1},
		// A failing service can look fast: its error share comes first.
		{key: "error_pct", label: "Failed requests", before: errPct(a), after: errPct(b), format: func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, better: -1},
		{key: "mean_ms", label: "Mean latency", before: lat(a, a.Totals.Mean), after: lat(b, b.Totals.Mean), format: msFmt, better: -1},
		{key: "p99_ms", label: "p99 latency", before: lat(a, a.Totals.P99), after: lat(b, b.Totals.P99), format: msFmt, better: -1},
		{key: "spike_intervals", label: "Spike intervals %", before: spikes(a), after: spikes(b), format: nFmt, better: -1,
			shareBefore: spikeShare(a), shareAfter: spikeShare(b)},
		{key: "episodes", label: episodes, before: f64(float64(len(a.Episodes))), after: f64(float64(len(b.Episodes))), format: nFmt, better: -1,
			uneven: a.Totals.Duration != b.Totals.Duration},
		{key: "episodes_per_h", label: "Episodes per hour", before: perHour(a, float64(len(a.Episodes))), after: perHour(b, float64(len(b.Episodes))),
			format: func(v float64) string { return fmt.Sprintf("%.1f", v) }, better: -1},
	}, stall...)
}

// failuresRose reports whether the share of failed requests rose from
// before to after; latency and throughput gains then mean nothing (a
// service that refuses answers fast), and compare says so instead of
// showing them as improvements.
func failuresRose(before, after *correlate.Result) (bool, float64, float64) {
	share := func(r *correlate.Result) float64 {
		if r.Totals.Requests == 0 {
			return 0
		}
		return float64(r.Totals.Errors) / float64(r.Totals.Requests)
	}
	b, a := share(before), share(after)
	return a > b && after.Totals.Errors > 0, b * 100, a * 100
}

// failureVerdict is the line compare prints when failures rose.
func failureVerdict(before, after *correlate.Result) string {
	rose, b, a := failuresRose(before, after)
	if !rose {
		return ""
	}
	return fmt.Sprintf("Not an improvement: failed requests rose from %.1f%% to %.1f%% (%d of %d); latency and requests/s of a failing service say nothing about its health.",
		b, a, after.Totals.Errors, after.Totals.Requests)
}

// change is the relative change from before to after, in percent — of
// the share of time for a total that has one, so that a 150 s run and a
// 60 s run compare — nil when either is missing or before is zero, and
// for a count over recordings of different lengths.
func change(m metric) *float64 {
	if m.uneven {
		return nil
	}
	before, after := m.before, m.after
	if m.shareBefore != nil || m.shareAfter != nil {
		before, after = m.shareBefore, m.shareAfter
	}
	if before == nil || after == nil || *before == 0 {
		return nil
	}
	return f64((*after - *before) / *before * 100)
}

// metricValue is one side of a metric as the table and the page show
// it: "2.6% (1m35s)" for a total with its share, "-" when missing.
func metricValue(m metric, v, share *float64) string {
	if v == nil {
		return "-"
	}
	if share != nil {
		return fmt.Sprintf("%.1f%% (%s)", *share, m.format(*v))
	}
	return m.format(*v)
}

// shareKey is the JSON/CSV name of a total's share of the recording's
// length: mem_stall_s → mem_stall_pct.
func shareKey(m metric) string { return strings.TrimSuffix(m.key, "_s") + "_pct" }

func culpritNames(r *correlate.Result) string {
	if len(r.Culprits) == 0 && len(r.Undecided) > 0 {
		return "none; undecided: " + undecidedNames(r, "or")
	}
	if len(r.Culprits) == 0 {
		return "none"
	}
	var ns []string
	for _, c := range r.Culprits {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ", ")
}

// RenderCompare writes a before/after comparison of two analysed
// recordings: requests per second, mean and p99 latency, spike intervals,
// episodes, memory stall time and the culprits of each.
func RenderCompare(w io.Writer, before, after correlate.Result, f format.Format, o Options) error {
	ms := compareMetrics(&before, &after)
	rose, _, _ := failuresRose(&before, &after)
	chg := func(m metric) string {
		c := change(m)
		if c == nil {
			return ""
		}
		s := fmt.Sprintf("%+.1f%%", *c)
		if rose && m.key != "error_pct" && m.better != 0 && (*c > 0) == (m.better > 0) && *c != 0 {
			// Looks better, but more requests failed: not a gain.
			s += " (more failures)"
			if o.Color {
				return text.FgRed.Sprint(s)
			}
			return s
		}
		if o.Color && *c != 0 {
			if (*c > 0) == (m.better > 0) {
				return text.FgGreen.Sprint(s)
			}
			return text.FgRed.Sprint(s)
		}
		return s
	}
	switch f {
	case format.JSON:
		type side struct {
			Host     string              `json:"host"`
			Start    time.Time           `json:"start"`
			End      time.Time           `json:"end"`
			Metrics  map[string]*float64 `json:"metrics"`
			Culprits []string            `json:"culprits"`
		}
		mk := func(r *correlate.Result, pick, pickShare func(metric) *float64) side {
			s := side{Host: r.Host, Start: in(r, r.Start), End: in(r, r.End), Metrics: map[string]*float64{}, Culprits: []string{}}
			for _, m := range ms {
				s.Metrics[m.key] = pick(m)
				if m.shareBefore != nil || m.shareAfter != nil {
					s.Metrics[shareKey(m)] = pickShare(m)
				}
			}
			for _, c := range r.Culprits {
				s.Culprits = append(s.Culprits, c.Name)
			}
			return s
		}
		doc := struct {
			Before       side                `json:"before"`
			After        side                `json:"after"`
			ChangePct    map[string]*float64 `json:"change_pct"`
			FailuresRose bool                `json:"failures_rose"`
			Verdict      string              `json:"verdict,omitempty"`
		}{mk(&before, func(m metric) *float64 { return m.before }, func(m metric) *float64 { return m.shareBefore }),
			mk(&after, func(m metric) *float64 { return m.after }, func(m metric) *float64 { return m.shareAfter }),
			map[string]*float64{}, rose, failureVerdict(&before, &after)}
		for _, m := range ms {
			if c := change(m); c != nil {
				doc.ChangePct[m.key] = f64(math.Round(*c*10) / 10)
			} else {
				doc.ChangePct[m.key] = nil
			}
			if m.shareBefore != nil || m.shareAfter != nil {
				doc.ChangePct[shareKey(m)] = doc.ChangePct[m.key]
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case format.CSV:
		cw := csv.NewWriter(w)
		num := func(v *float64) string {
			if v == nil {
				return ""
			}
			return csvNumber(*v)
		}
		rows := [][]string{{"metric", "before", "after", "change_pct"}}
		for _, m := range ms {
			rows = append(rows, []string{m.key, num(m.before), num(m.after), num(change(m))})
			if m.shareBefore != nil || m.shareAfter != nil {
				rows = append(rows, []string{shareKey(m), num(m.shareBefore), num(m.shareAfter), num(change(m))})
			}
		}
		return cw.WriteAll(rows)
	case format.HTML:
		return renderCompareHTML(w, before, after, o)
	case format.Table, format.Markdown, "":
	default:
		return format.Unsupported(f, Formats)
	}
	// Only the culprit names can be long; they wrap on a narrow terminal.
	t := tables.New("", "BEFORE", "AFTER", "CHANGE").SetFit(1, tables.Wrap, 20).SetFit(2, tables.Wrap, 20)
	for _, m := range ms {
		t.AppendRow(m.label, metricValue(m, m.before, m.shareBefore), metricValue(m, m.after, m.shareAfter), chg(m))
	}
	t.AppendRow("Culprits", culpritNames(&before), culpritNames(&after), "")
	var b strings.Builder
	head := fmt.Sprintf("Before: %s, %s – %s\nAfter:  %s, %s – %s\n\n",
		before.Host, in(&before, before.Start).Format("2006-01-02 15:04:05"), in(&before, before.End).Format("15:04:05 MST"),
		after.Host, in(&after, after.Start).Format("2006-01-02 15:04:05"), in(&after, after.End).Format("15:04:05 MST"))
	out := t.Text(tables.Options{Width: o.Width, Color: o.Color})
	if f == format.Markdown {
		head = strings.ReplaceAll(head, "\n", "  \n")
		out = t.Markdown()
	}
	b.WriteString(head)
	b.WriteString(out + "\n")
	if v := failureVerdict(&before, &after); v != "" {
		b.WriteString("\n" + v + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
