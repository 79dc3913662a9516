package report

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// flatTrace is a trace of n intervals of dt from start with every
// column at 1 (PSI shares at 0.01), no cgroup PSI, and 50 requests of
// 10 ms in each interval.
func flatTrace(start time.Time, n int, dt time.Duration) *correlate.Trace {
	t := &correlate.Trace{Start: start}
	for c := range t.Columns {
		t.Columns[c] = make([]float64, n)
	}
	for i := range n {
		t.End = append(t.End, start.Add(time.Duration(i+1)*dt))
		t.Latency = append(t.Latency, 10*time.Millisecond)
		t.Requests = append(t.Requests, 50)
		t.Errors = append(t.Errors, 0)
		for c := range t.Columns {
			t.Columns[c][i] = 1
		}
		t.Columns[correlate.TraceMemSome][i], t.Columns[correlate.TraceMemFull][i] = 0.01, 0.01
		t.Columns[correlate.TraceCgMemSome][i], t.Columns[correlate.TraceCgMemFull][i] = math.NaN(), math.NaN()
	}
	return t
}

// pageOf renders and returns the page and the data its script draws.
func pageOf(t *testing.T, render func(*bytes.Buffer) error) (string, pageJSON) {
	t.Helper()
	var b bytes.Buffer
	if err := render(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="memdiag-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data in the page")
	}
	var d pageJSON
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("page data: %v", err)
	}
	return page, d
}

// pageJSON is pageData as the page's script reads it.
type pageJSON struct {
	Relative bool       `json:"relative"`
	Zone     string     `json:"zone"`
	Bucket   float64    `json:"bucket_s"`
	X        []float64  `json:"x"`
	Top      [][]string `json:"top"`
	Charts   []struct {
		ID     string `json:"id"`
		Series []struct {
			Label  string     `json:"label"`
			Values []*float64 `json:"values"`
		} `json:"series"`
	} `json:"charts"`
	Episodes []struct {
		From, To float64
		Label    string
	} `json:"episodes"`
	Firings []struct {
		At    float64 `json:"at"`
		Label string  `json:"label"`
	} `json:"firings"`
	Rows     []struct{ From, To float64 } `json:"rows"`
	Headline []headlineRow                `json:"headline"`
}

func (d pageJSON) series(chart, label string) []*float64 {
	for _, c := range d.Charts {
		if c.ID != chart {
			continue
		}
		for _, s := range c.Series {
			if s.Label == label {
				return s.Values
			}
		}
	}
	return nil
}

