package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/signal"
)

// The page's assets, embedded so that a report opens with no network: the
// chart library (uPlot, see assets/SOURCE) and memdiag's own script and
// style.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
)

// maxBuckets bounds the points of every chart series: a recording with
// more intervals is cut into maxBuckets buckets of equal time, each drawn
// as its minimum and its maximum in the order they occurred, so that no
// spike is lost however long the recording. A series therefore has at
// most 2×maxBuckets points (4,000: one per pixel of a wide screen, twice),
// and the page stays under 1.5 MB whatever the recording's length (a day
// at 1 s: docs/benchmarks.md).
const maxBuckets = 2000

// topProcs is how many processes a hover lists per bucket.
const topProcs = 3

// Okabe–Ito colours, distinguishable with every common colour-vision
// deficiency (https://jfly.uni-koeln.de/color/), readable on light and
// dark backgrounds (their black is left out).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"}

// num is a chart value: null when NaN, else 6 significant digits.
type num float64

func (v num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(v), 'g', 6, 64), nil
}

// xnum is a time on the x axis in seconds, to the millisecond.
type xnum float64

func (v xnum) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, math.Round(float64(v)*1000)/1000, 'f', -1, 64), nil
}

// pageData is what the page's script draws, as JSON in the page.
type pageData struct {
	Kind string `json:"kind"` // "analyze" or "compare"
	// Relative: x is seconds since each run's start (compare); else
	// seconds since the epoch shifted by the recording's UTC offset, so
	// that the page shows the recording's wall-clock times.
	Relative bool   `json:"relative"`
	Zone     string `json:"zone"`
	// BucketSeconds is the bucket width when downsampled (2 points per
	// bucket), 0 when every interval is a point.
	BucketSeconds float64       `json:"bucket_s"`
	X             []xnum        `json:"x"`
	Runs          []string      `json:"runs"` // run labels ("" for analyze)
	Charts        []chartSpec   `json:"charts"`
	Top           [][]string    `json:"top"` // per run, per bucket (or interval): the top processes by I/O
	Episodes      []bandSpec    `json:"episodes"`
	Firings       []markerSpec  `json:"firings"`
	Rows          []bandSpec    `json:"rows"` // the timeline table's rows, in its order
	Missing       []string      `json:"missing,omitempty"`
	Headline      []headlineRow `json:"headline,omitempty"`
}

type chartSpec struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	Units  [2]string    `json:"units"` // left and right axis: "ms", "%", "B", "B/s", "/s", "s/s"
	Series []seriesSpec `json:"series"`
	Note   string       `json:"note,omitempty"`
}

type seriesSpec struct {
	Label  string `json:"label"`
	Axis   int    `json:"axis"` // 0 left, 1 right
	Color  string `json:"color"`
	Dash   bool   `json:"dash,omitempty"`
	Run    int    `json:"run"`
	Values []num  `json:"values"`
}

type bandSpec struct {
	From  xnum   `json:"from"`
	To    xnum   `json:"to"`
	Label string `json:"label"`
	Run   int    `json:"run"`
	Spike bool   `json:"spike,omitempty"`
}

type markerSpec struct {
	At     xnum   `json:"at"`
	Label  string `json:"label"`
	Run    int    `json:"run"`
	Missed bool   `json:"missed,omitempty"` // no episode followed it
}

type headlineRow struct {
	Label  string `json:"label"`
	Before string `json:"before"`
	After  string `json:"after"`
	Change string `json:"change"`
	Better string `json:"better"` // "better", "worse" or ""
}

// cardCulprits is how many culprits the headline card names; the verdict
// below has them all.
const cardCulprits = 3

// verdictCard is the headline card at the top of an analysis page: the
// verdict's own sentences (text.go's verdict, as Markdown, rendered), so
// that the page and the text report say the same thing in the same words.
type verdictCard struct {
	// Lead is the verdict's paragraphs before its first culprit: the
	// whole verdict when it names none ("No episode: …", "No culprit:
	// …", "Sustained memory pressure: …"), else what comes first (the
	// failing load, sustained pressure, "Together, … explain …").
	Lead     []template.HTML
	Culprits []cardCulprit
	More     int    // culprits named in the verdict but not in the card
	Victim   string // victimLine: "Victim: websvc (pid 4242), …"; "" when not looked for
}

