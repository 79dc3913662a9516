package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// The Prometheus path, for real: Debian's prometheus and
// prometheus-node-exporter started on 127.0.0.1 with a 1 s scrape
// interval, two memdiag watch --listen instances scraped as hosts web-1
// (with node_exporter) and web-2 (memdiag's metrics only), node_exporter
// alone as web-3, and a job fired on a real .timer's schedule in a
// memory-limited v1 cgroup named after its .service. analyze --prometheus
// must name the timer on web-1 and web-2, taking web-1's signals from
// memdiag (one clock with its per-unit I/O), find the episodes on web-3
// without naming a job there (no memdiag metrics), and align the hosts'
// episodes into one fleet line per firing.
const (
	pPrefix = "memdiag-e2e-p"
	pTimer  = `[Unit]
Description=memdiag e2e: heavy periodic job (Prometheus)

[Timer]
OnCalendar=*:*:0/12
AccuracySec=1s

[Install]
WantedBy=timers.target
`
	pService = `[Unit]
Description=memdiag e2e: heavy periodic job (Prometheus)

[Service]
Type=oneshot
ExecStart=%s -write 268435456 -file /var/tmp/memdiag-e2e-p.dat -read-passes 2
`
	pLength = 48 * time.Second // three firings of the 12 s timer, 8 s after the last
)

// freePort returns a loopback port free now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDaemon starts a long-running process, logged to dir/name.log, and
// kills it (by its PID) when the test ends.
func startDaemon(t *testing.T, dir, name string, argv ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdout, c.Stderr = log, log
	if err := c.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("%s log:\n%s", name, tail(string(b), 3000))
		}
	})
	return c
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if r, err := http.Get(url); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within %s", url, within)
}

