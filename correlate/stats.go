package correlate

import (
	"math"
	"slices"
)

// madScale turns a median absolute deviation into a standard deviation for
// normally distributed data.
const madScale = 1.4826

// median of xs (which it sorts a copy of); NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// medMAD returns the median and the median absolute deviation of xs.
func medMAD(xs []float64) (med, mad float64) {
	med = median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return med, median(dev)
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
