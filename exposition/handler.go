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
	return promhttp.HandlerFor(prometheus.Gatherers{e.Registry(), withoutFamily(self, collidingGoMetric)}, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
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
