package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/iostreams"
)

// unionRec is the synthetic recording of two 20-minute PCP timers offset
// by 10 minutes and a decoy (see correlate/testdata/SOURCE).
const unionRec = "../correlate/testdata/union.jsonl.gz"

func TestNewAnalyzeCmd(t *testing.T) {
	// def is the analysis settings of analyze's flags' defaults.
	def := analysis.Settings{Stat: "p99", Spike: "3x", Lag: time.Minute, GrowthWindow: 10 * time.Minute,
		PSIScope: "auto", MinSignals: 1, LRUDropMin: "32MiB", Thresholds: map[correlate.Signal]string{}}
	tests := []struct {
		args string
		want analyzeOptions
	}{
		{"run.jsonl", analyzeOptions{Recording: "run.jsonl", Settings: def, Format: "table"}},
		{"run.jsonl --latency res.csv --latency-format vegeta-csv --stat max --spike 500ms --format json --values --gap 1m --lag 30s --disk-io 32MiB --swap-out off --psi-some 5% --psi-scope host --min-signals 2 --require psi --lru-drop-min 8MiB",
			analyzeOptions{Recording: "run.jsonl", LatencyFile: "res.csv", LatencyIn: analysis.LatencyFlags{Format: "vegeta-csv"}, Format: "json", Values: true,
				Settings: analysis.Settings{Stat: "max", Spike: "500ms", Gap: time.Minute, Lag: 30 * time.Second, GrowthWindow: 10 * time.Minute, PSIScope: "host", MinSignals: 2, Require: "psi", LRUDropMin: "8MiB",
					Thresholds: map[correlate.Signal]string{correlate.DiskIO: "32MiB", correlate.SwapOut: "off", correlate.PSISome: "5%"}}}},
		// -o FILE.html picks the html format unless --format says otherwise.
		{"run.jsonl -o report.html", analyzeOptions{Recording: "run.jsonl", Settings: def, Format: "html", Output: "report.html"}},
		{"run.jsonl --output r.HTML --format md", analyzeOptions{Recording: "run.jsonl", Settings: def, Format: "markdown", Output: "r.HTML"}},
		{"--prometheus http://prom:9090 --match instance=~\"web-.*\" --host-label host --latency-query p99 --step 5s --align 5s --from -6h --to now --format json",
			analyzeOptions{Settings: def, Format: "json", Prom: promOptions{URL: "http://prom:9090", Match: `instance=~"web-.*"`, HostLabel: "host",
				LatencyQuery: "p99", Step: 5 * time.Second, Align: 5 * time.Second, Timeout: 2 * time.Minute}, From: "-6h", To: "now"}},
	}
	for _, tt := range tests {
		if tt.want.Prom.URL == "" {
			tt.want.Prom = promOptions{HostLabel: "instance", Align: time.Minute, Timeout: 2 * time.Minute}
		}
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *analyzeOptions
			c := newAnalyzeCmd(&factory{IO: ios}, func(o *analyzeOptions) error { got = o; return nil })
			c.SetArgs(strings.Fields(tt.args))
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			got.IO = nil
			if tt.want.Mode == 0 {
				tt.want.Mode = 0o600 // --mode's default
			}
			if d := cmp.Diff(tt.want, *got); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runWith(t, func() time.Time { return time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC) }, "/", args...)
}

func TestRunAnalyzeTable(t *testing.T) {
	code, out, errOut := runCmd(t, "analyze", unionRec)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	golden(t, "analyze-union.table.txt", out)
	code, out, _ = runCmd(t, "analyze", unionRec, "--format", "markdown", "--values")
	if code != exitOK {
		t.Fatalf("markdown: exit %d", code)
	}
	golden(t, "analyze-union-values.md", out)

	// An in-process schedule (kind process) and no culprit at all.
	for _, name := range []string{"inprocess", "noperiod"} {
		code, out, errOut = runCmd(t, "analyze", "../correlate/testdata/"+name+".jsonl.gz")
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %s", name, code, errOut)
		}
		golden(t, "analyze-"+name+".table.txt", out)
	}
}

