package latency

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer starts a server on 127.0.0.1 running h and counts the
// connections it accepts and the requests in flight at once.
type countingServer struct {
	*httptest.Server
	conns, inFlight, maxInFlight atomic.Int32
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			m := s.maxInFlight.Load()
			if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start() // httptest listens on 127.0.0.1
	t.Cleanup(s.Close)
	return s
}

func runProbe(t *testing.T, url string, opts ProbeOptions, n int) []Request {
	t.Helper()
	p, err := NewProbe(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	out := make(chan Request)
	done := make(chan error)
	go func() { done <- p.Run(ctx, out) }()
	var got []Request
	for len(got) < n {
		got = append(got, <-out)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	return got
}

func TestProbeLatencyOneConnection(t *testing.T) {
	const sleep = 30 * time.Millisecond
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(sleep)
		w.Write(make([]byte, 64<<10)) // a body that must be read for keep-alive
	})
	const interval = 10 * time.Millisecond
	got := runProbe(t, s.URL+"/health", ProbeOptions{Interval: interval}, 6)
	for i, q := range got {
		if q.Latency < sleep || q.Status != 200 || q.Err {
			t.Errorf("request %d: latency %v status %d err %v; want ≥ %v, 200, no error", i, q.Latency, q.Status, q.Err, sleep)
		}
		// At most one request in flight: each starts after the previous
		// one ended and at least Interval after it started.
		if i > 0 {
			prev := got[i-1]
			if q.Start.Before(prev.Start.Add(max(interval, prev.Latency))) {
				t.Errorf("request %d started %v after the previous one (latency %v)", i, q.Start.Sub(prev.Start), prev.Latency)
			}
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("probe opened %d connections, want 1 (keep-alive)", n)
	}
	if n := s.maxInFlight.Load(); n != 1 {
		t.Errorf("%d requests in flight at once, want 1", n)
	}
}

func TestProbeStatusAndErrors(t *testing.T) {
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/down":
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/hang":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	})
	p, err := NewProbe(s.URL+"/down", ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Once(t.Context()); q.Status != 503 || !q.Err {
		t.Errorf("/down: status %d err %v, want 503 and Err", q.Status, q.Err)
	}
	// A redirect is not followed: the probe measures the URL given.
	p, _ = NewProbe(s.URL+"/moved", ProbeOptions{})
	if q := p.Once(t.Context()); q.Status != 302 || q.Err {
		t.Errorf("/moved: status %d err %v, want 302 and no Err", q.Status, q.Err)
	}
	const timeout = 50 * time.Millisecond
	p, _ = NewProbe(s.URL+"/hang", ProbeOptions{Timeout: timeout})
	if q := p.Once(t.Context()); q.Status != 0 || !q.Err || q.Latency < timeout {
		t.Errorf("/hang: status %d err %v latency %v; want 0, Err, ≥ %v", q.Status, q.Err, q.Latency, timeout)
	}

	// Nothing listening: a transport error.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p, _ = NewProbe("http://"+addr+"/", ProbeOptions{})
	if q := p.Once(t.Context()); q.Status != 0 || !q.Err {
		t.Errorf("closed port: status %d err %v, want 0 and Err", q.Status, q.Err)
	}
}

func TestNewProbeErrors(t *testing.T) {
	for _, u := range []string{"ftp://127.0.0.1/", "http://", "127.0.0.1:8080", "http://[::1"} {
		if _, err := NewProbe(u, ProbeOptions{}); err == nil {
			t.Errorf("NewProbe(%q) succeeded, want an error", u)
		}
	}
}
