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
	var sc medScratch
	return sc.medMAD(xs)
}

// medScratch holds the buffers of medMAD for a caller that computes it
// many times (the rolling baseline: once per interval of a day).
type medScratch struct{ sorted, dev []float64 }

// medMAD is medMAD(xs), reusing sc's buffers.
func (sc *medScratch) medMAD(xs []float64) (med, mad float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	sc.sorted = append(sc.sorted[:0], xs...)
	med = sortedMedian(sc.sorted)
	sc.dev = sc.dev[:0]
	for _, x := range xs {
		sc.dev = append(sc.dev, math.Abs(x-med))
	}
	return med, sortedMedian(sc.dev)
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
