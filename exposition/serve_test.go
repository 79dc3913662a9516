package exposition

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// prometheusAccept is the Accept header of Prometheus 2.42's scraper
// (Debian bookworm's prometheus; scrape/scrape.go, acceptHeader), seen
// by TestRealPrometheusGetsOpenMetrics.
const prometheusAccept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// unionExporter is an exporter fed a recording with jobs, episodes and
// culprits (correlate/testdata/SOURCE: union.jsonl.gz, two PCP timers).
func unionExporter(t *testing.T) *Exporter {
	t.Helper()
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	end := rec.Samples[len(rec.Samples)-1].Time
	e := New(rec.Header, Options{Window: 24 * time.Hour, AnalyzeEvery: time.Minute, Now: func() time.Time { return end }})
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
	}
	return e
}

// get fetches url with an Accept header ("" sends none) and returns the
// body and the Content-Type.
func get(t *testing.T, c *http.Client, url, accept string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b), resp.Header.Get("Content-Type")
}

// TestBothFormats: a scraper that asks for nothing gets the text format
// 0.0.4, Prometheus (which asks for OpenMetrics first) gets OpenMetrics
// 1.0.0; both carry memdiag's own process_* and go_* metrics; the text
// passes promtool check metrics, the OpenMetrics the strict parser of
// the Python client (whose authors wrote the OpenMetrics specification;
// promtool check metrics reads only the text format).
func TestBothFormats(t *testing.T) {
	srv := httptest.NewServer(Handler(unionExporter(t)))
	defer srv.Close()

	text, ct := get(t, srv.Client(), srv.URL, "")
	if !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("no Accept: Content-Type %q, want text/plain; version=0.0.4", ct)
	}
	om, ct := get(t, srv.Client(), srv.URL, prometheusAccept)
	if !strings.HasPrefix(ct, "application/openmetrics-text; version=1.0.0") {
		t.Errorf("Prometheus's Accept: Content-Type %q, want application/openmetrics-text; version=1.0.0", ct)
	}
	if !strings.HasSuffix(om, "# EOF\n") {
		t.Errorf("OpenMetrics body does not end with # EOF:\n%s", tail(om))
	}
	for _, want := range []string{
		"\nprocess_resident_memory_bytes ", "\nprocess_cpu_seconds_total ", "\nprocess_start_time_seconds ",
		"\ngo_goroutines ", "\ngo_gc_heap_allocs_bytes_total ",
		"\nmemdiag_samples_total ", "\nmemdiag_job_info{",
	} {
		if !strings.Contains(text, want) || !strings.Contains(om, want) {
			t.Errorf("%q missing: text %v, OpenMetrics %v", strings.TrimSpace(want), strings.Contains(text, want), strings.Contains(om, want))
		}
	}
	// The Go collector's counter whose OpenMetrics family would be named
	// like its gauge go_memstats_alloc_bytes is not served.
	if strings.Contains(text, collidingGoMetric) {
		t.Errorf("%s served", collidingGoMetric)
	}
	promtoolCheck(t, text)
	openMetricsCheck(t, om)
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