// The lead's end-to-end test reads this JSON: the job ranked first, the
// share of episodes it explains, and that the decoy is absent.
func TestRunAnalyzeJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "analyze", unionRec, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var doc struct {
		Episodes []struct {
			Start     time.Time       `json:"start"`
			Signals   json.RawMessage `json:"signals"`
			LatencyMS *float64        `json:"latency_ms"`
			Processes json.RawMessage `json:"processes"`
		} `json:"episodes"`
		Spikes []struct {
			LatencyMS *float64 `json:"latency_ms"`
		} `json:"spikes"`
		Culprits []struct {
			Name              string   `json:"name"`
			Kind              string   `json:"kind"`
			EpisodesExplained int      `json:"episodes_explained"`
			EpisodesTotal     int      `json:"episodes_total"`
			EpisodeShare      float64  `json:"episode_share"`
			FiringsMatched    int      `json:"firings_matched"`
			Firings           int      `json:"firings"`
			Evidence          []string `json:"evidence"`
		} `json:"culprits"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range doc.Culprits {
		got = append(got, fmt.Sprintf("%s %s %d/%d (%.3f) firings %d/%d", c.Name, c.Kind, c.EpisodesExplained,
			c.EpisodesTotal, c.EpisodeShare, c.FiringsMatched, c.Firings))
	}
	// 6 and 5 of 12 episodes; the farm timer's 13:15 firing did nothing.
	want := []string{"pmlogger_check.timer timer 6/12 (0.500) firings 6/6", "pmlogger_farm_check.timer timer 5/12 (0.417) firings 5/6"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("culprits (-want +got):\n%s", d)
	}
	if len(doc.Episodes) != 12 || doc.Episodes[0].LatencyMS == nil || *doc.Episodes[0].LatencyMS != 2500 {
		t.Errorf("%d episodes, first latency %v; want 12 and 2500 ms", len(doc.Episodes), doc.Episodes[0].LatencyMS)
	}
	if len(doc.Spikes) != 1 || *doc.Spikes[0].LatencyMS != 1500 {
		t.Errorf("spikes outside episodes = %+v, want the 1.5 s one at 12:58", doc.Spikes)
	}
}

// A generic results file replaces the recording's latency: requests every
// second at 100 ms, 4 s during the pmlogger bursts of 12:05 and 12:15.
func TestRunAnalyzeLatencyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	var b strings.Builder
	b.WriteString("timestamp,latency_ms,status\n")
	start := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	for s := 1; s < 7200; s++ {
		ts := start.Add(time.Duration(s)*time.Second + 100*time.Millisecond)
		lat := 100
		if (ts.After(start.Add(5*time.Minute+10*time.Second)) && ts.Before(start.Add(6*time.Minute+40*time.Second))) ||
			(ts.After(start.Add(15*time.Minute+20*time.Second)) && ts.Before(start.Add(16*time.Minute+50*time.Second))) {
			lat = 4000
		}
		fmt.Fprintf(&b, "%s,%d,200\n", ts.Format(time.RFC3339Nano), lat)
	}
	b.WriteString("not-a-time,12,200\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "analyze", unionRec, "--latency", path, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	// The bad row is reported with its line number, and does not stop the
	// analysis.
	if !strings.Contains(errOut, "results.csv:7201") {
		t.Errorf("stderr = %q, want the bad row's line number", errOut)
	}
	var doc struct {
		Episodes []struct {
			Spike     bool     `json:"spike"`
			LatencyMS *float64 `json:"latency_ms"`
		} `json:"episodes"`
		Totals struct {
			Requests int `json:"requests"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	spikes := 0
	for _, e := range doc.Episodes {
		if e.Spike {
			spikes++
			if *e.LatencyMS != 4000 {
				t.Errorf("spike latency %v ms, want 4000", *e.LatencyMS)
			}
		}
	}
	if spikes != 2 || doc.Totals.Requests != 7199 {
		t.Errorf("%d spike episodes, %d requests; want 2 and 7199", spikes, doc.Totals.Requests)
	}
}

// -o writes the page to a file (and says so on stderr), never through a
// symbolic link planted at its path.
func TestRunAnalyzeOutputHTML(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	code, stdout, errOut := runCmd(t, "analyze", unionRec, "-o", out)
	if code != exitOK || stdout != "" || !strings.Contains(errOut, "wrote "+out) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The union recording: 12 episodes, 2 culprit timers firing 6 times
	// each in its 2 hours (see TestHTMLReportChromium for the page drawn).
	page := string(b)
	for _, want := range []string{"<!DOCTYPE html>", `<figure class="chart" id="chart-psi"`, "pmlogger_farm_check.timer", `<tr id="row-12">`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `"label":"pmlogger_check.timer"`); n != 6 {
		t.Errorf("%d firings of pmlogger_check.timer in the page data, want 6", n)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	// A file the user named that cannot be written: exit 1, as for an
	// input file (issue 31 item 5), not usage.
	if code, _, errOut := runCmd(t, "analyze", unionRec, "-o", link, "--force"); code != exitError || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("-o through a symlink: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere")); err == nil {
		t.Error("wrote through the symbolic link")
	}
}

