package exposition

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server serves an Exporter's /metrics on one address.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen binds addr ("127.0.0.1:9465", ":9465") at once, so a bad or busy
// address is an error before the first sample, and serves /metrics (and a
// one-line page at /) until Close or ctx ends.
func Listen(ctx context.Context, addr string, e *Exporter) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "memdiag: metrics at /metrics")
	})
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		// Serve returns http.ErrServerClosed after Close; any other error
		// means the listener broke, and Prometheus reports the target down.
		_ = s.srv.Serve(ln)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// Addr is the address bound (with the port chosen for ":0").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving, waiting up to 2 s for scrapes in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
