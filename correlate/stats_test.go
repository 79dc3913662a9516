package correlate

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// checkRolling pushes xs through a rollingWindow of size and checks its
// median and MAD at every step against medMAD of the same window: the
// same float64s, but for the sign of a zero (two orders of equal -0 and
// +0; detectSpikes' latencies are float64(time.Duration), never -0).
func checkRolling(t *testing.T, xs []float64, size int) {
	t.Helper()
	var w rollingWindow
	var hist []float64
	for i, x := range xs {
		w.push(x, size)
		hist = append(hist, x)
		if len(hist) > size {
			hist = hist[1:]
		}
		med, mad := w.medMAD()
		wmed, wmad := medMAD(hist)
		if !sameFloat(med, wmed) || !sameFloat(mad, wmad) {
			t.Fatalf("size %d, after value %d (%v): median %v, MAD %v; want %v, %v (window %v)", size, i, x, med, mad, wmed, wmad, hist)
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestRollingWindowMatchesMedMAD(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 5, 30, 31} {
		var xs []float64
		for range 2000 {
			switch r.IntN(4) {
			case 0: // ties
				xs = append(xs, float64(r.IntN(4)))
			case 1: // latencies in ns
				xs = append(xs, float64(r.Int64N(5e9)))
			case 2: // in seconds, negative too
				xs = append(xs, r.NormFloat64()*1e-3)
			default: // values whose midpoints round
				xs = append(xs, 0.1*float64(r.IntN(100)))
			}
		}
		checkRolling(t, xs, size)
	}
	var w rollingWindow
	if med, mad := w.medMAD(); !math.IsNaN(med) || !math.IsNaN(mad) {
		t.Errorf("empty window: %v, %v; want NaN, NaN", med, mad)
	}
}

func FuzzRollingWindow(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40"), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, size uint8) {
		var xs []float64
		for ; len(b) >= 8; b = b[8:] {
			x := math.Float64frombits(binary.LittleEndian.Uint64(b))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue // not a latency
			}
			xs = append(xs, x)
		}
		checkRolling(t, xs, int(size)%40+1)
	})
}

// BenchmarkDetectSpikes is the rolling baseline over a day of intervals
// at 1 s (86,399 latencies, the default window of 30).
func BenchmarkDetectSpikes(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	lat := make([]float64, 86399)
	for i := range lat {
		lat[i] = float64(10e6 + r.Int64N(5e6))
		if i%3600 < 60 {
			lat[i] *= 4
		}
	}
	o := Options{}.withDefaults()
	b.ReportAllocs()
	for b.Loop() {
		detectSpikes(lat, o)
	}
}
