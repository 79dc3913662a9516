package latency

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ProbeOptions configures a [Probe]. Zero values take the defaults.
type ProbeOptions struct {
	// Interval is the time from the start of one request to the start of
	// the next (--probe-interval); default 200 ms. A request slower than
	// Interval delays the next one: at most one request is in flight.
	Interval time.Duration
	// Timeout bounds each request, body included; default 5 s. A request
	// that times out is reported with Err set and the time it took.
	Timeout time.Duration
	// MaxBody is how much of a response body is read (and discarded) so
	// the connection can be reused; default 1 MiB. A longer body closes
	// the connection and counts its read time only up to MaxBody.
	MaxBody int64
}

// Probe measures the latency of repeated GETs of one URL. It keeps at
// most one connection (HTTP keep-alive, one request at a time), so it
// observes the service without loading it.
type Probe struct {
	url    string
	opts   ProbeOptions
	client *http.Client
	tr     *http.Transport
}

// NewProbe returns a Probe for rawURL (http or https). It fails when the
// URL does not parse or has no host. It does not connect.
func NewProbe(rawURL string, opts ProbeOptions) (*Probe, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("probe URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("probe URL %q: want http:// or https:// with a host", rawURL)
	}
	if opts.Interval <= 0 {
		opts.Interval = 200 * time.Millisecond
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	tr := &http.Transport{
		Proxy:               nil, // a probe measures the service, not a proxy
		DialContext:         (&net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: opts.Timeout,
		DisableCompression:  true,
	}
	return &Probe{
		url:  u.String(),
		opts: opts,
		tr:   tr,
		// No redirects: the latency is that of the URL asked for.
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

// Run sends a GET every Interval until ctx is done, and sends each
// outcome to out (blocking; a slow reader delays the probe, it never
// drops a result). Start is when the request was sent, Latency the time
// until the whole body was read (or the error), Status the HTTP status
// (0 without a response). Err is set for transport errors and timeouts
// and for statuses outside 200–399. Run returns ctx.Err() and does not
// close out.
func (p *Probe) Run(ctx context.Context, out chan<- Request) error {
	defer p.tr.CloseIdleConnections()
	next := time.Now()
	for {
		if d := time.Until(next); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		q := p.Once(ctx)
		if ctx.Err() != nil {
			return ctx.Err() // cut short by the end of the run, not by the service
		}
		select {
		case out <- q:
		case <-ctx.Done():
			return ctx.Err()
		}
		next = q.Start.Add(p.opts.Interval)
	}
}

// Once sends one GET and returns its outcome (see [Probe.Run]).
func (p *Probe) Once(ctx context.Context) Request {
	// start is taken before the deadline is set, so a request that runs
	// into the timeout measures at least the timeout.
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	q := Request{Start: start}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		q.Err, q.Latency = true, time.Since(start)
		return q
	}
	resp, err := p.client.Do(req)
	if err != nil {
		q.Err, q.Latency = true, time.Since(start)
		return q
	}
	q.Status = resp.StatusCode
	// Reading the body to its end lets the connection be reused; a body
	// longer than MaxBody is closed unread, which drops the connection.
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, p.opts.MaxBody))
	resp.Body.Close()
	q.Latency = time.Since(start)
	q.Err = err != nil || q.Status < 200 || q.Status > 399
	return q
}
