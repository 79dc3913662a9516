package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	goldenfile "github.com/memdiag/memdiag/internal/golden"
	"github.com/memdiag/memdiag/internal/testenv"
)

// chromium finds Debian's headless-capable Chromium, or skips the test
// (fails it under MEMDIAG_E2E=require, as in CI). Loading pages into a
// browser takes seconds: like the other end-to-end tests it runs only
// with MEMDIAG_E2E set.
func chromium(t *testing.T) string {
	t.Helper()
	if !testenv.Enabled() {
		t.Skip("end-to-end test skipped: it renders reports in headless Chromium; set MEMDIAG_E2E=1 to run it")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Unmet(t, "no chromium on PATH (apt-get install chromium)")
	return ""
}

// pageFigure is what the page drew for one chart, read from the DOM.
type pageFigure struct {
	ID      string `json:"id"`
	Series  int    `json:"series"`  // uPlot's legend entries, less the time
	Canvas  int    `json:"canvas"`  // drawn canvases
	Bands   int    `json:"bands"`   // episode bands in the overlay
	Markers int    `json:"markers"` // firing markers in the overlay
	Labels  int    `json:"labels"`  // marker labels
	Note    string `json:"note"`    // "no data" note instead of a plot
}

type pageState struct {
	Figures    []pageFigure `json:"figures"`
	Rows       int          `json:"rows"`      // timeline rows linked to the charts
	Cards      int          `json:"cards"`     // headline numbers (compare)
	RenderMs   float64      `json:"render_ms"` // navigation start to charts drawn
	TableRow   int          `json:"table_rows"`
	Hover      string       `json:"hover"` // the hover line over the first episode
	ZoomedTo   []float64    `json:"-"`     // x scale after following a row link
	PDF        []byte       `json:"-"`     // the page printed
	PrintWidth string       `json:"-"`     // the charts' width while printing
}

// readState is evaluated in the page once it says it is ready: it counts
// what is in the DOM, opens the first data table, and follows the first
// timeline row's link.
const readState = `(() => {
  const figs = Array.from(document.querySelectorAll("figure.chart")).map((f) => ({
    id: f.dataset.chart,
    series: Math.max(0, f.querySelectorAll(".u-legend .u-series").length - 1),
    canvas: Array.from(f.querySelectorAll("canvas")).filter((c) => c.width > 0 && c.height > 0).length,
    bands: f.querySelectorAll(".u-over .band").length,
    markers: f.querySelectorAll(".u-over .marker").length,
    labels: f.querySelectorAll(".u-over .marker .mlabel").length,
    note: (f.querySelector(".note") || {}).textContent || "",
  }));
  // Hover the middle of the first episode on the first chart.
  let hover = "";
  const plot = document.querySelector("figure.chart .u-over");
  const band = plot && plot.querySelector(".band");
  if (band) {
    const r = band.getBoundingClientRect();
    plot.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + r.width / 2, clientY: r.top + 20, bubbles: true }));
    hover = document.getElementById("hover").textContent;
  }
  const det = document.querySelector("details.data");
  let tableRows = 0;
  if (det) { det.open = true; det.dispatchEvent(new Event("toggle")); tableRows = det.querySelectorAll("tbody tr").length; }
  let zoomed = [];
  const a = document.querySelector('a[href="#row-0"]');
  if (a) {
    location.hash = "#row-0";
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  }
  return {
    figures: figs,
    rows: document.querySelectorAll('#report tr[id^="row-"] a[href^="#row-"]').length,
    cards: document.querySelectorAll("#headline .card").length,
    render_ms: Number(document.body.dataset.renderMs),
    table_rows: tableRows,
    hover: hover,
  };
})()`

// loadPage opens file in headless Chromium with no network, waits for
// the charts, and returns what the page drew and a full-page screenshot
// (PNG); it fails the test on every console error or warning, uncaught
// exception and network request that was not for the file itself. Under
// MEMDIAG_UPDATE_GOLDEN=1 it also writes the window's first 1800 pixels (the charts) to
// ../docs/NAME.png when docs is not "".
func loadPage(t *testing.T, exe, file, docs string) (pageState, []byte) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 1800),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	// The first Run starts the browser; subscriptions need it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	add := func(p string) {
		mu.Lock()
		problems = append(problems, p)
		mu.Unlock()
	}
	url := "file://" + file
	console := chromedp.Console(ctx)
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range console {
			if err != nil || lctx.Err() != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				add(m.String())
			}
		}
	})
	wg.Go(func() {
		for ev, err := range requests {
			if err != nil || lctx.Err() != nil {
				return
			}
			if u := ev.Request.URL; u != url && !strings.HasPrefix(u, "data:") {
				add("network request: " + u)
			}
		}
	})
	var st pageState
	var shot []byte
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitReady(`body[data-ready="1"]`),
	)
	if err == nil {
		shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err == nil && docs != "" && goldenfile.Updating() {
		var top []byte
		if top, err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
			err = os.WriteFile(filepath.Join("..", "docs", docs+".png"), top, 0o644)
		}
	}
	if err == nil {
		st, err = chromedp.Run(ctx, chromedp.Evaluate[pageState](readState))
	}
	if err == nil {
		// Printing: a PDF of the page, the charts narrowed to the paper
		// (the page's beforeprint handler) and back after.
		st.PDF, err = chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPrintBackground()))
	}
	if err == nil {
		st.PrintWidth, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.printWidth || ""`))
	}
	if err == nil {
		// uPlot commits a new scale in a microtask: read it after.
		st.ZoomedTo, err = chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[Number(document.body.dataset.xMin), Number(document.body.dataset.xMax)]`))
	}
	// Let late messages arrive, then stop listening.
	time.Sleep(200 * time.Millisecond)
	stop()
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		t.Fatalf("chromium: %v; page problems: %q", err, problems)
	}
	if len(problems) > 0 {
		t.Errorf("%s: %d problems in the page:\n%s", filepath.Base(file), len(problems), strings.Join(problems, "\n"))
	}
	if _, err := png.Decode(bytes.NewReader(shot)); err != nil {
		t.Errorf("screenshot is not a PNG: %v", err)
	}
	// MEMDIAG_HTML_SHOTS=DIR keeps the screenshots (CI artifacts, review).
	if dir := os.Getenv("MEMDIAG_HTML_SHOTS"); dir != "" {
		name := strings.TrimSuffix(filepath.Base(file), ".html") + ".png"
		if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
			t.Error(err)
		}
	}
	return st, shot
}