func TestRunAnalyzeErrors(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"analyze", unionRec, "--spike", "fast"}, exitUsage, "--spike"},
		{[]string{"analyze", unionRec, "--disk-io", "lots"}, exitUsage, "--disk-io"},
		{[]string{"analyze", unionRec, "--format", "pdf"}, exitUsage, "--format"},
		{[]string{"analyze", unionRec, "--psi-scope", "vm"}, exitUsage, "--psi-scope"},
		{[]string{"analyze", unionRec, "--min-signals", "10"}, exitUsage, "--min-signals"},
		{[]string{"analyze", unionRec, "--require", "latency"}, exitUsage, "--require"},
		{[]string{"analyze", "testdata/does-not-exist.jsonl"}, exitError, "memdiag: testdata/does-not-exist.jsonl: no such file or directory\n"},
		{[]string{"analyze", "analyze_test.go"}, exitError, "not a memdiag recording"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			code, _, errOut := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tt.code, tt.stderr)
			}
		})
	}
}

// TestAnalyzeColor: on a terminal the marks are red and the header bold;
// --no-color, and piped output, have no escape sequences at all.
func TestAnalyzeColor(t *testing.T) {
	run := func(tty bool, args ...string) string {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		ios.SetStdoutTTY(tty)
		ios.SetWidth(200)
		ios.EnableColor()
		f := &factory{IO: ios, Now: time.Now, Root: "/"}
		if code := execute(context.Background(), f, append([]string{"analyze", unionRec}, args...)); code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, errOut)
		}
		return out.String()
	}
	if out := run(true); !strings.Contains(out, "\x1b[31;1m●") || !strings.Contains(out, "\x1b[1m TIME ") {
		t.Errorf("terminal: no red mark or bold header:\n%s", out)
	}
	for name, out := range map[string]string{"--no-color": run(true, "--no-color"), "piped": run(false)} {
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%s: escape sequence in output:\n%q", name, out)
		}
	}
}

// TestAnalyzeSeveralSegments: `analyze A B` (docs/service.md) joins the
// segments into one recording: the union recording cut in two after its
// 119th sample gives the same timeline and verdict as the whole file.
func TestAnalyzeSeveralSegments(t *testing.T) {
	lines := strings.SplitAfter(string(gunzipFile(t, unionRec)), "\n")
	dir := t.TempDir()
	seg1, seg2 := filepath.Join(dir, "seg1.jsonl"), filepath.Join(dir, "seg2.jsonl")
	if err := os.WriteFile(seg1, []byte(strings.Join(lines[:120], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seg2, []byte(lines[0]+strings.Join(lines[120:], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, whole, _ := runCmd(t, "analyze", unionRec)
	code, out, errOut := runCmd(t, "analyze", seg1, seg2)
	if code != exitOK {
		t.Fatalf("analyze seg1 seg2: exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, strings.TrimRight(whole, "\n")) {
		t.Errorf("analyze seg1 seg2 differs from the whole recording:\n%s\nwant:\n%s", out, whole)
	}
	if !strings.Contains(out, "seg1.jsonl has no end line") {
		t.Errorf("no note on the first segment's missing end line:\n%s", out)
	}
}

// TestArgCountErrors: a wrong number of arguments is a usage error whose
// message names the command once ("memdiag: compare: ...", not
// "memdiag: memdiag compare: ...").
func TestArgCountErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"compare", unionRec}, "memdiag: compare: accepts 2 arg(s), received 1\n"},
		{[]string{"analyze"}, "memdiag: analyze: requires at least 1 arg(s), only received 0\n"},
		{[]string{"timers", "extra"}, "memdiag: timers takes no arguments, got \"extra\"\n"},
	}
	for _, tt := range tests {
		code, _, errOut := runCmd(t, tt.args...)
		if code != exitUsage || !strings.HasPrefix(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, exitUsage, tt.want)
		}
	}
}
