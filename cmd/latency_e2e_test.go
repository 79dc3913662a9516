package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// startStallingService starts internal/testenv/websvc holding every
// request that arrives in the first stall of each period; it returns its
// address and when the periods start.
func startStallingService(t *testing.T, period, stall time.Duration) (string, time.Time) {
	t.Helper()
	ws := testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/websvc", "websvc")
	cmd := exec.Command(ws, "-data", filepath.Join(t.TempDir(), "data.bin"), "-data-size", "4194304", "-anon", "1048576",
		"-stall-every", period.String(), "-stall", stall.String())
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("websvc: %v", err)
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("websvc: %v", err)
	}
	t0, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(strings.TrimPrefix(line, "websvc: stall periods count from ")))
	if err != nil {
		t.Fatalf("websvc start line %q: %v", line, err)
	}
	return strings.TrimSpace(addr), t0
}

type e2eLatencyDoc struct {
	Episodes []struct {
		Start, End time.Time
		Spike      bool       `json:"spike"`
		SpikeStart *time.Time `json:"spike_start"`
		SpikeEnd   *time.Time `json:"spike_end"`
	} `json:"episodes"`
	Spikes []struct {
		Start, End time.Time
	} `json:"spikes"`
	Totals struct {
		Requests int `json:"requests"`
		Errors   int `json:"errors"`
	} `json:"totals"`
}