// waitScraped waits until Prometheus holds a sample of `up` == 1 for n
// targets.
func waitScraped(t *testing.T, promURL string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if r, err := http.Get(promURL + "/api/v1/query?query=" + url.QueryEscape("up == 1")); err == nil {
			var v struct {
				Data struct {
					Result []any `json:"result"`
				} `json:"data"`
			}
			err := json.NewDecoder(r.Body).Decode(&v)
			r.Body.Close()
			if err == nil && len(v.Data.Result) >= n {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("Prometheus did not scrape its %d targets within %s", n, within)
}

func TestAnalyzePrometheusFleet(t *testing.T) {
	testenv.RequireRoot(t, "a memory-limited cgroup, a timer unit in /etc/systemd/system, Prometheus and node_exporter daemons")
	for _, bin := range []string{"prometheus", "prometheus-node-exporter", "systemd-analyze"} {
		if _, err := exec.LookPath(bin); err != nil {
			testenv.Unmet(t, bin+" is not installed (apt-get install prometheus prometheus-node-exporter systemd; .ci/run does)")
		}
	}
	memdiag, hog, dir := testenv.BuildMemdiag(t), testenv.BuildHog(t), t.TempDir()
	testenv.Exclusive(t)

	// The timer and its service, enabled as systemctl enable would.
	writeUnits(t, map[string]string{pPrefix + "-job.timer": pTimer, pPrefix + "-job.service": fmt.Sprintf(pService, hog)})
	testenv.NewCgroup(t, pPrefix+".slice", 128<<20)
	job := testenv.NewCgroup(t, pPrefix+".slice/"+pPrefix+"-job.service", 0)
	t.Cleanup(func() { os.Remove("/var/tmp/memdiag-e2e-p.dat") })

	nodePort, m1Port, m2Port, promPort := freePort(t), freePort(t), freePort(t), freePort(t)
	startDaemon(t, dir, "node_exporter", "prometheus-node-exporter",
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", nodePort),
		"--collector.disable-defaults", "--collector.pressure", "--collector.meminfo", "--collector.vmstat", "--collector.diskstats",
		"--collector.vmstat.fields=^(oom_kill|pgpg|pswp|pg.*fault|pgscan_.*|pgsteal_.*|workingset_.*|allocstall.*)")
	ctx, cancel := context.WithTimeout(context.Background(), pLength+2*time.Minute)
	defer cancel()
	var watches []*exec.Cmd
	for i, port := range []int{m1Port, m2Port} {
		// Ended by SIGTERM pLength after the first scrapes (below); the
		// duration only bounds a test that failed before.
		w := exec.CommandContext(ctx, memdiag, "watch", "--quiet", "--interval", "1s", "--duration", (pLength + time.Minute).String(),
			"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--out", filepath.Join(dir, fmt.Sprintf("web-%d.jsonl", i+1)))
		log, _ := os.Create(filepath.Join(dir, fmt.Sprintf("watch-%d.log", i+1)))
		w.Stdout, w.Stderr = log, log
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Process.Kill(); w.Wait(); log.Close() })
		watches = append(watches, w)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:%d']
        labels: {instance: web-1}
      - targets: ['127.0.0.1:%d']
        labels: {instance: web-3}
  - job_name: memdiag
    static_configs:
      - targets: ['127.0.0.1:%d']
        labels: {instance: web-1}
      - targets: ['127.0.0.1:%d']
        labels: {instance: web-2}
`, nodePort, nodePort, m1Port, m2Port)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, dir, "prometheus", "prometheus", "--config.file="+cfgPath,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"))
	promURL := fmt.Sprintf("http://127.0.0.1:%d", promPort)
	waitHTTP(t, promURL+"/-/ready", 20*time.Second)
	waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", m1Port), 10*time.Second)
	// Ready is not scraping: the first scrape of a target comes up to an
	// interval after the target is found, later on a busy machine. A
	// firing before it cannot be seen in Prometheus at all.
	waitScraped(t, promURL, 4, 30*time.Second)
	start := time.Now()

	// Fire the job at the times systemd-analyze gives for its OnCalendar=.
	var fired []time.Time
	var runs []string
	for _, at := range firings(t, "*:*:0/12", start.Add(3*time.Second), 6) {
		if at.After(start.Add(pLength - 8*time.Second)) {
			break
		}
		time.Sleep(time.Until(at))
		c := job.Command(hog, "-write", fmt.Sprint(256<<20), "-file", "/var/tmp/memdiag-e2e-p.dat", "-read-passes", "2")
		began := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("job: %v %s", err, out)
		}
		fired = append(fired, at)
		// A run longer than the period merges with the next one into
		// one episode: on a machine that loaded, fewer episodes than
		// firings is what the data says, not a fault of the analysis.
		ran := fmt.Sprintf("fired %s, ran %s late for %s", at.UTC().Format("15:04:05"), began.Sub(at).Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond))
		runs = append(runs, ran)
	}
	t.Logf("job runs (every 12 s; each must end well before the next): %s", strings.Join(runs, "; "))
	time.Sleep(time.Until(start.Add(pLength)))
	for _, w := range watches {
		if err := w.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := w.Wait(); err != nil {
			t.Fatalf("watch: %v", err)
		}
	}
	end := time.Now()
	if len(fired) < 3 {
		t.Fatalf("the job fired %d times, want at least 3", len(fired))
	}

	args := []string{"analyze", "--prometheus", promURL, "--match", `instance=~"web-.*"`,
		"--from", start.UTC().Format(time.RFC3339), "--to", end.UTC().Format(time.RFC3339), "--align", "5s", "--no-color"}
	table, err := exec.Command(memdiag, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("analyze --prometheus: %v\n%s", err, table)
	}
	t.Logf("memdiag %s\n%s", strings.Join(args, " "), table)
	out, err := exec.Command(memdiag, append(args, "--format", "json")...).Output()
	if err != nil {
		t.Fatalf("analyze --prometheus --format json: %v", err)
	}
	if keep := os.Getenv("MEMDIAG_E2E_KEEP"); keep != "" {
		// Keep what Prometheus held (every series analyze reads, raw, as
		// the range query returns it), the verdict and the recordings,
		// for a closer look or a unit test's series set.
		raw := promURL + "/api/v1/query_range?" + url.Values{
			"query": {`{__name__=~"node_.*|memdiag_.*",instance=~"web-.*"}`},
			"start": {fmt.Sprint(start.Add(-2 * time.Second).Unix())}, "end": {fmt.Sprint(end.Unix() + 1)}, "step": {"1"},
		}.Encode()
		if r, err := http.Get(raw); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			_ = os.WriteFile(filepath.Join(keep, "prometheus-range.json"), b, 0o644)
		}
		raw = promURL + "/api/v1/query?" + url.Values{
			"query": {fmt.Sprintf(`{__name__=~"node_.*|memdiag_.*|up",instance=~"web-.*"}[%ds]`, int(end.Sub(start).Seconds())+5)},
			"time":  {fmt.Sprint(end.Unix() + 1)},
		}.Encode()
		if r, err := http.Get(raw); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			_ = os.WriteFile(filepath.Join(keep, "prometheus-raw.json"), b, 0o644)
		}
		_ = os.WriteFile(filepath.Join(keep, "prometheus-analyze.json"), out, 0o644)
		_ = os.WriteFile(filepath.Join(keep, "prometheus-analyze.txt"), table, 0o644)
		for i := 1; i <= 2; i++ {
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("web-%d.jsonl", i)))
			_ = os.WriteFile(filepath.Join(keep, fmt.Sprintf("prometheus-web-%d.jsonl", i)), b, 0o644)
		}
	}
	var res struct {
		StepS float64 `json:"step_s"`
		Hosts []struct {
			Host     string         `json:"host"`
			Sources  []string       `json:"sources"`
			Memdiag  bool           `json:"memdiag_metrics"`
			Lacks    []string       `json:"lacks"`
			Analysis map[string]any `json:"analysis"`
		} `json:"hosts"`
		Fleet []struct {
			Hosts    []string `json:"hosts"`
			Of       int      `json:"of"`
			Job      string   `json:"job"`
			JobHosts int      `json:"job_hosts"`
			Line     string   `json:"line"`
		} `json:"fleet"`
		Resolution string `json:"resolution"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if res.StepS != 1 {
		t.Errorf("step %v s, want the 1 s scrape interval measured", res.StepS)
	}
	wantJob := pPrefix + "-job.timer"
	if len(res.Hosts) != 3 || res.Hosts[0].Host != "web-1" || res.Hosts[1].Host != "web-2" || res.Hosts[2].Host != "web-3" {
		t.Fatalf("hosts %+v, want web-1, web-2 and web-3", res.Hosts)
	}
	for _, h := range res.Hosts {
		cs := culprits(h.Analysis)
		if h.Host == "web-3" {
			// node_exporter alone: the episodes, but no job can be
			// shown to have run.
			if h.Memdiag || len(h.Lacks) == 0 || !strings.HasPrefix(h.Lacks[len(h.Lacks)-1], "no memdiag metrics") {
				t.Errorf("web-3: memdiag_metrics %v, lacks %q", h.Memdiag, h.Lacks)
			}
			for _, c := range cs {
				if c["kind"] == "timer" || c["kind"] == "cron" {
					t.Errorf("web-3 has no job inventory, but named %v", c["name"])
				}
			}
		} else if len(cs) == 0 || cs[0]["name"] != wantJob {
			t.Errorf("%s: culprits %v, want %s first", h.Host, cs, wantJob)
		}
		eps, _ := h.Analysis["episodes"].([]any)
		if len(eps) < len(fired)-1 {
			t.Errorf("%s: %d episodes for %d firings", h.Host, len(eps), len(fired))
		}
	}
	// web-1 has both exporters: memdiag's signals, sampled with its unit
	// I/O, are taken; node_exporter's, read at another moment, are not.
	if src := strings.Join(res.Hosts[0].Sources, ", "); !strings.HasPrefix(src, "memdiag PSI, memdiag file LRU, memdiag signal counters, memdiag disk counters") {
		t.Errorf("web-1 sources %q, want memdiag's signals", src)
	}
	both := 0
	for _, a := range res.Fleet {
		if a.Of == 3 && a.Job == wantJob && a.JobHosts == 2 && slices.Contains(a.Hosts, "web-1") && slices.Contains(a.Hosts, "web-2") {
			both++
			// web-3 (node_exporter only) names no job: "(named on 2 of
			// them)" when its episode is in the group, nothing when its
			// PSI missed this run or began more than --align away.
			want, suffix := fmt.Sprintf("%d of 3 hosts: %s at ", len(a.Hosts), wantJob), ""
			if len(a.Hosts) == 3 {
				suffix = " (named on 2 of them)"
			}
			if !strings.HasPrefix(a.Line, want) || !strings.HasSuffix(a.Line, "UTC"+suffix) {
				t.Errorf("fleet line %q, want %q…UTC%s", a.Line, want, suffix)
			}
		}
	}
	if both < len(fired)-1 {
		t.Errorf("%d fleet lines with both hosts naming %s, want one per firing (%d fired): %+v", both, wantJob, len(fired), res.Fleet)
	}
	if !strings.Contains(res.Resolution, "scraped every 1s") {
		t.Errorf("resolution note %q does not state the scrape interval", res.Resolution)
	}

	// What Prometheus itself holds. The job is short-lived (a few
	// seconds); its writes (256 MiB each time, fsynced) reach the unit's
	// counter through the exit I/O of its processes.
	promQuery := func(q string) float64 {
		t.Helper()
		u := promURL + "/api/v1/query?time=" + fmt.Sprint(end.Unix()) + "&query=" + url.QueryEscape(q)
		r, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var v struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil || len(v.Data.Result) != 1 {
			t.Fatalf("query %s: %v, %+v", q, err, v)
		}
		var x float64
		fmt.Sscan(fmt.Sprint(v.Data.Result[0].Value[1]), &x)
		return x
	}
	unit := pPrefix + "-job.service"
	if w := promQuery(fmt.Sprintf(`max_over_time(memdiag_unit_written_bytes_total{instance="web-2",unit=%q}[5m])`, unit)); w < float64(len(fired))*256*(1<<20) {
		t.Errorf("memdiag_unit_written_bytes_total{unit=%q} = %.0f, want at least %d × 256 MiB", unit, w, len(fired))
	}
	// The firing annotation's query: the planned last firing changed at
	// each firing while memdiag was scraped.
	span := int(end.Sub(start).Seconds())
	if n := promQuery(fmt.Sprintf(`changes(memdiag_job_last_firing_timestamp_seconds{instance="web-1",periodic_job=%q}[%ds])`, wantJob, span)); n < float64(len(fired)) {
		t.Errorf("the last-firing gauge changed %.0f times, want at least %d (the firings)", n, len(fired))
	}

	// Latency from a PromQL query, per host: Prometheus's own scrape
	// duration of each memdiag target stands in for a service's latency.
	lat, err := exec.Command(memdiag, append(args, "--format", "json", "--latency-query", `max by (instance) (scrape_duration_seconds)`)...).Output()
	if err != nil {
		t.Fatalf("analyze --latency-query: %v", err)
	}
	var lres struct {
		Hosts []struct {
			Host     string         `json:"host"`
			Analysis map[string]any `json:"analysis"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(lat, &lres); err != nil {
		t.Fatal(err)
	}
	for _, h := range lres.Hosts {
		if h.Analysis["has_latency"] != true {
			t.Errorf("%s: --latency-query gave no latency", h.Host)
		}
	}

	// Latency from an imported file instead: a generic CSV of one request
	// every 200 ms over the window, 12 ms each.
	var csv strings.Builder
	csv.WriteString("timestamp,latency_ms,status\n")
	for ts := start; ts.Before(end); ts = ts.Add(200 * time.Millisecond) {
		fmt.Fprintf(&csv, "%s,12,200\n", ts.UTC().Format(time.RFC3339Nano))
	}
	latFile := filepath.Join(dir, "latency.csv")
	if err := os.WriteFile(latFile, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fl, err := exec.Command(memdiag, append(args, "--format", "json", "--latency", latFile)...).Output()
	if err != nil {
		t.Fatalf("analyze --prometheus --latency FILE: %v", err)
	}
	lres.Hosts = nil
	if err := json.Unmarshal(fl, &lres); err != nil {
		t.Fatal(err)
	}
	for _, h := range lres.Hosts {
		if h.Analysis["has_latency"] != true || h.Analysis["latency_baseline_ms"] != 12.0 {
			t.Errorf("%s: --latency FILE: has_latency %v, baseline %v ms, want 12", h.Host, h.Analysis["has_latency"], h.Analysis["latency_baseline_ms"])
		}
	}
}
