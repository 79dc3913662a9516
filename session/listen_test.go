package session

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStartListen: Options.ListenAddr is served from Start on (the URL in
// MetricsURL) until Close; an address that cannot be bound fails Start.
func TestStartListen(t *testing.T) {
	o := Options{Root: "../testdata/linux-6.18", Interval: 1e9, NoTimers: true, Events: "off", ListenAddr: "127.0.0.1:0", Stderr: io.Discard}
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.MetricsURL, "http://127.0.0.1:") {
		s.Close()
		t.Fatalf("MetricsURL %q", s.MetricsURL)
	}
	resp, err := http.Get(s.MetricsURL)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", s.MetricsURL, resp.Status)
	}
	s.Close()
	if resp, err := http.Get(s.MetricsURL); err == nil {
		resp.Body.Close()
		t.Errorf("still served after Close")
	}
	o.ListenAddr = "256.0.0.1:1"
	if s, err := Start(context.Background(), o); err == nil {
		s.Close()
		t.Error("Start with an address that cannot be bound succeeded")
	}
}

// TestSayNotes: the sources' warnings one line each; where /metrics is
// served, with the warning for every interface when the address is one.
func TestSayNotes(t *testing.T) {
	var b strings.Builder
	s := &Session{opts: Options{Stderr: &b, ListenAddr: ":9840"}, Sources: &Sources{Warnings: []string{"not root: x", "victim: y"}}}
	s.SayMetrics()
	if b.Len() != 0 {
		t.Errorf("no listener, but said %q", b.String())
	}
	s.SayWarnings()
	s.MetricsURL = "http://localhost:9840/metrics"
	s.SayMetrics()
	want := "memdiag: warning: not root: x\nmemdiag: warning: victim: y\nmemdiag: metrics at http://localhost:9840/metrics\n" +
		"memdiag: warning: --listen :9840 serves on every network interface, to anyone who can reach it: no TLS, no authentication (--web.config.file); " +
		"the metrics name this host's processes and jobs. Use 127.0.0.1:9840 for this host only.\n"
	if b.String() != want {
		t.Errorf("said\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	s.opts.ListenAddr = "127.0.0.1:9840"
	s.SayMetrics()
	if b.String() != "memdiag: metrics at http://localhost:9840/metrics\n" {
		t.Errorf("this host only: %q", b.String())
	}
}