// TestLatencyE2EHeyUnderWatch: hey loads a service that stalls 400 ms
// every 3 s, run by `memdiag watch -- …`; analyze with hey's CSV counts
// every request hey wrote (hey's offsets anchored at the command's start,
// which watch recorded) and finds a spike (above 150 ms) at each stall
// and nowhere else.
// Then the service is down: a probe recording shows only failures, and
// compare does not call it an improvement.
func TestLatencyE2EHeyUnderWatch(t *testing.T) {
	testenv.RequireRoot(t, "a real load tool against a local service")
	hey, err := exec.LookPath("hey")
	if err != nil {
		testenv.Unmet(t, "hey is not installed (apt-get install hey)")
	}
	bin := testenv.BuildMemdiag(t)
	const period, stall = 3 * time.Second, 400 * time.Millisecond
	addr, t0 := startStallingService(t, period, stall)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "hey.csv")
	rec := filepath.Join(dir, "run.jsonl")
	code, _, stderr := runBinary(t, bin, "watch", "--interval", "1s", "-q", "--no-timers", "-o", rec, "--latency", csvPath, "--",
		"sh", "-c", "exec "+hey+" -z 13s -q 10 -c 2 -o csv http://"+addr+"/ > "+csvPath)
	if code != exitOK {
		t.Fatalf("watch: exit %d\n%s", code, stderr)
	}
	// hey's own count: its CSV's rows.
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	heyRows := strings.Count(string(b), "\n") - 1
	if heyRows < 200 {
		t.Fatalf("hey wrote %d rows; want ~260 (13 s at 20/s)", heyRows)
	}
	// The spike floor is a latency, not a factor of the baseline: a
	// request the service holds waits at least 300 ms (hey's two workers
	// send every 100 ms, the stall is 400 ms), while three times the
	// 2–4 ms baseline is 6–12 ms, which an unheld request can reach on a
	// host busy with other tests. What is checked is where hey's rows
	// land in time, which a fixed floor tells as well (the default 3x
	// rule is what correlate's tests use, e.g.
	// TestSpikeDoesNotBridgeEpisodes).
	code, out, stderr := runBinary(t, bin, "analyze", rec, "--latency", csvPath, "--format", "json", "--stat", "max", "--spike", "150ms")
	if code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", code, stderr)
	}
	var doc e2eLatencyDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Totals.Requests != heyRows || doc.Totals.Errors != 0 {
		t.Errorf("analyze counted %d requests, %d failed; hey wrote %d rows, none failed", doc.Totals.Requests, doc.Totals.Errors, heyRows)
	}
	// A spike interval just before a pressure episode, or within --gap
	// (by default one sampling interval) after it, is that episode's
	// spike (docs/analyze.md, step 3); an earlier one is a spike outside
	// episodes: another test's pressure on the host can make such an
	// episode. Its spike_start–spike_end span those intervals, which can
	// lie before or after the episode's own span (a spike
	// interval 37.8–38.8 s was the spike of an episode from 39.8 s here,
	// with e2e's hog beside this test).
	var spans [][2]time.Time
	for _, e := range doc.Episodes {
		if !e.Spike {
			continue
		}
		if e.SpikeStart == nil || e.SpikeEnd == nil {
			t.Fatalf("spike episode %s–%s has no spike_start/spike_end", e.Start, e.End)
		}
		spans = append(spans, [2]time.Time{*e.SpikeStart, *e.SpikeEnd})
	}
	for _, s := range doc.Spikes {
		spans = append(spans, [2]time.Time{s.Start, s.End})
	}
	// Every spike covers a stall window; every stall window well inside
	// the load lies in a spike.
	stallAt := func(from, to time.Time) bool {
		for w := t0; w.Before(to); w = w.Add(period) {
			if w.Before(to) && w.Add(stall).After(from) {
				return true
			}
		}
		return false
	}
	for _, s := range spans {
		if !stallAt(s[0], s[1]) {
			t.Errorf("spike %s–%s is not at a stall", s[0].Format("15:04:05.000"), s[1].Format("15:04:05.000"))
		}
	}
	firstReq, lastReq := loadSpan(t, bin, rec, csvPath)
	found := 0
	for w := t0; w.Before(lastReq); w = w.Add(period) {
		if w.Before(firstReq.Add(time.Second)) || w.Add(stall+time.Second).After(lastReq) {
			continue
		}
		in := false
		for _, s := range spans {
			if w.Before(s[1]) && w.Add(stall).After(s[0]) {
				in = true
			}
		}
		if !in {
			t.Errorf("stall at %s found in no spike (spikes %v)", w.Format("15:04:05.000"), spans)
		}
		found++
	}
	if found < 3 {
		t.Errorf("only %d stalls inside the load; want at least 3", found)
	}

	// The service down: a probe of a closed port for 3 s.
	down := filepath.Join(dir, "down.jsonl")
	code, _, stderr = runBinary(t, bin, "watch", "--interval", "1s", "--duration", "3s", "-q", "--no-timers", "-o", down, "--probe", "http://127.0.0.1:1/")
	if code != exitOK {
		t.Fatalf("watch --probe: exit %d\n%s", code, stderr)
	}
	code, out, stderr = runBinary(t, bin, "analyze", down)
	if code != exitOK {
		t.Fatalf("analyze down: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "requests failed (100.0%)") || !strings.Contains(out, "no successful request") {
		t.Errorf("analyze of the dead service does not report the failures:\n%s", out)
	}
	code, out, stderr = runBinary(t, bin, "compare", rec, down, "--latency-before", csvPath)
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "Not an improvement: failed requests rose from 0.0% to 100.0%") {
		t.Errorf("compare does not call out the failures:\n%s", out)
	}
}