// cardCulprit is one culprit's verdict lines: its title (name, kind,
// confidence), what it explains (episodes and spike episodes) and what to
// do.
type cardCulprit struct {
	Title, Explains template.HTML
	Advice          []template.HTML
}

var culpritTitle = regexp.MustCompile(`^(\d+)\. `)

// newVerdictCard takes the card's lines from the Markdown verdict: the
// paragraphs before the first culprit, then per culprit its numbered
// title line, the line after it (Explains …) and the items of its "What
// to do:". The jobs the verdict does not name are left to the verdict.
func newVerdictCard(r *correlate.Result) (*verdictCard, error) {
	rc := *r
	rc.NotRun = nil
	var b strings.Builder
	verdict(&b, &rc, true, "- ")
	c := &verdictCard{Victim: victimLine(r)}
	var para []string
	flush := func() error {
		if len(para) > 0 && len(c.Culprits) == 0 {
			h, err := markdownHTML(strings.Join(para, "\n"), false)
			if err != nil {
				return err
			}
			c.Lead = append(c.Lead, template.HTML(h))
		}
		para = nil
		return nil
	}
	lines := strings.Split(b.String(), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !culpritTitle.MatchString(l) {
			if strings.TrimSpace(l) == "" {
				if err := flush(); err != nil {
					return nil, err
				}
			} else if len(c.Culprits) == 0 {
				para = append(para, l)
			}
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if len(c.Culprits) == cardCulprits {
			c.More++
			continue
		}
		var cu cardCulprit
		var err error
		if cu.Title, err = inlineHTML(culpritTitle.ReplaceAllString(l, "")); err != nil {
			return nil, err
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "   ") && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), evidenceLabel) {
			i++
			if cu.Explains, err = inlineHTML(lines[i]); err != nil {
				return nil, err
			}
		}
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != adviceLabel && !culpritTitle.MatchString(lines[i+1]) && strings.HasPrefix(lines[i+1], " ") {
			i++
		}
		if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == adviceLabel {
			i++
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "   - ") {
				i++
				a, err := inlineHTML(strings.TrimPrefix(lines[i], "   - "))
				if err != nil {
					return nil, err
				}
				cu.Advice = append(cu.Advice, a)
			}
		}
		c.Culprits = append(c.Culprits, cu)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return c, nil
}

// inlineHTML renders one line of Markdown as HTML without its paragraph.
func inlineHTML(md string) (template.HTML, error) {
	h, err := markdownHTML(strings.TrimSpace(md), false)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(h))
	s = strings.TrimSuffix(strings.TrimPrefix(s, "<p>"), "</p>")
	return template.HTML(s), nil
}

// quantity is one line of a chart, read from a trace.
type quantity struct {
	label string
	axis  int
	value func(t *correlate.Trace, i int) float64 // NaN: not measured
	known func(t *correlate.Trace) bool
}

func traceColumn(c correlate.TraceColumn, scale float64) (func(*correlate.Trace, int) float64, func(*correlate.Trace) bool) {
	return func(t *correlate.Trace, i int) float64 { return t.Columns[c][i] * scale },
		func(t *correlate.Trace) bool { return t.Known(c) }
}

func col(label string, axis int, c correlate.TraceColumn, scale float64) quantity {
	v, k := traceColumn(c, scale)
	return quantity{label, axis, v, k}
}

// chartDef is one chart: its quantities on one time axis.
type chartDef struct {
	id, title string
	units     [2]string
	qs        []quantity
}

