package memstate

import (
	"math"
	"testing"
)

// TestGrowthPointsPacked: points read back as added, in the order added,
// across falls, rises and the fields' extremes (the deltas wrap).
func TestGrowthPointsPacked(t *testing.T) {
	want := []growthPoint{
		{t: 1_700_000_000_000_000_000, anon: 4 << 30, rss: 5 << 30},
		{t: 1_700_000_001_000_000_000, anon: 3 << 30, rss: 6 << 30},
		{t: 1_699_999_999_000_000_000, anon: 0, rss: math.MaxUint64},
		{t: math.MinInt64, anon: math.MaxUint64, rss: 0},
		{t: math.MaxInt64, anon: 1, rss: 1},
	}
	var gp growthProc
	for _, p := range want {
		gp.add(p)
	}
	got := gp.points(nil)
	if len(got) != len(want) {
		t.Fatalf("got %d points, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(gp.pts) >= 24*len(want) {
		t.Errorf("%d bytes for %d points: not smaller than unpacked", len(gp.pts), len(want))
	}
}