// wantFigure is a chart's expected content.
type wantFigure struct {
	series, bands, markers int
}

func checkFigures(t *testing.T, st pageState, want map[string]wantFigure) {
	t.Helper()
	if len(st.Figures) != len(want) {
		t.Errorf("%d charts, want %d: %+v", len(st.Figures), len(want), st.Figures)
	}
	first := true
	for _, f := range st.Figures {
		w, ok := want[f.ID]
		if !ok {
			t.Errorf("unexpected chart %q", f.ID)
			continue
		}
		if w.series == 0 {
			if f.Note == "" || f.Canvas != 0 {
				t.Errorf("chart %s: want a no-data note and no plot, got %+v", f.ID, f)
			}
			continue
		}
		if f.Series != w.series || f.Bands != w.bands || f.Markers != w.markers || f.Canvas == 0 {
			t.Errorf("chart %s: %d series, %d episode bands, %d firing markers, %d canvases; want %d, %d, %d and a canvas",
				f.ID, f.Series, f.Bands, f.Markers, f.Canvas, w.series, w.bands, w.markers)
		}
		// Labels on the first drawn chart only.
		if wantLabels := map[bool]int{true: w.markers, false: 0}[first]; f.Labels != wantLabels {
			t.Errorf("chart %s: %d marker labels, want %d", f.ID, f.Labels, wantLabels)
		}
		first = false
	}
}

// renderReport runs memdiag with args plus -o FILE.html and returns the
// file's path.
func renderReport(t *testing.T, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	code, _, errOut := runCmd(t, append(args, "-o", out)...)
	if code != exitOK {
		t.Fatalf("memdiag %v: exit %d: %s", args, code, errOut)
	}
	return out
}

