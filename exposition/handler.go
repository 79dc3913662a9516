package exposition

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Handler is /metrics as the listener serves it: the exporter's registry
// and memdiag's own process_* (CPU, RSS, open files, start time: its
// cost, as node_exporter shows its own) and go_* (runtime) metrics,
// rendered in the format the scraper asks for. Prometheus asks for
// OpenMetrics first (its Accept header), and gets it; a client that asks
// for nothing, or for text/plain, gets the text format 0.0.4.
func Handler(e *Exporter) http.Handler {
	self := prometheus.NewRegistry()
	self.MustRegister(
		selfCollector{proc: "/proc"}, // collectors.NewProcessCollector's metrics, cheaper (self.go)
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/allocs:bytes$`)})),
	)
	return oneAtATime(e, promhttp.HandlerFor(prometheus.Gatherers{e.Registry(), withoutFamily(self, collidingGoMetric)}, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	}))
}

// oneAtATime serves one request at a time; the others wait their turn
// (parked, using no CPU) until theirs or until their client goes away.
// Each scrape gathers and encodes every family; 200 at once were 200
// runnable goroutines that the sampler's goroutine queued behind on a
// loaded 2-core host, and a sample came a whole interval late
// (TestScrapesDoNotDelaySampling). promhttp's MaxRequestsInFlight would
// answer the surplus 503 instead; a scraper sending several requests at
// once (two Prometheus servers, a dashboard) gets every answer this way.
//
// A request whose turn comes while the exporter's state (the sample last
// published and the analysis last finished) is the one an earlier answer
// of the same negotiation (Accept, Accept-Encoding) was rendered from,
// less than maxRenderAge ago, gets that answer's bytes: a burst of 200
// renders once per sample, and a Prometheus scrape queued behind it waits
// for copies, not for 200 renders (the 1-hour soak's failed scrapes,
// docs/benchmarks.md). The process_* and go_* values it holds are then
// up to maxRenderAge old.
func oneAtATime(e *Exporter, h http.Handler) http.Handler {
	turn := make(chan struct{}, 1)
	var c renderCache // used only within the turn
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case turn <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-turn }()
		c.serve(e, h, w, r)
	})
}

// maxRenderAge is how long a rendered answer is reused for an unchanged
// state (one default sampling interval).
const maxRenderAge = time.Second

// maxRenderKeys bounds the negotiations kept per state.
const maxRenderKeys = 8

// renderCache holds the answers rendered from one exporter state.
type renderCache struct {
	cur     *view
	found   *found
	at      time.Time
	answers map[string]*rendered
}

// rendered is one answer: its status, headers and body.
type rendered struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (a *rendered) Header() http.Header         { return a.header }
func (a *rendered) Write(b []byte) (int, error) { return a.body.Write(b) }
func (a *rendered) WriteHeader(status int)      { a.status = status }

func (c *renderCache) serve(e *Exporter, h http.Handler, w http.ResponseWriter, r *http.Request) {
	cur, fd, now := e.cur.Load(), e.an.found.Load(), time.Now()
	if cur != c.cur || fd != c.found || now.Sub(c.at) >= maxRenderAge || now.Before(c.at) {
		c.cur, c.found, c.at, c.answers = cur, fd, now, map[string]*rendered{}
	}
	key := r.Method + "\x00" + r.Header.Get("Accept") + "\x00" + r.Header.Get("Accept-Encoding")
	a := c.answers[key]
	if a == nil {
		a = &rendered{status: http.StatusOK, header: http.Header{}}
		h.ServeHTTP(a, r)
		if a.status == http.StatusOK && len(c.answers) < maxRenderKeys {
			c.answers[key] = a
		}
	}
	for k, v := range a.header {
		w.Header()[k] = slices.Clone(v)
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body.Bytes()) // the client went away: nothing to do
}

// collidingGoMetric is the Go collector's counter whose OpenMetrics family
// name (the name without _total) is its gauge go_memstats_alloc_bytes:
// two families of one name, which OpenMetrics parsers (promtool's, Python's)
// refuse (client_golang issue 829, open). The same count is served as
// go_gc_heap_allocs_bytes_total, from runtime/metrics /gc/heap/allocs:bytes.
const collidingGoMetric = "go_memstats_alloc_bytes_total"

// withoutFamily gathers g less the family named name.
func withoutFamily(g prometheus.Gatherer, name string) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == name }), err
	})
}