// The reference result with a trace of its hour at 1 minute: the page
// holds the charts' data with one point per interval (the end of each
// interval, in seconds, UTC), the 4 episodes as bands, the firings of
// the culprits' jobs, and the timeline's 5 rows with ids and links in
// the report's HTML.
func TestRenderHTMLReference(t *testing.T) {
	r := reference()
	tr := flatTrace(r.Start, 60, time.Minute)
	tr.Columns[correlate.TraceDiskRead][13] = 95 * mib // the 12:33–12:34 interval
	tr.Latency[5] = -1                                 // no request in 12:25–12:26
	// The verdict's proof: pmlogger_check fired at 12:33 and 13:13 with
	// an episode after each and at 12:53 with none; pmlogger_farm_check
	// at 12:43.
	r.Culprits[0].Proof = &correlate.Proof{FiringsUsed: true, FiringsMatched: []time.Time{at("12:33"), at("13:13")}, FiringsMissed: []time.Time{at("12:53")}}
	r.Culprits[1].Proof = &correlate.Proof{FiringsUsed: true, FiringsMatched: []time.Time{at("12:43")}}
	page, d := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{Traces: []*correlate.Trace{tr}}) })

	if len(d.X) != 60 || d.Bucket != 0 || d.X[0] != float64(at("12:21").Unix()) {
		t.Fatalf("x: %d points from %v, bucket %v; want 60 from %d, no buckets", len(d.X), d.X[0], d.Bucket, at("12:21").Unix())
	}
	if d.Zone != "UTC (UTC+00:00)" {
		t.Errorf("zone %q", d.Zone)
	}
	read := d.series("disk", "disk read")
	// Six significant digits.
	if read == nil || *read[13] != 99614700 || *read[12] != 1 {
		t.Errorf("disk read = %v", read)
	}
	lat := d.series("latency", "p99 latency")
	if lat == nil || lat[5] != nil || *lat[4] != 10 {
		t.Errorf("latency (ms) = %v, want null at 5 and 10 at 4", lat)
	}
	if psi := d.series("psi", "host some"); psi == nil || *psi[0] != 1 {
		t.Errorf("PSI some in percent = %v, want 1", psi)
	}
	if d.series("psi", "cgroup some") != nil {
		t.Error("cgroup PSI charted though the trace has none")
	}
	if len(d.Episodes) != 4 || d.Episodes[1].From != float64(at("12:33").Unix()) || d.Episodes[1].To != float64(at("12:35").Unix()) {
		t.Errorf("episodes %+v", d.Episodes)
	}
	// In time order; the firing no episode followed is marked so.
	var fs []string
	for _, f := range d.Firings {
		fs = append(fs, time.Unix(int64(f.At), 0).UTC().Format("15:04")+" "+f.Label)
	}
	want := []string{"12:33 pmlogger_check.timer", "12:43 pmlogger_farm_check.timer", "12:53 pmlogger_check.timer (no episode)", "13:13 pmlogger_check.timer"}
	if strings.Join(fs, ", ") != strings.Join(want, ", ") {
		t.Errorf("firings %q, want %q", fs, want)
	}
	const firingsHelp = "Dashed lines: firings of the culprits' jobs"
	if !strings.Contains(page, firingsHelp) {
		t.Errorf("page with firings lacks %q", firingsHelp)
	}
	// Without weighed firings no line is drawn, and the help says none
	// is (trial s8 F-9: it promised dashed lines that were not there).
	r.Culprits[0].Proof, r.Culprits[1].Proof = nil, nil
	if page, d := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{Traces: []*correlate.Trace{tr}}) }); len(d.Firings) != 0 || strings.Contains(page, firingsHelp) {
		t.Errorf("%d firings; the page without firings says %q: %v", len(d.Firings), firingsHelp, strings.Contains(page, firingsHelp))
	}
	// 4 episodes and the lone spike at 12:50, in time order, as the
	// timeline table lists them.
	if len(d.Rows) != 5 || d.Rows[3].From != float64(at("12:50").Unix()) {
		t.Errorf("rows %+v", d.Rows)
	}
	for i := range 5 {
		if want := `<tr id="row-` + string(rune('0'+i)) + `">`; !strings.Contains(page, want) {
			t.Errorf("no %s in the page", want)
		}
	}
	if !strings.Contains(page, `<a href="#row-1" title="show on the charts">12:34</a>`) {
		t.Error("the 12:34 row's time does not link to the charts")
	}
	// The verdict and evidence of the text report, from the same renderer.
	for _, want := range []string{"<strong>pmlogger_check.timer</strong> — systemd timer", "2 of 3 firings in the recording were followed within 1m by an episode",
		"<code>systemctl disable --now pmlogger_check.timer</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// Nothing in the page loads from elsewhere: no src or href to another
// document, no stylesheet link, no @import or url(); the chart library is
// inline.
func TestRenderHTMLSelfContained(t *testing.T) {
	r := reference()
	page, _ := pageOf(t, func(b *bytes.Buffer) error {
		return Render(b, r, format.HTML, Options{Traces: []*correlate.Trace{flatTrace(r.Start, 60, time.Minute)}})
	})
	for _, bad := range []string{" src=", "<link", "@import", "url(", "<iframe", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("link to %q", m[1])
		}
	}
	if !strings.Contains(page, "var uPlot=function()") {
		t.Error("uPlot is not embedded")
	}
}