// The reference case (correlate/testdata/union.jsonl.gz): two PCP timers
// 20 minutes apart each, offset by 10 minutes, 2 h at 30 s. The page
// draws six charts on one time axis; every chart shades the 12 episodes
// and marks the 12 firings of the two culprit timers that the verdict's
// proof weighed (pmlogger_check at :05, :25, :45 and pmlogger_farm_check
// at :15, :35, :55 of 12:00 and 13:00; 13:15's is followed by no
// episode), and its timeline table has 13 rows (12 episodes and the
// latency-only spike at 12:58:30) linked to the charts. The recording has
// host PSI only (no --cgroup): two PSI series.
func TestHTMLReportChromium(t *testing.T) {
	exe := chromium(t)
	file := renderReport(t, "union.html", "analyze", unionRec)
	st, _ := loadPage(t, exe, file, "report-reference")
	checkFigures(t, st, map[string]wantFigure{
		"latency": {2, 12, 12}, "psi": {2, 12, 12}, "lru": {2, 12, 12},
		"reclaim": {2, 12, 12}, "disk": {3, 12, 12}, "swap": {1, 12, 12},
	})
	if st.Rows != 13 {
		t.Errorf("%d timeline rows linked to the charts, want 13", st.Rows)
	}
	// The first episode (12:05:00–12:07:00) is pmlogger_check's: 60 MiB/s
	// for 30 s in the interval at its middle.
	if !strings.Contains(st.Hover, "top I/O: pmlogger_check[") || !strings.Contains(st.Hover, "1.8 GiB") {
		t.Errorf("hover over the first episode: %q, want pmlogger_check first, 1.8 GiB", st.Hover)
	}
	if !bytes.HasPrefix(st.PDF, []byte("%PDF-")) || st.PrintWidth != "680" {
		t.Errorf("printing: %d bytes of PDF (%q…), charts %q px wide; want a PDF and 680", len(st.PDF), st.PDF[:min(8, len(st.PDF))], st.PrintWidth)
	}
	// 240 intervals: one point each, one table row each.
	if st.TableRow != 240 {
		t.Errorf("data table has %d rows, want 240", st.TableRow)
	}
	// Row 0 is the first episode, 12:05:00–12:07:00 UTC (analyze
	// --format json; x is in seconds): the link zooms to it with three
	// times its length either side.
	from := float64(time.Date(2026, 3, 15, 12, 5, 0, 0, time.UTC).Unix())
	to := from + 120
	if len(st.ZoomedTo) != 2 || st.ZoomedTo[0] != from-3*120 || st.ZoomedTo[1] != to+3*120 {
		t.Errorf("row link zoomed to %v, want [%v %v]", st.ZoomedTo, from-360, to+360)
	}
	t.Logf("reference case: %d bytes, rendered in %.0f ms", fileSize(t, file), st.RenderMs)
}

