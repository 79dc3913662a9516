package correlate

import (
	"math"
	"slices"
)

// madScale turns a median absolute deviation into a standard deviation for
// normally distributed data.
const madScale = 1.4826

// median of xs (which it sorts a copy of); NaN when empty.
// Median is the median of xs (the mean of the middle two for an even
// count), NaN for none.
func Median(xs []float64) float64 { return median(xs) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return sortedMedian(slices.Clone(xs))
}

// medMAD returns the median and the median absolute deviation of xs.
func medMAD(xs []float64) (med, mad float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	med = sortedMedian(slices.Clone(xs))
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return med, sortedMedian(dev)
}

// sortedMedian sorts s and returns its median.
func sortedMedian(s []float64) float64 {
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// rollingWindow holds the last values of a series, in arrival order and
// sorted, for the median and MAD of a sliding window without sorting it
// at every step: detectSpikes' baseline, once per interval of a day
// (BenchmarkDetectSpikes). Its values must not be NaN.
type rollingWindow struct{ fifo, sorted []float64 }

// push adds x and drops the oldest value beyond size.
func (w *rollingWindow) push(x float64, size int) {
	i, _ := slices.BinarySearch(w.sorted, x)
	w.sorted = slices.Insert(w.sorted, i, x)
	w.fifo = append(w.fifo, x)
	if len(w.fifo) > size {
		old := w.fifo[0]
		w.fifo = w.fifo[1:]
		j, _ := slices.BinarySearch(w.sorted, old)
		w.sorted = slices.Delete(w.sorted, j, j+1)
	}
}

// medMAD is medMAD(w's values), the same float64s: the median from the
// sorted values, and the MAD as the middle of the deviations, which are
// two sorted runs on either side of the median (merged up to the
// middle instead of sorted).
func (w *rollingWindow) medMAD() (med, mad float64) {
	s := w.sorted
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	m := n / 2
	med = s[m]
	if n%2 == 0 {
		med = (s[m-1] + s[m]) / 2
	}
	// |x−med| grows away from the median on both sides (rounding is
	// monotone), so the deviations of s[:p] read backwards and of s[p:]
	// read forwards are each in order.
	p, _ := slices.BinarySearch(s, med)
	i, j := p-1, p
	var prev, cur float64
	for range m + 1 {
		if j >= n || i >= 0 && math.Abs(s[i]-med) <= math.Abs(s[j]-med) {
			prev, cur = cur, math.Abs(s[i]-med)
			i--
		} else {
			prev, cur = cur, math.Abs(s[j]-med)
			j++
		}
	}
	if n%2 == 1 {
		return med, cur
	}
	return med, (prev + cur) / 2
}

// known returns the values of xs that are not NaN.
func known(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}
