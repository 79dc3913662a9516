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
