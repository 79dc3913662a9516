package correlate

import (
	"math"
	"testing"
)

func TestBinomialTail(t *testing.T) {
	for _, c := range []struct {
		n, k int
		p    float64
		want float64
	}{
		{7, 5, 0.5, 29.0 / 128}, // (21+7+1)/2^7
		{7, 0, 0.3, 1},
		{3, 3, 0.1, 0.001},
		{10, 1, 0, 0},
		{4, 2, 1, 1},
	} {
		if got := BinomialTail(c.n, c.k, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("P(X ≥ %d | n=%d, p=%g) = %g, want %g", c.k, c.n, c.p, got, c.want)
		}
	}
}
