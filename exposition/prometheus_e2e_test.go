package exposition

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestRealPrometheusGetsOpenMetrics runs Debian's Prometheus against
// /metrics: it asks for OpenMetrics, gets it, and ingests every series
// (up is 1, memdiag_samples_total and a process_* metric read back
// through its API). It starts a daemon, so it runs with the end-to-end
// tests (MEMDIAG_E2E); it changes nothing on the host.
func TestRealPrometheusGetsOpenMetrics(t *testing.T) {
	if !testenv.Enabled() {
		t.Skip("end-to-end test skipped: it runs a Prometheus server; set MEMDIAG_E2E=1 to run it")
	}
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		testenv.Unmet(t, "prometheus is not installed (apt-get install prometheus)")
		return
	}
	e := unionExporter(t)
	var mu sync.Mutex
	var accepts, types []string
	h := Handler(e)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		mu.Lock()
		accepts = append(accepts, r.Header.Get("Accept"))
		types = append(types, w.Header().Get("Content-Type"))
		mu.Unlock()
	}))
	defer target.Close()

	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	writeFile(t, cfg, fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: memdiag\n    static_configs:\n      - targets: ['%s']\n",
		strings.TrimPrefix(target.URL, "http://")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()

	query := func(q string) (float64, bool) {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Data.Result) != 1 {
			return 0, false
		}
		s, _ := r.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	_, fams := scrape(t, e)
	wantSamples, _ := value(fams, Samples)
	// Prometheus starts, scrapes within a second, and answers: waited
	// for, up to a minute on a loaded host; the assertions are on values.
	deadline := time.Now().Add(time.Minute)
	for {
		if v, ok := query(`memdiag_samples_total{job="memdiag"}`); ok && v == wantSamples {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("Prometheus never ingested memdiag_samples_total = %v\n%s", wantSamples, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if v, ok := query(`up{job="memdiag"}`); !ok || v != 1 {
		t.Errorf("up = %v (%v), want 1", v, ok)
	}
	if v, ok := query(`process_resident_memory_bytes{job="memdiag"}`); !ok || v <= 0 {
		t.Errorf("process_resident_memory_bytes = %v (%v)", v, ok)
	}
	if v, ok := query(`count({job="memdiag",__name__=~"memdiag_job_info"})`); !ok || v < 2 {
		t.Errorf("memdiag_job_info series = %v (%v), want the recording's jobs", v, ok)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("Prometheus's Accept: %s", accepts[0])
	if !strings.HasPrefix(types[0], "application/openmetrics-text; version=1.0.0") {
		t.Errorf("Prometheus (Accept %q) got %q, want OpenMetrics 1.0.0", accepts[0], types[0])
	}
	if accepts[0] != prometheusAccept {
		t.Logf("note: this Prometheus's Accept differs from the one TestBothFormats sends")
	}
}
