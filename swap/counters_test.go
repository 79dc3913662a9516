package swap

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/lru"
)

func u(x uint64) *uint64 { return &x }

// captureTime reads the fixture's TIME file (CLOCK_REALTIME in ns).
func captureTime(t *testing.T, fixture string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Root(t, fixture), "TIME"))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns)
}

func vmstat(t *testing.T, fixture string) *lru.VMStat {
	t.Helper()
	c, err := lru.NewCollector(fixtures.Proc(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Between the two captures of the hog the swap file filled: pswpout went
// from 12154 to 32945 pages in 1.151581560 s (the TIME files), and pswpin
// stayed at 68.
func TestRatesBetweenHogCaptures(t *testing.T) {
	t0, t1 := captureTime(t, "linux-6.18-hog-t0"), captureTime(t, "linux-6.18-hog-t1")
	dt := t1.Sub(t0)
	if dt != 1151581560*time.Nanosecond {
		t.Fatalf("dt = %v, want 1.15158156s from the TIME files", dt)
	}
	got := RatesBetween(vmstat(t, "linux-6.18-hog-t0"), vmstat(t, "linux-6.18-hog-t1"), dt, 4096)

	outPages := (32945.0 - 12154.0) / 1.15158156
	want := Rates{
		In:  Rate{PagesPerSec: 0, BytesPerSec: 0, OK: true},
		Out: Rate{PagesPerSec: outPages, BytesPerSec: outPages * 4096, OK: true},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) })
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("RatesBetween mismatch (-want +got):\n%s", diff)
	}
	// 20791 pages in 1.15 s is about 18054 pages/s, 74 MB/s.
	if math.Round(got.Out.PagesPerSec) != 18054 {
		t.Errorf("Out.PagesPerSec = %v, want ≈ 18054", got.Out.PagesPerSec)
	}
}

func TestRatesBetweenUnknown(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur *lru.VMStat
		dt        time.Duration
	}{
		{"counter went backwards", &lru.VMStat{Pswpin: u(10), Pswpout: u(500)}, &lru.VMStat{Pswpin: u(9), Pswpout: u(3)}, time.Second},
		{"counter absent", &lru.VMStat{}, &lru.VMStat{}, time.Second},
		{"absent in one read", &lru.VMStat{Pswpin: u(1), Pswpout: u(1)}, &lru.VMStat{}, time.Second},
		{"zero interval", &lru.VMStat{Pswpin: u(1), Pswpout: u(1)}, &lru.VMStat{Pswpin: u(2), Pswpout: u(2)}, 0},
		{"no previous sample", nil, &lru.VMStat{Pswpin: u(2), Pswpout: u(2)}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RatesBetween(tt.prev, tt.cur, tt.dt, 4096)
			if diff := cmp.Diff(Rates{}, got); diff != "" {
				t.Errorf("RatesBetween = %+v, want both unknown (-want +got):\n%s", got, diff)
			}
		})
	}
}

func TestRatesBetweenPageSize(t *testing.T) {
	prev := &lru.VMStat{Pswpin: u(100), Pswpout: u(1000)}
	cur := &lru.VMStat{Pswpin: u(104), Pswpout: u(1100)}
	got := RatesBetween(prev, cur, 2*time.Second, 65536) // a 64 KiB-page arm64 or ppc64 host
	want := Rates{
		In:  Rate{PagesPerSec: 2, BytesPerSec: 2 * 65536, OK: true},
		Out: Rate{PagesPerSec: 50, BytesPerSec: 50 * 65536, OK: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RatesBetween mismatch (-want +got):\n%s", diff)
	}
}