// charts lists the report's charts in page order.
func charts(stat correlate.Stat) []chartDef {
	dt := func(t *correlate.Trace, i int) float64 {
		start := t.Start
		if i > 0 {
			start = t.End[i-1]
		}
		return t.End[i].Sub(start).Seconds()
	}
	hasReq := func(t *correlate.Trace) bool {
		for i := range t.Latency {
			if t.HasLatency(i) {
				return true
			}
		}
		return false
	}
	return []chartDef{
		{"latency", "Latency (" + string(stat) + " per interval) and failed requests", [2]string{"ms", "/s"}, []quantity{
			{string(stat) + " latency", 0, func(t *correlate.Trace, i int) float64 {
				if !t.HasLatency(i) {
					return math.NaN()
				}
				return float64(t.Latency[i]) / 1e6
			}, hasReq},
			{"failed requests/s", 1, func(t *correlate.Trace, i int) float64 {
				if d := dt(t, i); d > 0 && t.Requests[i] > 0 {
					return float64(t.Errors[i]) / d
				}
				return math.NaN()
			}, hasReq},
		}},
		{"psi", "Memory PSI (share of wall time stalled)", [2]string{"%", ""}, []quantity{
			col("host some", 0, correlate.TraceMemSome, 100),
			col("host full", 0, correlate.TraceMemFull, 100),
			col("cgroup some", 0, correlate.TraceCgMemSome, 100),
			col("cgroup full", 0, correlate.TraceCgMemFull, 100),
		}},
		{"lru", "File LRU (page cache) size and its drops", [2]string{"B", "B/s"}, []quantity{
			col("file LRU", 0, correlate.TraceFileLRU, 1),
			col("file LRU drop", 1, correlate.TraceLRUDrop, 1),
		}},
		// Titles of the vmstat signals from their catalogue; the reclaim
		// lines are correlate's direct_reclaim and limit_reclaim, the
		// catalogue's DirectReclaim and LimitReclaim.
		{"reclaim", "Refaults, " + signal.DirectReclaim.Title + " and " + signal.LimitReclaim.Title, [2]string{"/s", ""}, []quantity{
			col(fmt.Sprintf("%s + %s (%s)", signal.RefaultFile.Title, signal.RefaultAnon.Title, signal.RefaultFile.RateUnit()), 0, correlate.TraceRefault, 1),
			col(fmt.Sprintf("%s (%s)", signal.DirectReclaim.Title, signal.DirectReclaim.RateUnit()), 0, correlate.TraceDirectReclaim, 1),
			col(fmt.Sprintf("%s (%s)", signal.LimitReclaim.Title, signal.LimitReclaim.RateUnit()), 0, correlate.TraceLimitReclaim, 1),
		}},
		{"disk", "Disk I/O and I/O time", [2]string{"B/s", "s/s"}, []quantity{
			col("disk read", 0, correlate.TraceDiskRead, 1),
			col("disk write", 0, correlate.TraceDiskWrite, 1),
			col("I/O time", 1, correlate.TraceIOTime, 1),
		}},
		{"swap", strings.ToUpper(signal.SwapOut.Title[:1]) + signal.SwapOut.Title[1:], [2]string{"B/s", ""}, []quantity{
			col(signal.SwapOut.Title, 0, correlate.TraceSwapOut, 1),
		}},
	}
}

// sampling maps a run's intervals onto the page's x points.
type sampling struct {
	// per bucket b, intervals [from[b], to[b]); nil: every interval is a
	// point.
	from, to []int
}

// grid cuts (t0, t0+span] into n buckets and assigns the intervals of t
// whose end is at x(i) to them.
func grid(t *correlate.Trace, x func(i int) float64, t0, span float64, n int) sampling {
	s := sampling{from: make([]int, n), to: make([]int, n)}
	i := 0
	for b := range n {
		hi := t0 + span*float64(b+1)/float64(n)
		s.from[b] = i
		for i < t.Len() && (x(i) <= hi || b == n-1) {
			i++
		}
		s.to[b] = i
	}
	return s
}