// loadSpan is the first and last request start of the import, from the
// import note of analyze's text report.
func loadSpan(t *testing.T, bin, rec, csvPath string) (time.Time, time.Time) {
	t.Helper()
	code, out, stderr := runBinary(t, bin, "analyze", rec, "--latency", csvPath, "--format", "json")
	if code != exitOK {
		t.Fatalf("analyze: %s", stderr)
	}
	var doc struct {
		Totals struct {
			LoadFrom time.Time `json:"load_from"`
			LoadTo   time.Time `json:"load_to"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Totals.LoadFrom.IsZero() {
		t.Fatalf("no load span in the JSON (%v)", err)
	}
	return doc.Totals.LoadFrom, doc.Totals.LoadTo
}

// TestLatencyE2ELocustLive: Locust, run by `memdiag watch -- locust …`,
// writes per-request rows with the request hook exactly as
// docs/latency.md gives it; watch follows the file live and records
// every request: the recording's count (analyze without the file) equals
// Locust's own (its _stats.csv Aggregated row), failures included.
func TestLatencyE2ELocustLive(t *testing.T) {
	testenv.RequireRoot(t, "a real load tool against a local service")
	locust, err := exec.LookPath("locust")
	if err != nil {
		testenv.Unmet(t, "Locust is not installed (apt-get install python3-locust)")
	}
	bin := testenv.BuildMemdiag(t)
	addr, _ := startStallingService(t, 3*time.Second, 400*time.Millisecond)
	dir := t.TempDir()
	doc, err := os.ReadFile("../docs/latency.md")
	if err != nil {
		t.Fatal(err)
	}
	_, hook, ok := strings.Cut(string(doc), "```python\n")
	hook, _, ok2 := strings.Cut(hook, "```")
	if !ok || !ok2 || !strings.Contains(hook, "events.request.add_listener") {
		t.Fatal("docs/latency.md has no request hook in a python block")
	}
	files := map[string]string{
		"memdiag_hook.py": hook,
		"locustfile.py": `from locust import HttpUser, constant, task
import memdiag_hook  # noqa: F401

class Probe(HttpUser):
    wait_time = constant(0.05)

    @task(3)
    def root(self):
        self.client.get("/")

    @task
    def refused(self):
        self.client.get("http://127.0.0.1:1/", name="refused")
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := filepath.Join(dir, "locust_requests.csv")
	rec := filepath.Join(dir, "run.jsonl")
	code, wout, werr := runBinary(t, bin, "watch", "--interval", "1s", "-q", "--no-timers", "-o", rec, "--latency", rows, "--",
		"sh", "-c", "cd "+dir+" && MEMDIAG_LOCUST_CSV="+rows+" exec "+locust+" -f locustfile.py --headless -u 2 -r 2 -t 8s --host http://"+addr+" --only-summary --exit-code-on-error 0")
	if code != exitOK {
		t.Fatalf("watch: exit %d\n%s", code, werr)
	}
	// Locust's own count: the Aggregated line of the summary it prints at
	// exit ("Aggregated   135   34(25.19%) | …"). Its loc_stats.csv is
	// not used: it is rewritten every second and misses the last one.
	m := regexp.MustCompile(`(?m)^\s+Aggregated\s+(\d+)\s+(\d+)\(`).FindStringSubmatch(wout + werr)
	if m == nil {
		t.Fatal("no Aggregated line in Locust's summary")
	}
	locReq, _ := strconv.Atoi(m[1])
	locFail, _ := strconv.Atoi(m[2])
	if locReq < 100 || locFail < 10 {
		t.Fatalf("Locust counted %d requests, %d failed; want ~8 s of 2 users at 20/s, a quarter refused", locReq, locFail)
	}
	// The recording's own count: what watch followed live.
	code, out, stderr := runBinary(t, bin, "analyze", rec, "--format", "json")
	if code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", code, stderr)
	}
	var res e2eLatencyDoc
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("Locust counted %d requests, %d failed; watch recorded %d, %d", locReq, locFail, res.Totals.Requests, res.Totals.Errors)
	if res.Totals.Requests != locReq || res.Totals.Errors != locFail {
		t.Errorf("watch recorded %d requests, %d failed; Locust counted %d, %d", res.Totals.Requests, res.Totals.Errors, locReq, locFail)
	}
	// And the file, read after the run, holds the same.
	code, out, stderr = runBinary(t, bin, "analyze", rec, "--latency", rows, "--format", "json")
	if code != exitOK {
		t.Fatalf("analyze --latency: exit %d\n%s", code, stderr)
	}
	res = e2eLatencyDoc{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Totals.Requests != locReq || res.Totals.Errors != locFail {
		t.Errorf("the hook's file imports %d requests, %d failed; Locust counted %d, %d", res.Totals.Requests, res.Totals.Errors, locReq, locFail)
	}
}
