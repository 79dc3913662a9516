package correlate

import "testing"

// BenchmarkSeriesAdd: Series.Add over every sample of the union case, a
// fresh series each loop, as analyze folds in a recording read as a
// stream; allocations reported per loop and time per sample.
func BenchmarkSeriesAdd(b *testing.B) {
	var t testing.T
	rec := unionCase().build(&t)
	b.ReportAllocs()
	for b.Loop() {
		sr := NewSeries(rec.Header)
		for i := range rec.Samples {
			sr.Add(&rec.Samples[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rec.Samples)), "ns/sample")
}