// values is q over t's intervals, as points: per bucket its minimum and
// maximum in the order they occurred (NaN for an empty bucket).
func (s sampling) values(t *correlate.Trace, q quantity) []num {
	if s.from == nil {
		out := make([]num, t.Len())
		for i := range out {
			out[i] = num(q.value(t, i))
		}
		return out
	}
	out := make([]num, 0, 2*len(s.from))
	for b := range s.from {
		lo, hi := math.NaN(), math.NaN()
		loAt, hiAt := 0, 0
		for i := s.from[b]; i < s.to[b]; i++ {
			v := q.value(t, i)
			if math.IsNaN(v) {
				continue
			}
			if math.IsNaN(lo) || v < lo {
				lo, loAt = v, i
			}
			if math.IsNaN(hi) || v > hi {
				hi, hiAt = v, i
			}
		}
		if hiAt < loAt {
			lo, hi = hi, lo
		}
		out = append(out, num(lo), num(hi))
	}
	return out
}

// top lists the top processes of each point's bucket.
func (s sampling) top(t *correlate.Trace) []string {
	line := func(from, to int) string {
		var ps []string
		for _, p := range t.Top(from, to, topProcs) {
			pid := p.PID
			if p.Reaped {
				pid = p.PPID // "exited threads or children of sh[4100]": which sh
			}
			ps = append(ps, fmt.Sprintf("%s[%d] %s", p.Comm, pid, correlate.FormatBytes(p.Bytes())))
		}
		return strings.Join(ps, ", ")
	}
	if s.from == nil {
		out := make([]string, t.Len())
		for i := range out {
			out[i] = line(i, i+1)
		}
		return out
	}
	out := make([]string, len(s.from))
	for b := range s.from {
		out[b] = line(s.from[b], s.to[b])
	}
	return out
}

// clock turns times into the page's x values for one run.
type clock struct {
	relative bool
	origin   time.Time
	loc      *time.Location
}

func (c clock) x(t time.Time) float64 {
	if c.relative {
		return t.Sub(c.origin).Seconds()
	}
	_, off := t.In(c.loc).Zone()
	return float64(t.UnixMilli())/1000 + float64(off)
}

// addRun adds run's chart series, episodes and firings to d.
func addRun(d *pageData, defs []chartDef, run int, r *correlate.Result, t *correlate.Trace, s sampling, c clock, label string) {
	for ci, def := range defs {
		ch := &d.Charts[ci]
		for qi, q := range def.qs {
			if !q.known(t) {
				continue
			}
			l := q.label
			if label != "" {
				l = label + ": " + l
			}
			ch.Series = append(ch.Series, seriesSpec{Label: l, Axis: q.axis, Color: palette[qi%len(palette)], Dash: run > 0, Run: run, Values: s.values(t, q)})
		}
	}
	d.Top = append(d.Top, s.top(t))
	prefix := ""
	if label != "" {
		prefix = label + " "
	}
	for _, e := range r.Episodes {
		d.Episodes = append(d.Episodes, bandSpec{From: xnum(c.x(e.Start)), To: xnum(c.x(e.End)), Label: fmt.Sprintf("%sepisode %d", prefix, e.Index+1), Run: run, Spike: e.Spike})
	}
	// The culprits' firings as the verdict weighed them (Proof): those
	// followed by an episode credited to the job, and those not.
	var ms []markerSpec
	for i, cu := range slices.Concat(r.Culprits, r.Undecided) {
		if i >= len(r.Culprits) {
			cu.Name += " (undecided)"
		}
		if cu.Proof == nil || !cu.Proof.FiringsUsed {
			continue
		}
		for _, f := range cu.Proof.FiringsMatched {
			ms = append(ms, markerSpec{At: xnum(c.x(f)), Label: prefix + cu.Name, Run: run})
		}
		for _, f := range cu.Proof.FiringsMissed {
			ms = append(ms, markerSpec{At: xnum(c.x(f)), Label: prefix + cu.Name + " (no episode)", Run: run, Missed: true})
		}
	}
	slices.SortStableFunc(ms, func(a, b markerSpec) int { return cmp.Compare(a.At, b.At) })
	d.Firings = append(d.Firings, ms...)
}