// A day at 1 s is cut into maxBuckets buckets of 43.2 s, each drawn as
// its minimum and maximum in the order they occurred: a one-interval
// spike survives, and so does a one-interval dip; the page stays under
// its 1.5 MB bound with noisy values in every column.
func TestRenderHTMLDownsample(t *testing.T) {
	r := reference()
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	r.Start, r.End, r.Intervals, r.Interval = start, start.Add(24*time.Hour), 86400, time.Second
	r.Episodes, r.LoneSpikes, r.Culprits = nil, nil, nil
	tr := flatTrace(start, 86400, time.Second)
	// Noise in every column, so that numbers take their full width.
	for c := range tr.Columns {
		for i := range tr.Columns[c] {
			tr.Columns[c][i] = 1e9 * (1 + math.Sin(float64(i*(c+1))))
		}
	}
	w := tr.Columns[correlate.TraceDiskWrite]
	for i := range w {
		w[i] = 1000
	}
	w[50_000] = 5e9 // a 1 s spike at 13:53:21 (bucket 1157)
	w[50_010] = 1   // and a dip 10 s after it, same bucket
	page, d := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{Traces: []*correlate.Trace{tr}}) })
	if len(page) > 1_500_000 {
		t.Errorf("a day's page is %d bytes, above the 1.5 MB bound", len(page))
	}
	if len(d.X) != 2*maxBuckets || d.Bucket != 43.2 {
		t.Fatalf("%d points, buckets of %v s; want %d, 43.2", len(d.X), d.Bucket, 2*maxBuckets)
	}
	vals := d.series("disk", "disk write")
	b := 50_001 * 2000 / 86400 // the bucket of the interval ending at 50,001 s
	if *vals[2*b] != 5e9 || *vals[2*b+1] != 1 {
		t.Errorf("bucket %d = %v, %v; want the spike then the dip", b, *vals[2*b], *vals[2*b+1])
	}
	if *vals[2*b+2] != 1000 || *vals[2*b+3] != 1000 {
		t.Errorf("bucket %d = %v, %v; want 1000 twice", b+1, *vals[2*b+2], *vals[2*b+3])
	}
	// The bucket's points at a quarter and three quarters of it.
	if x0 := float64(start.Unix()) + float64(b)*43.2 + 10.8; d.X[2*b] != x0 {
		t.Errorf("x of bucket %d = %v, want %v", b, d.X[2*b], x0)
	}
}

// compare puts both runs on one relative axis: each series twice, the
// episodes of both, and the headline numbers with their change.
func TestRenderCompareHTML(t *testing.T) {
	a, b := reference(), reference()
	b.Totals.RequestsPerSec, b.Totals.Mean = 95.9, 517500*time.Microsecond
	b.Start, b.End = b.Start.Add(24*time.Hour), b.End.Add(24*time.Hour)
	b.Episodes, b.Culprits = b.Episodes[:1], nil
	ta, tb := flatTrace(a.Start, 60, time.Minute), flatTrace(b.Start, 30, 2*time.Minute)
	tb.Columns[correlate.TraceSwapOut][0] = 7
	_, d := pageOf(t, func(w *bytes.Buffer) error {
		return RenderCompare(w, a, b, format.HTML, Options{Traces: []*correlate.Trace{ta, tb}})
	})
	// Buckets of 2 minutes, after's interval: 30 of them over the hour.
	if !d.Relative || len(d.X) != 2*30 || d.X[0] != 30 || d.X[1] != 90 {
		t.Fatalf("relative %v, %d points, x %v…", d.Relative, len(d.X), d.X[:2])
	}
	after := d.series("swap", "after: swap-out")
	if len(after) != 60 || *after[0] != 7 || *after[1] != 7 || *after[2] != 1 || *after[59] != 1 {
		t.Fatalf("after: swap-out = %v", after)
	}
	if len(d.Episodes) != 5 {
		t.Errorf("%d episode bands, want 4 + 1", len(d.Episodes))
	}
	got := map[string]headlineRow{}
	for _, h := range d.Headline {
		got[h.Label] = h
	}
	if h := got["Requests/s"]; h.Before != "80.4" || h.After != "95.9" || h.Change != "+19.3%" || h.Better != "better" {
		t.Errorf("requests/s card %+v", h)
	}
	if h := got["Mean latency"]; h.Before != "617.3ms" || h.After != "517.5ms" || h.Change != "-16.2%" || h.Better != "better" {
		t.Errorf("mean card %+v", h)
	}
}

