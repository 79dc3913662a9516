package exposition

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// BenchmarkAnalyzeWindow is the cost of one live analysis over a full
// window: 1 h of 1 s samples (the union fixture's samples, re-timed and
// repeated), the most an Exporter analyses every AnalyzeEvery.
//
//	go test ./exposition -run XXX -bench AnalyzeWindow -benchtime 5x
func BenchmarkAnalyzeWindow(b *testing.B) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	rec.Header.Interval = time.Second
	e := New(rec.Header, Options{Window: 4 * time.Hour, AnalyzeEvery: 24 * time.Hour})
	t0 := rec.Samples[0].Time
	n := 0
	feed := func() {
		s := rec.Samples[n%len(rec.Samples)]
		s.Time, s.Seq = t0.Add(time.Duration(n)*time.Second), n
		e.Observe(&s)
		n++
	}
	for n < 3600 {
		feed()
		e.an.wait()
	}
	for b.Loop() {
		e.an.run.Lock()
		e.an.lastRun = time.Time{}
		e.an.run.Unlock()
		feed()
		e.an.wait()
	}
}

// BenchmarkScrape is the cost of one /metrics request, rendered from the
// view the sampler published: an exporter fed the union fixture (its
// jobs, units, culprits), scraped by one client and by many at once
// (-cpu). Neither takes a lock the sampler waits on.
//
//	go test ./exposition -run XXX -bench Scrape -benchmem
func BenchmarkScrape(b *testing.B) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	end := rec.Samples[len(rec.Samples)-1].Time
	e := New(rec.Header, Options{Window: 24 * time.Hour, Now: func() time.Time { return end }})
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
	}
	e.an.wait()
	h := e.Handler()
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.Run("one", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code)
			}
		}
	})
	// render: each request after a new sample's view, as Prometheus's
	// scrape every second is (the answers kept for a burst do not serve
	// it): the gathering and encoding of every family.
	b.Run("render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.mu.Lock()
			e.publish()
			e.mu.Unlock()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
				if w.Code != 200 {
					b.Error(w.Code)
					return
				}
			}
		})
	})
}

// BenchmarkObserve is the sampler's cost of one sample in the exporter:
// the counters, the view published for scrapes and the sample queued for
// the analysis (which runs elsewhere).
func BenchmarkObserve(b *testing.B) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	e := New(rec.Header, Options{AnalyzeEvery: -1})
	t0 := rec.Samples[0].Time
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		s := rec.Samples[n%len(rec.Samples)]
		s.Time, s.Seq = t0.Add(time.Duration(n)*time.Second), n
		e.Observe(&s)
		n++
	}
}
