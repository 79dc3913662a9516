package exposition

import (
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
	}
	for b.Loop() {
		e.mu.Lock()
		e.lastRun = time.Time{}
		e.mu.Unlock()
		feed()
	}
}