// Before and after on one relative axis: the reference case against the
// in-process recording (postgres every 15 minutes, 2 h at 30 s: 8
// episodes, no job culprit, so no firing). Every chart holds each series
// twice, the after run dashed; bands for both runs' episodes; the
// headline numbers as cards.
func TestHTMLCompareChromium(t *testing.T) {
	exe := chromium(t)
	after := "../correlate/testdata/inprocess.jsonl.gz"
	var res struct {
		Episodes []json.RawMessage `json:"episodes"`
	}
	_, out, _ := runCmd(t, "analyze", after, "--format", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	bands := 12 + len(res.Episodes)
	file := renderReport(t, "compare.html", "compare", unionRec, after)
	st, _ := loadPage(t, exe, file, "")
	checkFigures(t, st, map[string]wantFigure{
		"latency": {4, bands, 12}, "psi": {4, bands, 12}, "lru": {4, bands, 12},
		"reclaim": {4, bands, 12}, "disk": {6, bands, 12}, "swap": {2, bands, 12},
	})
	// compareMetrics: length, requests/s, failed, mean, p99, spike
	// intervals, episodes, episodes per hour, memory stall.
	if st.Cards != 9 {
		t.Errorf("%d headline cards, want 9", st.Cards)
	}
	t.Logf("compare: %d bytes, %d episodes after, rendered in %.0f ms", fileSize(t, file), len(res.Episodes), st.RenderMs)
}

// A day at 1 s (bench/genrec: 86,400 samples, an hourly cron backup at
// minute 5 causing 24 episodes) is downsampled to 2,000 buckets of
// min and max: 4,000 points per series, whatever the length.
func TestHTMLDayChromium(t *testing.T) {
	exe := chromium(t)
	dir := t.TempDir()
	gen := testenv.BuildPackage(t, "github.com/memdiag/memdiag/bench/genrec", "genrec")
	rec, lat := filepath.Join(dir, "day.jsonl.gz"), filepath.Join(dir, "day.csv")
	if b, err := exec.Command(gen, "-out", rec, "-latency", lat, "-requests", "200000").CombinedOutput(); err != nil {
		t.Fatalf("genrec: %v\n%s", err, b)
	}
	file := renderReport(t, "day.html", "analyze", rec, "--latency", lat)
	size := fileSize(t, file)
	if size > 1500_000 {
		t.Errorf("a day's page is %d bytes, above the 1.5 MB bound", size)
	}
	st, _ := loadPage(t, exe, file, "")
	var eps, firings int
	for _, f := range st.Figures {
		if f.ID == "psi" {
			eps, firings = f.Bands, f.Markers
		}
	}
	if eps != 24 || firings != 24 {
		t.Errorf("%d episode bands and %d firing markers, want 24 and 24", eps, firings)
	}
	if st.TableRow != 2*2000 {
		t.Errorf("data table has %d rows, want 4000 (2000 buckets, min and max)", st.TableRow)
	}
	t.Logf("day at 1 s: %d bytes, rendered in %.0f ms", size, st.RenderMs)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A calm recording (correlate/testdata/scenarios/01-calm-host: no
// episode, no latency, no firing) still draws every chart it has data
// for. Its lists of episodes and firings are empty, and the page once
// failed on them ("Cannot read properties of null") and drew nothing.
func TestHTMLCalmChromium(t *testing.T) {
	exe := chromium(t)
	file := renderReport(t, "calm.html", "analyze", "../correlate/testdata/scenarios/01-calm-host.jsonl.gz")
	st, _ := loadPage(t, exe, file, "")
	// No latency in this recording: that chart says so; the others draw
	// their series with no band and no marker.
	checkFigures(t, st, map[string]wantFigure{
		"latency": {0, 0, 0}, "psi": {2, 0, 0}, "lru": {2, 0, 0},
		"reclaim": {2, 0, 0}, "disk": {3, 0, 0}, "swap": {1, 0, 0},
	})
}

// readLayout is evaluated in the page once it is ready: where the
// verdict card is (in page pixels), each chart's plot area (uPlot's
// .u-over), and the contrast of every visible piece of text against the
// background it is drawn on, from getComputedStyle's colours (WCAG 2
// relative luminance; backgrounds composited up the element's ancestors,
// text alpha and opacity blended over them).
const readLayout = `(() => {
  const parse = (c) => {
    let m = /^rgba?\(([^)]*)\)$/.exec(c), k = 1;
    if (!m) { m = /^color\(srgb ([^)]*)\)$/.exec(c); k = 255; }
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0] * k, p[1] * k, p[2] * k, p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const l = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const bgOf = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) layers.push(getComputedStyle(e).backgroundColor);
    let bg = [255, 255, 255, 1];
    for (const l of layers.reverse()) {
      const c = parse(l);
      if (c === null) return null;
      bg = over(c, bg);
    }
    return bg;
  };
  const card = document.getElementById("verdict-card");
  const rect = (e) => { const r = e.getBoundingClientRect(); return { top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, width: r.width }; };
  const layout = {
    card: card ? Object.assign(rect(card), { text: card.textContent }) : null,
    culprit: (() => { const c = card && card.querySelector(".culprit"); return c ? Object.assign(rect(c), { text: c.textContent }) : null; })(),
    plots: Array.from(document.querySelectorAll("figure.chart")).filter((f) => f.querySelector(".u-over")).map((f) => Object.assign(rect(f.querySelector(".u-over")), { text: f.dataset.chart })),
  };
  // The text a reader brings up is measured too: the hover line over the
  // first episode and a timeline row followed to the charts (tr.current).
  const plot = document.querySelector("figure.chart .u-over");
  const band = plot && plot.querySelector(".band");
  if (band) {
    const r = band.getBoundingClientRect();
    plot.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + r.width / 2, clientY: r.top + 20, bubbles: true }));
  }
  if (document.querySelector('a[href="#row-0"]')) {
    location.hash = "#row-0";
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  }
  const texts = [];
  const unparsed = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("script, style")) continue;
    const own = Array.from(el.childNodes).filter((n) => n.nodeType === 3 && n.textContent.trim() !== "").map((n) => n.textContent.trim()).join(" ");
    if (own === "" || el.getClientRects().length === 0) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden") continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    const fg = parse(st.color), bg = bgOf(el);
    if (fg === null || bg === null) { unparsed.push(st.color + " on " + el.tagName + "." + el.className); continue; }
    fg[3] *= opacity;
    const what = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className ? "." + el.className.trim().replace(/\s+/g, ".") : "");
    texts.push({ what: what, text: own.slice(0, 40), fg: st.color, bg: "rgb(" + bg.slice(0, 3).map(Math.round).join(", ") + ")", ratio: ratio(over(fg, bg), bg) });
  }
  return Object.assign(layout, {
    texts: texts,
    unparsed: unparsed,
    body_bg: getComputedStyle(document.body).backgroundColor,
    dark: matchMedia("(prefers-color-scheme: dark)").matches,
    current: document.querySelectorAll("tr.current").length,
    hover: (document.getElementById("hover") || {}).textContent || "",
  });
})()`

type box struct {
	Top, Bottom, Left, Width float64
	Text                     string
}

type textContrast struct {
	What, Text, FG, BG string
	Ratio              float64
}

type pageLayout struct {
	Card     *box           `json:"card"`
	Culprit  *box           `json:"culprit"`
	Plots    []box          `json:"plots"`
	Texts    []textContrast `json:"texts"`
	Unparsed []string       `json:"unparsed"`
	BodyBG   string         `json:"body_bg"`
	Dark     bool           `json:"dark"`
	Current  int            `json:"current"` // timeline rows highlighted
	Hover    string         `json:"hover"`
}

// layoutAt opens file in headless Chromium in a window of w×h with the
// light or the dark colour scheme (prefers-color-scheme, emulated), waits
// for the charts and returns readLayout's reading and a screenshot of the
// window; it fails the test on console errors and warnings.
func layoutAt(t *testing.T, exe, file string, w, h int, dark bool) (pageLayout, []byte) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(w, h),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	console := chromedp.Console(ctx)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for m, err := range console {
			if err != nil || lctx.Err() != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	})
	scheme := map[bool]string{false: "light", true: "dark"}[dark]
	var lay pageLayout
	var shot []byte
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(int64(w), int64(h)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		}),
		chromedp.Navigate("file://"+file),
		chromedp.WaitReady(`body[data-ready="1"]`),
	)
	if err == nil {
		shot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err == nil {
		lay, err = chromedp.Run(ctx, chromedp.Evaluate[pageLayout](readLayout))
	}
	time.Sleep(200 * time.Millisecond)
	stop()
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("chromium: %v; page problems: %q", err, problems)
	}
	if len(problems) > 0 {
		t.Errorf("%s, %s: problems in the page:\n%s", filepath.Base(file), scheme, strings.Join(problems, "\n"))
	}
	if lay.Dark != dark {
		t.Fatalf("the page's prefers-color-scheme: dark is %v, want %v: the emulation did not take", lay.Dark, dark)
	}
	if dir := os.Getenv("MEMDIAG_HTML_SHOTS"); dir != "" {
		name := fmt.Sprintf("%s-%dx%d-%s.png", strings.TrimSuffix(filepath.Base(file), ".html"), w, h, scheme)
		if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
			t.Error(err)
		}
	}
	return lay, shot
}

