package memstate

import (
	"math"
	"reflect"
	"testing"
	"time"
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

// TestGrowthTrim: a series trimmed at a time fits as one fed only the
// points from that time on.
func TestGrowthTrim(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	var all, fresh GrowthSeries
	from := t0.Add(30 * time.Second)
	for i := range 60 {
		at := t0.Add(time.Duration(i) * time.Second)
		ps := []ProcRSS{{PID: 1, StartTicks: 5, Comm: "grow", AnonBytes: uint64(100+i) << 20, FileBytes: uint64(i) << 10, ShmemBytes: 7}}
		if i < 20 {
			ps = append(ps, ProcRSS{PID: 2, StartTicks: 6, Comm: "gone", AnonBytes: 1 << 20})
		}
		all.Add(at, ps)
		if !at.Before(from) {
			fresh.Add(at, ps)
		}
	}
	all.Trim(from)
	got, want := all.Fit(GrowthOptions{}), fresh.Fit(GrowthOptions{})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trimmed: %+v\nfresh:   %+v", got, want)
	}
	if len(got) != 1 || got[0].Points != 30 || got[0].FileFirstBytes != 30<<10 || !got[0].First.Equal(from) {
		t.Errorf("trimmed fit %+v: want one process, 30 points from %s, file 30 KiB first", got, from)
	}
}