// openMetricsCheck parses an OpenMetrics exposition with the Python
// client's parser (Debian's python3-prometheus-client), which refuses
// what the specification refuses (a missing # EOF, two families of one
// name, a counter without _total).
func openMetricsCheck(t *testing.T, body string) {
	t.Helper()
	py := "/usr/bin/python3" // Debian's, where python3-prometheus-client installs
	if _, err := os.Stat(py); err != nil {
		testenv.Unmet(t, "no /usr/bin/python3 (apt-get install python3-prometheus-client)")
		return
	}
	const script = `
import sys
try:
    from prometheus_client.openmetrics import parser
except ImportError:
    print("no prometheus_client"); sys.exit(3)
fams = list(parser.text_string_to_metric_families(sys.stdin.read()))
print(len(fams), "families", sum(len(f.samples) for f in fams), "samples")
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 3 {
		testenv.Unmet(t, "python3-prometheus-client is not installed (apt-get install python3-prometheus-client)")
		return
	}
	if err != nil {
		t.Errorf("OpenMetrics parser: %v\n%s", err, out)
	}
}

// TestWebConfigTLSAndBasicAuth serves /metrics with an exporter-toolkit
// web configuration (a certificate made here, a bcrypt password): a
// scrape needs TLS and the password; a bad configuration fails Listen
// before anything is bound.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certPEM := writeCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	writeFile(t, cfg, fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prometheus: %s\n",
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), hash))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Listen(ctx, ListenOptions{Addr: "127.0.0.1:0", WebConfigFile: cfg}, New(record.Header{Host: "h"}, Options{AnalyzeEvery: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Errorf("URL %s, want https://127.0.0.1:PORT/metrics", s.URL())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}

	status := func(client *http.Client, url, user, pass string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(c, s.URL(), "", ""); got != http.StatusUnauthorized {
		t.Errorf("no password: %d, want 401", got)
	}
	if got := status(c, s.URL(), "prometheus", "wrong"); got != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", got)
	}
	if got := status(c, s.URL(), "prometheus", "s3cret"); got != http.StatusOK {
		t.Errorf("right password: %d, want 200", got)
	}
	// Plain HTTP to the TLS port: Go's server answers 400, serves nothing.
	if got := status(http.DefaultClient, "http://"+s.Addr()+"/metrics", "prometheus", "s3cret"); got != http.StatusBadRequest {
		t.Errorf("plain HTTP: %d, want 400", got)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL(), nil)
	req.SetBasicAuth("prometheus", "s3cret")
	req.Header.Set("Accept", prometheusAccept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `memdiag_host_info{host="h"`) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/openmetrics-text") {
		t.Errorf("authorized scrape: %s\n%s", resp.Header.Get("Content-Type"), tail(string(body)))
	}

	// Bad configurations: Listen fails and binds nothing.
	for name, content := range map[string]string{
		"missing key file": fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\n", filepath.Join(dir, "cert.pem"), filepath.Join(dir, "nokey.pem")),
		"unknown field":    "tls_server_config:\n  certfile: x\n",
		"plain password":   "basic_auth_users:\n  prometheus: s3cret\n",
	} {
		bad := filepath.Join(dir, "bad.yml")
		writeFile(t, bad, content)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if s2, err := Listen(ctx, ListenOptions{Addr: addr, WebConfigFile: bad}, New(record.Header{}, Options{AnalyzeEvery: -1})); err == nil {
			s2.Close()
			t.Errorf("%s: Listen accepted\n%s", name, content)
		} else if !strings.Contains(err.Error(), "--web.config.file "+bad) {
			t.Errorf("%s: error %q does not name the flag and file", name, err)
		}
	}
}

// TestWebConfigBasicAuthOnly: basic auth without TLS serves http:// and
// still asks for the password.
func TestWebConfigBasicAuthOnly(t *testing.T) {
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	writeFile(t, cfg, fmt.Sprintf("basic_auth_users:\n  p: %s\n", hash))
	s, err := Listen(context.Background(), ListenOptions{Addr: "127.0.0.1:0", WebConfigFile: cfg}, New(record.Header{}, Options{AnalyzeEvery: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://") {
		t.Errorf("URL %s, want http://", s.URL())
	}
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no password: %s, want 401", resp.Status)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// (dir/cert.pem, dir/key.pem) and returns the certificate's PEM.
func writeCert(t *testing.T, dir string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "memdiag test"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	writeFile(t, filepath.Join(dir, "cert.pem"), string(certPEM))
	writeFile(t, filepath.Join(dir, "key.pem"), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	return certPEM
}

// TestJobLabelsSurviveCrontabEdit: a line added above a cron job moves
// its file:line, but not its periodic_job label; the location label of
// memdiag_job_info follows the line.
func TestJobLabelsSurviveCrontabEdit(t *testing.T) {
	const job = "17 * * * * root cd / && run-parts --report /etc/cron.hourly\n"
	const other = "*/5 * * * * root /usr/local/bin/collect --fast\n"
	labels := func(crontab string) (map[string]string, string) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "etc/crontab"), crontab)
		jobs, err := timers.Inventory(root, timers.InventoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e := New(record.Header{Jobs: record.FromJobs(jobs)}, Options{AnalyzeEvery: -1, Now: func() time.Time { return time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC) }})
		_, fams := scrape(t, e)
		out := map[string]string{}
		for _, m := range fams[JobInfo].GetMetric() {
			var name, loc string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case JobLabel:
					name = l.GetValue()
				case LocationLabel:
					loc = l.GetValue()
				}
			}
			out[name] = loc
		}
		var next string
		for _, m := range fams[JobNextFiring].GetMetric() {
			next += m.GetLabel()[0].GetValue() + ";"
		}
		return out, next
	}
	before, nextBefore := labels("SHELL=/bin/sh\n" + job)
	after, nextAfter := labels("SHELL=/bin/sh\n" + other + "\n" + job)
	const want = "crontab: cd / && run-parts --report /etc/cron.hourly"
	if before[want] != "/etc/crontab:2" || after[want] != "/etc/crontab:4" {
		t.Errorf("job info before %v, after %v; want %q at /etc/crontab:2, then :4", before, after, want)
	}
	if !strings.Contains(nextBefore, want+";") || !strings.Contains(nextAfter, want+";") {
		t.Errorf("%s labels before %q, after %q; want %q in both", JobNextFiring, nextBefore, nextAfter, want)
	}
}

func TestJobLabels(t *testing.T) {
	long := "/usr/bin/backup " + strings.Repeat("--exclude /very/long/path ", 10)
	jobs := []record.Job{
		{Name: "apt-daily.timer", Source: timers.Systemd, File: "lib/systemd/system/apt-daily.timer"},
		{Name: "cron.d/x:3", Source: timers.Cron, File: "etc/cron.d/x", Line: 3, Command: "  /bin/a   --b "},
		{Name: "cron.d/x:4", Source: timers.Cron, File: "etc/cron.d/x", Line: 4, Command: "/bin/a --b"},
		{Name: "crontabs/alice:1", Source: timers.Cron, File: "var/spool/cron/crontabs/alice", Line: 1, Command: long},
		{Name: "crontabs/alice:2", Source: timers.Cron, File: "var/spool/cron/crontabs/alice", Line: 2, Command: long + "x"},
		{Name: "crontab:9", Source: timers.Cron, File: "etc/crontab", Line: 9, Errors: []string{"bad"}},
	}
	got := jobLabels(jobs)
	for name, want := range map[string]string{
		"apt-daily.timer": "apt-daily.timer",
		"cron.d/x:3":      "cron.d/x: /bin/a --b",
		"cron.d/x:4":      "cron.d/x: /bin/a --b (2)",
		"crontab:9":       "crontab:9",
	} {
		if got[name] != want {
			t.Errorf("%s: label %q, want %q", name, got[name], want)
		}
	}
	a, b := got["crontabs/alice:1"], got["crontabs/alice:2"]
	if a == b || !strings.HasPrefix(a, "crontabs/alice: /usr/bin/backup --exclude") || len([]rune(a)) > len("crontabs/alice: ")+maxCommandLabel {
		t.Errorf("long commands: %q and %q; want distinct, cut to %d runes", a, b, maxCommandLabel)
	}
	if l := jobLocation(jobs[1]); l != "/etc/cron.d/x:3" {
		t.Errorf("location %q", l)
	}
	if l := jobLocation(jobs[0]); l != "/lib/systemd/system/apt-daily.timer" {
		t.Errorf("location %q", l)
	}
}

// TestAllInterfaces: the --listen addresses that bind every interface.
func TestAllInterfaces(t *testing.T) {
	for addr, want := range map[string]bool{
		":9840": true, "0.0.0.0:9840": true, "[::]:9840": true, "[::ffff:0.0.0.0]:1": true,
		"127.0.0.1:9840": false, "[::1]:9840": false, "localhost:9840": false, "10.0.0.5:9840": false, "9840": false,
	} {
		if got := AllInterfaces(addr); got != want {
			t.Errorf("AllInterfaces(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestListenWarning: every interface is warned of, saying whether
// --web.config.file guards it; this host only is not.
func TestListenWarning(t *testing.T) {
	if got := ListenWarning("127.0.0.1:9840", false); got != "" {
		t.Errorf("this host only: %q, want no warning", got)
	}
	want := "--listen :9840 serves on every network interface, to anyone who can reach it: no TLS, no authentication (--web.config.file); " +
		"the metrics name this host's processes and jobs. Use 127.0.0.1:9840 for this host only."
	if got := ListenWarning(":9840", false); got != want {
		t.Errorf("every interface, no TLS:\n%s\nwant\n%s", got, want)
	}
	if got := ListenWarning("0.0.0.0:9840", true); !strings.Contains(got, "serves on every network interface, with the TLS and authentication of --web.config.file;") {
		t.Errorf("every interface with TLS: %q", got)
	}
}
