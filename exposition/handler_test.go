package exposition

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memdiag/memdiag/record"
)

// countingCollector counts how often the registry is gathered.
type countingCollector struct{ n *atomic.Int64 }

var countDesc = prometheus.NewDesc("test_renders", "renders", nil, nil)

func (c countingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- countDesc }
func (c countingCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(countDesc, prometheus.GaugeValue, float64(c.n.Add(1)))
}

// A burst of scrapes of one state renders once per negotiation; the
// next sample's state is rendered again, and its value shows.
func TestBurstRendersOncePerState(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	e := New(record.Header{PageSize: 4096, Interval: time.Second}, Options{AnalyzeEvery: -1})
	var n atomic.Int64
	e.Registry().MustRegister(countingCollector{&n})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	get := func(accept string) string {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return ""
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("status %d, %v", resp.StatusCode, err)
		}
		return string(b)
	}
	e.Observe(&record.Sample{Time: t0})
	const om = "application/openmetrics-text;version=1.0.0"
	var wg sync.WaitGroup
	bodies := make([]string, 100)
	for i := range bodies {
		wg.Go(func() {
			if i%2 == 1 {
				bodies[i] = get(om)
			} else {
				bodies[i] = get("")
			}
		})
	}
	wg.Wait()
	// Within maxRenderAge the burst renders once per negotiation; a
	// slow test machine may cross it: then again, but far fewer times
	// than the 100 requests.
	if got := n.Load(); got < 2 || got > 10 {
		t.Errorf("100 scrapes of one state (two negotiations) rendered %d times; want 2 (a few more if a render aged past %s)", got, maxRenderAge)
	}
	for i, b := range bodies {
		if !strings.Contains(b, Samples+" 1") {
			t.Fatalf("scrape %d lacks %s 1:\n%s", i, Samples, b)
		}
		if i%2 == 1 && !strings.HasSuffix(b, "# EOF\n") {
			t.Errorf("scrape %d asked for OpenMetrics and got another format", i)
		}
	}
	before := n.Load()
	e.Observe(&record.Sample{Time: t0.Add(time.Second)})
	if b := get(""); !strings.Contains(b, Samples+" 2") || n.Load() != before+1 {
		t.Errorf("after the next sample: rendered %d more times (want 1), body lacks %s 2", n.Load()-before, Samples)
	}
}