// Issue 31 item 1, the answer first and the charts on one x: at 1400×900
// the reference report's verdict card is whole within the window and
// names the culprit; every chart's plot area has the same left edge and
// width (±1 px), so a moment is one x on every chart; and all text on the
// page has a contrast ratio of 4.5:1 at least (WCAG AA) in the light and
// the dark scheme, the hover line and a followed timeline row included.
// The same holds for a calm recording (the card says there was no
// episode), one with a victim (the card names it) and a comparison (its
// headline numbers, better in green and worse in orange; no card).
func TestHTMLLayoutChromium(t *testing.T) {
	exe := chromium(t)
	for _, tc := range []struct {
		name    string
		args    []string
		culprit string   // in the card's first culprit line; "" for none
		card    []string // in the card's text; nil: no card
	}{
		{"union", []string{"analyze", unionRec}, "pmlogger_check.timer", []string{"Together, pmlogger_check.timer and pmlogger_farm_check.timer explain 11 of 12 episodes",
			"high confidence (0.99)", "Explains 6 of 12 episodes (50%) and 6 of 12 spike episodes", "What to do:", "systemctl disable --now pmlogger_check.timer"}},
		{"calm", []string{"analyze", "../correlate/testdata/scenarios/01-calm-host.jsonl.gz"}, "", []string{"No episode: no memory-pressure signal rose above its threshold"}},
		{"victim", []string{"analyze", "../correlate/testdata/scenarios/12-chain-direct-io.jsonl.gz"}, "buffered.timer", []string{"Victim: websvc (pid 200)"}},
		{"compare", []string{"compare", unionRec, "../correlate/testdata/inprocess.jsonl.gz"}, "", nil},
	} {
		file := renderReport(t, tc.name+".html", tc.args...)
		for _, dark := range []bool{false, true} {
			scheme := map[bool]string{false: "light", true: "dark"}[dark]
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				lay, _ := layoutAt(t, exe, file, 1400, 900, dark)
				checkLayout(t, lay, tc.culprit, tc.card)
				if tc.name == "union" && (lay.Current != 1 || !strings.Contains(lay.Hover, "top I/O")) {
					t.Errorf("%d timeline rows highlighted, hover %q: the measured page lacks them", lay.Current, lay.Hover)
				}
			})
		}
	}
}