// Without a trace (or with an empty recording) the page still renders:
// each chart says it has no data, and the report's text is there.
func TestRenderHTMLNoData(t *testing.T) {
	empty := correlate.Result{Host: "h", Warnings: []correlate.Warning{{Kind: correlate.WarnTooFewSamples}}}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"analyze, no trace": func(b *bytes.Buffer) error { return Render(b, reference(), format.HTML, Options{}) },
		"analyze, empty": func(b *bytes.Buffer) error {
			return Render(b, empty, format.HTML, Options{Traces: []*correlate.Trace{{}}})
		},
		"compare, empty": func(b *bytes.Buffer) error { return RenderCompare(b, empty, empty, format.HTML, Options{}) },
		"compare, one trace": func(b *bytes.Buffer) error {
			return RenderCompare(b, reference(), empty, format.HTML, Options{Traces: []*correlate.Trace{flatTrace(at("12:20"), 60, time.Minute)}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			page, d := pageOf(t, render)
			note := `<p class="note">The recording has no data for this chart.</p>`
			if len(d.Charts) != 6 || strings.Count(page, note) != 6-countCharted(d) {
				t.Errorf("%d charts, %d with data, notes: %d", len(d.Charts), countCharted(d), strings.Count(page, note))
			}
			if !strings.Contains(page, "</main>") {
				t.Error("no report text")
			}
		})
	}
}

func countCharted(d pageJSON) int {
	n := 0
	for _, c := range d.Charts {
		if len(c.Series) > 0 {
			n++
		}
	}
	return n
}

