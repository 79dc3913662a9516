package exposition

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
)

// DefaultPort is the port memdiag's examples and docs use for --listen.
// 9465, the port the docs used first, is allocated on Prometheus's
// default-port list (the Hetzner Cloud controller manager); 9840 is not on
// the copy of that list this was checked against (docs/fleet.md).
const DefaultPort = 9840

// DefaultListen is the example --listen address: this host only.
var DefaultListen = "127.0.0.1:" + strconv.Itoa(DefaultPort)

// AllInterfaces reports whether addr ("host:port", as --listen takes it)
// binds every interface of the host: no host (":9840"), 0.0.0.0, or ::
// (which takes IPv4 too unless IPV6_V6ONLY). Such a listener serves the
// host's process names, job names and memory figures to every network
// it is on.
func AllInterfaces(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false // Listen says what is wrong with it
	}
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// ListenWarning is the warning for a --listen address that serves every
// network interface (AllInterfaces), "" for one that does not; tls says
// whether --web.config.file guards it with TLS and authentication.
func ListenWarning(addr string, tls bool) string {
	if !AllInterfaces(addr) {
		return ""
	}
	guard := "with the TLS and authentication of --web.config.file"
	if !tls {
		guard = "to anyone who can reach it: no TLS, no authentication (--web.config.file)"
	}
	return fmt.Sprintf("--listen %s serves on every network interface, %s; "+
		"the metrics name this host's processes and jobs. Use %s for this host only.", addr, guard, DefaultListen)
}

// ListenOptions are the settings of the /metrics listener.
type ListenOptions struct {
	// Addr is the address to bind ("127.0.0.1:9840", ":9840", ":0").
	Addr string
	// WebConfigFile is an exporter-toolkit web configuration (TLS,
	// basic auth; --web.config.file, as node_exporter and every
	// exporter-toolkit exporter read it). "" serves plain HTTP.
	WebConfigFile string
	// ErrLog gets exporter-toolkit's warnings and errors (a failed
	// TLS handshake, a bad password); nil discards them.
	ErrLog io.Writer
}

// Server serves an Exporter's /metrics on one address.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	tls  bool
	done chan struct{}
}

// Listen binds o.Addr at once and checks o.WebConfigFile (its YAML, the
// certificate and key it names, its users' bcrypt hashes), so a bad or
// busy address or a bad web configuration is an error before the first
// sample. It serves /metrics (and a one-line page at /) until Close or
// ctx ends: the text format, or OpenMetrics when the scraper asks for it
// (Prometheus does), with the process_* and go_* metrics of memdiag
// itself beside the exporter's.
func Listen(ctx context.Context, o ListenOptions, e *Exporter) (*Server, error) {
	tlsOn, err := checkWebConfig(o.WebConfigFile)
	if err != nil {
		return nil, fmt.Errorf("--web.config.file %s: %w", o.WebConfigFile, err)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", o.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(e))
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
		tls:  tlsOn,
		done: make(chan struct{}),
	}
	errLog := o.ErrLog
	if errLog == nil {
		errLog = io.Discard
	}
	// exporter-toolkit says "Listening on", "TLS is enabled" at Info on
	// every start; memdiag says where it serves itself (URL).
	logger := slog.New(slog.NewTextHandler(errLog, &slog.HandlerOptions{Level: slog.LevelWarn}))
	file := o.WebConfigFile
	flags := &web.FlagConfig{WebConfigFile: &file}
	go func() {
		defer close(s.done)
		// Serve returns http.ErrServerClosed after Close; any other error
		// means the listener broke, and Prometheus reports the target down.
		if err := web.Serve(ln, s.srv, flags, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving /metrics stopped", "err", err)
		}
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

// checkWebConfig validates a web configuration file as exporter-toolkit
// will read it, and says whether it turns TLS on.
func checkWebConfig(path string) (tlsOn bool, err error) {
	if path == "" {
		return false, nil
	}
	if err := web.Validate(path); err != nil {
		return false, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var c web.Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return false, err
	}
	return c.TLSConfig.IsEnabled(), nil
}

// Addr is the address bound (with the port chosen for ":0").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is where the metrics are: http:// or, with TLS, https://ADDR/metrics.
func (s *Server) URL() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return scheme + "://" + s.Addr() + "/metrics"
}

// Close stops serving, waiting up to 2 s for scrapes in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