func checkLayout(t *testing.T, lay pageLayout, culprit string, want []string) {
	t.Helper()
	switch c := lay.Card; {
	case want == nil && c != nil:
		t.Errorf("a verdict card: %q", c.Text)
	case want == nil:
	case c == nil:
		t.Errorf("no verdict card")
	default:
		if c.Bottom > 900 {
			t.Errorf("verdict card spans %.0f–%.0f px: not within the first 900", c.Top, c.Bottom)
		}
		for _, w := range want {
			if !strings.Contains(c.Text, w) {
				t.Errorf("the card lacks %q: %q", w, c.Text)
			}
		}
		switch {
		case culprit == "" && lay.Culprit != nil:
			t.Errorf("the card names a culprit: %q", lay.Culprit.Text)
		case culprit == "":
		case lay.Culprit == nil || !strings.Contains(lay.Culprit.Text, culprit) || !strings.Contains(lay.Culprit.Text, "confidence"):
			t.Errorf("the card's first culprit: %+v, want %s and its confidence", lay.Culprit, culprit)
		default:
			t.Logf("verdict card at %.0f–%.0f px; first culprit at %.0f px: %q", c.Top, c.Bottom, lay.Culprit.Top, lay.Culprit.Text)
		}
		if culprit == "" {
			t.Logf("verdict card at %.0f–%.0f px", c.Top, c.Bottom)
		}
	}
	if len(lay.Plots) < 5 {
		t.Errorf("%d plot areas, want 5 at least", len(lay.Plots))
	}
	var pl []string
	for _, p := range lay.Plots {
		pl = append(pl, fmt.Sprintf("%s %.1f+%.1f", p.Text, p.Left, p.Width))
		if d0, d1 := p.Left-lay.Plots[0].Left, p.Width-lay.Plots[0].Width; d0 < -1 || d0 > 1 || d1 < -1 || d1 > 1 {
			t.Errorf("plot area of %s at %.1f, %.1f px wide; %s's at %.1f, %.1f px wide", p.Text, p.Left, p.Width, lay.Plots[0].Text, lay.Plots[0].Left, lay.Plots[0].Width)
		}
	}
	t.Logf("plot areas (left+width): %s", strings.Join(pl, ", "))
	if len(lay.Unparsed) > 0 {
		t.Errorf("colours not read: %q", lay.Unparsed)
	}
	if len(lay.Texts) < 30 {
		t.Errorf("only %d pieces of text measured", len(lay.Texts))
	}
	least := textContrast{Ratio: 21}
	for _, x := range lay.Texts {
		if x.Ratio < 4.5 {
			t.Errorf("%s %q: %s on %s, contrast %.2f:1, want 4.5:1 at least", x.What, x.Text, x.FG, x.BG, x.Ratio)
		}
		if x.Ratio < least.Ratio {
			least = x
		}
	}
	t.Logf("body %s: %d pieces of text, lowest contrast %.2f:1 (%s %q, %s on %s)", lay.BodyBG, len(lay.Texts), least.Ratio, least.What, least.Text, least.FG, least.BG)
}