// newPage builds the charts' data of one run (analyze) or two (compare,
// on one relative axis).
func newPage(kind string, rs []*correlate.Result, ts []*correlate.Trace, labels []string) *pageData {
	d := &pageData{Kind: kind, Relative: len(rs) > 1, Runs: labels}
	defs := charts(rs[0].Stat)
	for _, def := range defs {
		d.Charts = append(d.Charts, chartSpec{ID: def.id, Title: def.title, Units: def.units})
	}
	clocks := make([]clock, len(rs))
	n, span, coarsest := 0, 0.0, 0.0
	for i, r := range rs {
		clocks[i] = clock{relative: d.Relative, origin: ts[i].Start, loc: r.Location}
		if clocks[i].loc == nil {
			clocks[i].loc = time.UTC
		}
		n = max(n, ts[i].Len())
		if l := ts[i].Len(); l > 0 {
			s := ts[i].End[l-1].Sub(ts[i].Start).Seconds()
			span = max(span, s)
			coarsest = max(coarsest, s/float64(l))
		}
	}
	if !d.Relative {
		d.Zone = in(rs[0], rs[0].Start).Format("MST (UTC-07:00)")
	}
	samplings := make([]sampling, len(rs))
	switch {
	case n == 0:
		// Nothing recorded: no points, every chart says so.
	case n > 2*maxBuckets || d.Relative:
		// Buckets on one grid: the runs share the x values. A bucket is
		// at least the coarsest run's mean interval, so that no run has
		// empty buckets (gaps) between its samples.
		nb := maxBuckets
		if coarsest > 0 {
			nb = min(nb, int(span/coarsest))
		}
		nb = max(nb, 1)
		t0 := 0.0
		if !d.Relative {
			t0 = clocks[0].x(ts[0].Start)
		}
		for b := range nb {
			lo := t0 + span*float64(b)/float64(nb)
			w := span / float64(nb)
			d.X = append(d.X, xnum(lo+w/4), xnum(lo+3*w/4))
		}
		for i := range rs {
			c := clocks[i]
			t := ts[i]
			samplings[i] = grid(t, func(j int) float64 { return c.x(t.End[j]) }, t0, span, nb)
		}
		d.BucketSeconds = span / float64(nb)
	default:
		for _, e := range ts[0].End {
			d.X = append(d.X, xnum(clocks[0].x(e)))
		}
	}
	for i, r := range rs {
		label := ""
		if len(labels) > i {
			label = labels[i]
		}
		addRun(d, defs, i, r, ts[i], samplings[i], clocks[i], label)
	}
	for ci, def := range defs {
		if len(d.Charts[ci].Series) == 0 {
			d.Missing = append(d.Missing, def.title)
			d.Charts[ci].Note = "The recording has no data for this chart."
		}
	}
	if !d.Relative {
		for _, e := range timelineRows(rs[0]) {
			d.Rows = append(d.Rows, bandSpec{From: xnum(clocks[0].x(e.Start)), To: xnum(clocks[0].x(e.End)), Spike: e.Spike})
		}
	}
	return d
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="memdiag">
<title>{{.Title}}</title>
<style>{{.UplotCSS}}</style>
<style>{{.CSS}}</style>
</head>
<body data-kind="{{.Data.Kind}}">
<header>
<h1>{{.Title}}</h1>
<p class="sub">{{.Sub}}</p>
</header>
{{if .Data.Headline}}<section id="headline" aria-label="Headline numbers">
{{range .Data.Headline}}<div class="card {{.Better}}"><div class="label">{{.Label}}</div><div class="vals"><span class="before">{{.Before}}</span> → <span class="after">{{.After}}</span></div><div class="change">{{.Change}}</div></div>
{{end}}</section>{{end}}
{{with .Card}}<section id="verdict-card" aria-labelledby="verdict-card-h">
<h2 id="verdict-card-h">Verdict</h2>
{{if .Victim}}<p class="victim">{{.Victim}}</p>
{{end}}{{range .Lead}}<div class="lead">{{.}}</div>
{{end}}{{if .Culprits}}<ol class="culprits">
{{range .Culprits}}<li><p class="culprit">{{.Title}}</p>{{if .Explains}}
<p class="explains">{{.Explains}}</p>{{end}}{{if .Advice}}
<p class="label">What to do:</p>
<ul class="advice">
{{range .Advice}}<li>{{.}}</li>
{{end}}</ul>{{end}}</li>
{{end}}</ol>
{{end}}<p class="more">{{if .Culprits}}Evidence{{if .More}} and {{.More}} more culprits{{end}}{{else}}In full{{end}}: <a href="#verdict">the verdict</a>, below the charts.</p>
</section>
{{end}}<section id="charts" aria-label="Charts">
<p class="help">Drag across a chart to zoom all charts; double-click to zoom out. {{if .Data.Relative}}Time is relative to each recording's start; the after run is dashed.{{else}}Times are {{.Data.Zone}}.{{end}} Shaded: episodes.{{if .Data.Firings}} Dashed lines: firings of the culprits' jobs; dotted: a firing no episode followed.{{end}}{{if .Data.BucketSeconds}} Each point pair is the minimum and maximum of {{.Bucket}}.{{end}}</p>
<div id="hover" aria-live="polite"></div>
{{range .Data.Charts}}<figure class="chart" id="chart-{{.ID}}" data-chart="{{.ID}}">
<figcaption>{{.Title}}</figcaption>
{{if .Note}}<p class="note">{{.Note}}</p>{{else}}<div class="plot" role="img" aria-label="Chart: {{.Title}}. Its values are in the data table below it."></div>
<details class="data"><summary>Data table: {{.Title}}</summary><div class="table"></div></details>{{end}}
</figure>
{{end}}</section>
<main id="report">
{{.Body}}
</main>
<footer><p>memdiag report. Charts drawn with uPlot (MIT licence), embedded; the page loads nothing from the network.</p></footer>
<script type="application/json" id="memdiag-data">{{.JSON}}</script>
<script>{{.UplotJS}}</script>
<script>{{.JS}}</script>
</body>
</html>
`))

// fillEmpty makes every list the page's script reads an empty array, not
// null: a recording without episodes, latency or firings has nil slices,
// which encoding/json writes as null, and the script maps over each.
func (d *pageData) fillEmpty() {
	if d.X == nil {
		d.X = []xnum{}
	}
	if d.Runs == nil {
		d.Runs = []string{}
	}
	if d.Charts == nil {
		d.Charts = []chartSpec{}
	}
	for i := range d.Charts {
		if d.Charts[i].Series == nil {
			d.Charts[i].Series = []seriesSpec{}
		}
		for j := range d.Charts[i].Series {
			if d.Charts[i].Series[j].Values == nil {
				d.Charts[i].Series[j].Values = []num{}
			}
		}
	}
	if d.Top == nil {
		d.Top = [][]string{}
	}
	for i := range d.Top {
		if d.Top[i] == nil {
			d.Top[i] = []string{}
		}
	}
	if d.Episodes == nil {
		d.Episodes = []bandSpec{}
	}
	if d.Firings == nil {
		d.Firings = []markerSpec{}
	}
	if d.Rows == nil {
		d.Rows = []bandSpec{}
	}
}

// writePage writes the page with body (the report's Markdown rendered as
// HTML) and the charts' data.
func writePage(w io.Writer, title, sub string, card *verdictCard, body []byte, d *pageData) error {
	d.fillEmpty()
	js, err := json.Marshal(d)
	if err != nil {
		return err
	}
	bucket := ""
	if d.BucketSeconds > 0 {
		bucket = correlate.FormatDuration(time.Duration(d.BucketSeconds * float64(time.Second)).Round(time.Second))
	}
	return pageTemplate.Execute(w, map[string]any{
		"Title": title, "Sub": sub, "Card": card, "Data": d, "Bucket": bucket,
		// The data is JSON in a script element: only "</" could end it
		// early; json.Marshal escapes <, > and & already.
		"JSON":     template.JS(js),
		"Body":     template.HTML(body),
		"UplotCSS": template.CSS(uplotCSS), "CSS": template.CSS(reportCSS),
		"UplotJS": template.JS(uplotJS), "JS": template.JS(reportJS),
	})
}

// markdownHTML converts the Markdown report to HTML: GitHub tables, raw
// HTML in the source escaped (a command line is data), and the rows of
// the timeline table (the first table whose first column is TIME) given
// ids row-0, row-1, … with the time linked to the charts when link is
// set.
func markdownHTML(md string, link bool) ([]byte, error) {
	po := []parser.Option{parser.WithASTTransformers(util.Prioritized(verdictBlocks{}, 998))}
	if link {
		po = append(po, parser.WithASTTransformers(util.Prioritized(rowLinker{}, 999)))
	}
	p := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithParserOptions(po...))
	var b bytes.Buffer
	if err := p.Convert([]byte(separateBlocks(md)), &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// dropTitle removes the Markdown report's first line when it is a title
// ("# memdiag analysis of HOST").
func dropTitle(md string) string {
	if strings.HasPrefix(md, "# ") {
		if _, rest, ok := strings.Cut(md, "\n"); ok {
			return rest
		}
	}
	return md
}

// Labels of a culprit's blocks in the verdict (text.go's verdict).
const (
	evidenceLabel = "Evidence:"
	adviceLabel   = "What to do:"
)

// separateBlocks puts a blank line before each culprit's "Evidence:" and
// "What to do:" in the Markdown verdict. The Markdown has none (it reads
// as the text report), so the HTML renderer joined "What to do:" to the
// last evidence item as a lazy continuation ("p = 1.4e-05 What to do:")
// and "Evidence:" to the culprit's summary; with the blank line each is a
// paragraph of its own inside the culprit's list item, followed by its
// list (verdictBlocks gives both their classes).
func separateBlocks(md string) string {
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines)+8)
	for i, l := range lines {
		if t := strings.TrimSpace(l); i > 0 && (t == evidenceLabel || t == adviceLabel) && strings.HasPrefix(l, " ") && strings.TrimSpace(lines[i-1]) != "" {
			out = append(out, "")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// verdictBlocks gives the verdict's blocks classes the page styles: the
// "Evidence:" and "What to do:" paragraphs (class label) and the lists
// after them (evidence, advice), and the Verdict heading the id verdict,
// which the headline card links to.
type verdictBlocks struct{}

func (verdictBlocks) Transform(doc *gast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *gast.Heading:
			if n.Level == 2 && string(n.Text(src)) == "Verdict" { //nolint:staticcheck // Text is what the heading shows
				n.SetAttributeString("id", []byte("verdict"))
			}
		case *gast.Paragraph:
			list, ok := n.NextSibling().(*gast.List)
			if !ok {
				break
			}
			switch strings.TrimSpace(string(n.Text(src))) { //nolint:staticcheck // Text is what the paragraph shows
			case evidenceLabel:
				n.SetAttributeString("class", []byte("label"))
				list.SetAttributeString("class", []byte("evidence"))
			case adviceLabel:
				n.SetAttributeString("class", []byte("label"))
				list.SetAttributeString("class", []byte("advice"))
			}
		}
		return gast.WalkContinue, nil
	})
}

// rowLinker gives the timeline table's rows their ids and links.
type rowLinker struct{}

func (rowLinker) Transform(doc *gast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	done := false
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		tbl, ok := n.(*east.Table)
		if !entering || !ok || done {
			return gast.WalkContinue, nil
		}
		hdr, ok := tbl.FirstChild().(*east.TableHeader)
		if !ok || hdr.FirstChild() == nil || !strings.EqualFold(strings.TrimSpace(string(hdr.FirstChild().Text(src))), "TIME") { //nolint:staticcheck // Text is what the cell shows
			return gast.WalkSkipChildren, nil
		}
		done = true
		i := 0
		for row := hdr.NextSibling(); row != nil; row = row.NextSibling() {
			id := "row-" + strconv.Itoa(i)
			row.SetAttributeString("id", []byte(id))
			if cell := row.FirstChild(); cell != nil && cell.FirstChild() != nil {
				link := gast.NewLink()
				link.Destination = []byte("#" + id)
				link.Title = []byte("show on the charts")
				for c := cell.FirstChild(); c != nil; {
					next := c.NextSibling()
					cell.RemoveChild(cell, c)
					link.AppendChild(link, c)
					c = next
				}
				cell.AppendChild(cell, link)
			}
			i++
		}
		return gast.WalkSkipChildren, nil
	})
}

// renderHTML writes r as one self-contained HTML page: the charts of t
// (nil: none) above the Markdown report rendered as HTML.
func renderHTML(w io.Writer, r correlate.Result, t *correlate.Trace, o Options) error {
	var md bytes.Buffer
	o.Color, o.Width = false, 0
	if err := renderText(&md, r, o, true); err != nil {
		return err
	}
	// The page has its own title.
	body, err := markdownHTML(dropTitle(md.String()), true)
	if err != nil {
		return err
	}
	if t == nil {
		t = &correlate.Trace{}
	}
	card, err := newVerdictCard(&r)
	if err != nil {
		return err
	}
	d := newPage("analyze", []*correlate.Result{&r}, []*correlate.Trace{t}, nil)
	title := "memdiag analysis of " + r.Host
	sub := fmt.Sprintf("%s – %s, %s", in(&r, r.Start).Format("2006-01-02 15:04:05"), in(&r, r.End).Format("15:04:05 MST"), correlate.FormatDuration(r.End.Sub(r.Start)))
	return writePage(w, title, sub, card, body, d)
}

// renderCompareHTML writes a before/after comparison as one page: the
// headline numbers, both runs overlaid on one relative time axis, the
// comparison table and each run's report.
func renderCompareHTML(w io.Writer, before, after correlate.Result, o Options) error {
	var md bytes.Buffer
	o.Color, o.Width = false, 0
	if err := RenderCompare(&md, before, after, format.Markdown, o); err != nil {
		return err
	}
	for i, r := range []correlate.Result{before, after} {
		fmt.Fprintf(&md, "\n# %s: %s\n\n", [2]string{"Before", "After"}[i], r.Host)
		var b bytes.Buffer
		if err := renderText(&b, r, o, true); err != nil {
			return err
		}
		// One level down: the run's sections under its heading.
		md.WriteString(strings.ReplaceAll("\n"+dropTitle(b.String()), "\n## ", "\n### "))
	}
	// The runs' timelines are not linked: the charts' axis is relative.
	body, err := markdownHTML(md.String(), false)
	if err != nil {
		return err
	}
	ts := []*correlate.Trace{{}, {}}
	for i := range ts {
		if i < len(o.Traces) && o.Traces[i] != nil {
			ts[i] = o.Traces[i]
		}
	}
	d := newPage("compare", []*correlate.Result{&before, &after}, ts, []string{"before", "after"})
	for _, m := range compareMetrics(&before, &after) {
		h := headlineRow{Label: m.label, Before: metricValue(m, m.before, m.shareBefore), After: metricValue(m, m.after, m.shareAfter)}
		if c := change(m); c != nil {
			h.Change = fmt.Sprintf("%+.1f%%", *c)
			if *c != 0 && m.better != 0 {
				h.Better = map[bool]string{true: "better", false: "worse"}[(*c > 0) == (m.better > 0)]
			}
		}
		d.Headline = append(d.Headline, h)
	}
	title := fmt.Sprintf("memdiag comparison: %s before and after", before.Host)
	sub := fmt.Sprintf("before %s, %s; after %s, %s",
		in(&before, before.Start).Format("2006-01-02 15:04 MST"), correlate.FormatDuration(before.End.Sub(before.Start)),
		in(&after, after.Start).Format("2006-01-02 15:04 MST"), correlate.FormatDuration(after.End.Sub(after.Start)))
	return writePage(w, title, sub, nil, body, d)
}
