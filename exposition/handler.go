package exposition

import (
	"net/http"
	"regexp"
	"slices"

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
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/allocs:bytes$`)})),
	)
	return oneAtATime(promhttp.HandlerFor(prometheus.Gatherers{e.Registry(), withoutFamily(self, collidingGoMetric)}, promhttp.HandlerOpts{
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
func oneAtATime(h http.Handler) http.Handler {
	turn := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case turn <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-turn }()
		h.ServeHTTP(w, r)
	})
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