// TestScheduleAsterisksSurvive: a calendar or cron schedule's asterisks
// are text, not emphasis: Markdown puts the schedule in a code span and
// escapes the evidence line, so the HTML page (rendered from that
// Markdown) shows "*:*:0/20" and never <em>.
func TestScheduleAsterisksSurvive(t *testing.T) {
	r := reference()
	r.Culprits[0].Job.Schedule = []string{"*:*:0/20"}
	r.Culprits[1].Job.Schedule = []string{"*/5 * * * *"}
	var md bytes.Buffer
	if err := Render(&md, r, format.Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Fires every 20m (`*:*:0/20`)", `fires every 20m (\*:\*:0/20), defined in /lib/systemd/system/pmlogger\_check.timer`,
		"Fires every 20m (`*/5 * * * *`)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	page, _ := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{}) })
	for _, want := range []string{"Fires every 20m (<code>*:*:0/20</code>)", "fires every 20m (*:*:0/20), defined in /lib/systemd/system/pmlogger_check.timer",
		"Fires every 20m (<code>*/5 * * * *</code>)"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<em>") {
		t.Error("the page has emphasis (<em>) from a schedule's asterisks")
	}
}

// The page's top processes count the I/O of children a process reaped
// unseen, as the text and JSON do: sh 7000 writes 1 MiB itself and reaps
// 64 MiB of children between two scans.
func TestRenderHTMLTopReaped(t *testing.T) {
	d := htmlTop(t, fourSamples(func(i int, s *record.Sample) {
		if i == 2 {
			s.Procs = []record.ProcIO{{PID: 7000, PPID: 1, StartTicks: 7000, Comm: "sh", WriteBytes: mib, DeltaWriteBytes: mib, DeltaReapedWriteBytes: 64 * mib}}
		}
	}))
	if got, want := d.Top[0][1], "exited threads or children of sh[7000] 64.0 MiB, sh[7000] 1.0 MiB"; got != want {
		t.Errorf("top of the interval ending 12:00:02: %q; want %q", got, want)
	}
}

// The per-process list counts what the text and JSON count: a process
// that lived between two samples is in no row, only in its exit record
// (taskstats: dd 8100, 32 MiB); one seen before exits with more than its
// last row held (postgres 12: 8 MiB seen at 12:00:01, 20 MiB at its exit
// before 12:00:02: 12 MiB in that interval, counted once).
func TestRenderHTMLTopExitOnly(t *testing.T) {
	start := at("12:00")
	rec := fourSamples(func(i int, s *record.Sample) {
		switch i {
		case 1:
			s.Procs = []record.ProcIO{{PID: 12, PPID: 1, StartTicks: 12, Comm: "postgres", WriteBytes: 8 * mib, DeltaWriteBytes: 8 * mib}}
		case 2:
			at := start.Add(1500 * time.Millisecond)
			s.Events = []record.Event{
				{Kind: process.Exec, Time: at, Source: "connector", PID: 8100, PPID: 7000, Comm: "dd"},
				{Kind: process.Exit, Time: at.Add(100 * time.Millisecond), Source: "taskstats", PID: 8100, PPID: 7000, Comm: "dd", WriteBytes: 32 * mib},
				{Kind: process.Exit, Time: at.Add(200 * time.Millisecond), Source: "taskstats", PID: 12, PPID: 1, Comm: "postgres", WriteBytes: 20 * mib},
			}
		}
	})
	d := htmlTop(t, rec)
	if got, want := d.Top[0][0], "postgres[12] 8.0 MiB"; got != want {
		t.Errorf("top of the interval ending 12:00:01: %q; want %q", got, want)
	}
	if got, want := d.Top[0][1], "dd[8100] 32.0 MiB, postgres[12] 12.0 MiB"; got != want {
		t.Errorf("top of the interval ending 12:00:02: %q; want %q", got, want)
	}
}

// htmlTop renders rec's analysis and trace as the HTML page and returns the
// page's data, whose per-process list (Top) must hold two intervals at least.
// fourSamples is a recording of host h from 12:00 UTC with four empty 1 s
// samples, each filled in by fill(index, sample).
func fourSamples(fill func(i int, s *record.Sample)) *record.Recording {
	start := at("12:00")
	rec := &record.Recording{Header: record.Header{Type: record.TypeHeader, Format: record.FormatName, SchemaVersion: record.SchemaVersion,
		Host: "h", Start: start, Interval: time.Second, PageSize: 4096, TimeZone: "UTC"}}
	for i := range 4 {
		s := record.Sample{Type: record.TypeSample, Seq: i, Time: start.Add(time.Duration(i) * time.Second)}
		fill(i, &s)
		rec.Samples = append(rec.Samples, s)
	}
	return rec
}

func htmlTop(t *testing.T, rec *record.Recording) pageJSON {
	t.Helper()
	sr := correlate.NewSeries(rec.Header)
	for i := range rec.Samples {
		sr.Add(&rec.Samples[i])
	}
	res := sr.Analyze(correlate.Options{})
	tr := sr.Trace(&res, correlate.Options{})
	_, d := pageOf(t, func(b *bytes.Buffer) error {
		return Render(b, res, format.HTML, Options{Traces: []*correlate.Trace{tr}})
	})
	if len(d.Top) == 0 || len(d.Top[0]) < 2 {
		t.Fatalf("top %q", d.Top)
	}
	return d
}

// Issue 31: the page glued "What to do:" to the last evidence item ("p =
// 1.4e-05 What to do:"), a lazy continuation of the Markdown list. Each
// culprit's evidence and advice are blocks of their own, each list after
// its label, and the Verdict heading is the card's link target.
func TestRenderHTMLVerdictBlocks(t *testing.T) {
	r := reference()
	page, _ := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{}) })
	page = page[strings.Index(page, `<main id="report">`):] // the full verdict, not the card
	if n := strings.Count(page, "<p class=\"label\">Evidence:</p>\n<ul class=\"evidence\">"); n != len(r.Culprits) {
		t.Errorf("%d evidence blocks, want %d", n, len(r.Culprits))
	}
	if n := strings.Count(page, "<p class=\"label\">What to do:</p>\n<ul class=\"advice\">"); n != len(r.Culprits) {
		t.Errorf("%d advice blocks, want %d", n, len(r.Culprits))
	}
	if regexp.MustCompile(`\S[ \n]What to do:`).MatchString(page) {
		t.Error("\"What to do:\" is joined to the text before it")
	}
	if !strings.Contains(page, `<h2 id="verdict">Verdict</h2>`) {
		t.Error("no Verdict heading with id verdict")
	}
}

// cardOf is the headline card's HTML in page, "" without one.
func cardOf(page string) string {
	from := strings.Index(page, `<section id="verdict-card"`)
	if from < 0 {
		return ""
	}
	to := strings.Index(page[from:], "</section>")
	return page[from : from+to]
}

// Issue 31: the answer first. The analysis page opens with a card holding
// the verdict in the verdict's own words (the text report's sentences,
// never a second wording): the culprits' titles (name, kind, confidence),
// what each explains (episodes, spike episodes) and what to do; when none
// is named, what the verdict says instead; and the victim when recorded.
func TestRenderHTMLVerdictCard(t *testing.T) {
	page, _ := pageOf(t, func(b *bytes.Buffer) error { return Render(b, reference(), format.HTML, Options{}) })
	card := cardOf(page)
	if card == "" || strings.Index(page, `<section id="verdict-card"`) > strings.Index(page, `<section id="charts"`) {
		t.Fatal("no headline card before the charts")
	}
	var md bytes.Buffer
	if err := Render(&md, reference(), format.Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<p class="culprit"><strong>pmlogger_check.timer</strong> — systemd timer, medium confidence (0.72)</p>`,
		`<p class="explains">Explains 2 of 4 episodes (50%) and 2 of 3 spike episodes; 2 of its 3 firings were followed by an episode.</p>`,
		`<li>confirm: <code>systemctl disable --now pmlogger_check.timer</code> for one test run; the episodes it explains should disappear</li>`,
		`<a href="#verdict">the verdict</a>`,
	} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	// The same words as the Markdown verdict's lines.
	for _, want := range []string{"1. **pmlogger_check.timer** — systemd timer, medium confidence (0.72)",
		"   Explains 2 of 4 episodes (50%) and 2 of 3 spike episodes; 2 of its 3 firings were followed by an episode."} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown verdict lacks %q: the card's lines are not the verdict's", want)
		}
	}
	if strings.Contains(card, "Victim:") || strings.Contains(card, "Not named") {
		t.Error("card names a victim the recording lacks, or the jobs not named")
	}

	for _, tc := range []struct {
		name  string
		edit  func(r *correlate.Result)
		want  string
		wantN int // culprits in the card
	}{
		{"no culprit", func(r *correlate.Result) { r.Culprits = nil }, "<p>No culprit: 4 episodes, no periodic pattern,", 0},
		{"no episode", func(r *correlate.Result) { r.Culprits, r.Episodes, r.LoneSpikes, r.Period = nil, nil, nil, nil }, "<p>No episode:", 0},
		{"sustained", func(r *correlate.Result) {
			r.Culprits, r.Episodes, r.LoneSpikes, r.Period = nil, nil, nil, nil
			r.Sustained = &correlate.Sustained{Scope: correlate.PSIHost, MeanShare: 0.1, Start: r.Start, End: r.End, Intervals: 60, Above: 60, Level: 0.02}
		}, "<p>Sustained memory pressure: the host stalled on memory 10.0% of the time", 0},
		{"victim", func(r *correlate.Result) {
			r.Victim = &record.Victim{PID: 4242, Comm: "websvc", How: record.VictimFromProbe, Detail: "127.0.0.1:8080 is a listening socket of websvc (pid 4242)"}
		}, `<p class="victim">Victim: websvc (pid 4242), found from --probe: 127.0.0.1:8080 is a listening socket of websvc (pid 4242); scope: the host</p>`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reference()
			tc.edit(&r)
			page, _ := pageOf(t, func(b *bytes.Buffer) error { return Render(b, r, format.HTML, Options{}) })
			card := cardOf(page)
			if !strings.Contains(card, tc.want) {
				t.Errorf("card lacks %q:\n%s", tc.want, card)
			}
			if n := strings.Count(card, `<p class="culprit">`); n != tc.wantN {
				t.Errorf("card names %d culprits, want %d", n, tc.wantN)
			}
		})
	}

	// compare has its headline numbers, no verdict card.
	page, _ = pageOf(t, func(b *bytes.Buffer) error { return RenderCompare(b, reference(), reference(), format.HTML, Options{}) })
	if cardOf(page) != "" {
		t.Error("compare page has a verdict card")
	}
}
