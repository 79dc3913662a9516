package latency

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// same reports whether got is want as far as anything reads a request:
// the instant, its formatting with a zone, latency, status and error.
func same(got, want Request) bool {
	const layout = "2006-01-02 15:04:05.000000000 -07:00 MST"
	return got.Start.Equal(want.Start) && got.Start.Format(layout) == want.Start.Format(layout) &&
		got.Latency == want.Latency && got.Status == want.Status && got.Err == want.Err
}

func TestRequestsRoundTrip(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	base := time.Date(2026, 12, 6, 20, 0, 0, 123456789, time.UTC)
	var want []Request
	for i := range 3*reqChunk + 17 {
		q := Request{Start: base.Add(time.Duration(i) * time.Millisecond), Latency: time.Duration(i) * time.Microsecond, Status: 200 + i%300, Err: i%7 == 0}
		switch i % 5 {
		case 1:
			// A new fixed zone per request, as time.Parse makes for a
			// foreign offset: more than maxZones pointers.
			q.Start = q.Start.In(time.FixedZone("", (i%50-25)*1800))
		case 2:
			q.Start = q.Start.In(ny)
		case 3:
			q.Start = q.Start.Local()
		}
		want = append(want, q)
	}
	want = append(want,
		Request{Start: time.Time{}, Latency: time.Second, Status: 0, Err: true},                          // year 1: beyond Unix ns
		Request{Start: time.Date(3000, 1, 1, 0, 0, 0, 5, ny), Status: 500},                               // beyond too
		Request{Start: base, Status: math.MaxInt32 + 1},                                                  // status beyond int32
		Request{Start: base.In(ny).Add(-190 * 24 * time.Hour), Latency: -1, Status: math.MinInt32},       // summer time in New York
		Request{Start: time.Unix(0, math.MinInt64), Latency: math.MaxInt64, Status: math.MaxInt32},       // the first Unix ns
		Request{Start: time.Unix(0, math.MaxInt64).UTC(), Latency: math.MinInt64, Status: -7, Err: true}, // the last
	)
	r := RequestsOf(want)
	if r.Len() != len(want) {
		t.Fatalf("Len %d, want %d", r.Len(), len(want))
	}
	if len(r.odd) != 3 {
		t.Errorf("%d requests held whole, want 3 (two starts beyond Unix ns, one status beyond int32)", len(r.odd))
	}
	for i, w := range want {
		if g := r.At(i); !same(g, w) {
			t.Fatalf("request %d: got %+v, want %+v", i, g, w)
		}
	}
	if len(r.zones) > maxZones+60 {
		t.Errorf("%d zones kept, want at most %d: fixed zones beyond maxZones are keyed by offset", len(r.zones), maxZones+60)
	}

	// keep: every third, odd ones among them, in order.
	r.keep(func(q Request) bool { return q.Latency%3 == 0 || q.Start.IsZero() })
	var kept []Request
	for _, w := range want {
		if w.Latency%3 == 0 || w.Start.IsZero() {
			kept = append(kept, w)
		}
	}
	got := r.Slice()
	if len(got) != len(kept) {
		t.Fatalf("kept %d, want %d", len(got), len(kept))
	}
	for i := range kept {
		if !same(got[i], kept[i]) {
			t.Fatalf("kept request %d: got %+v, want %+v", i, got[i], kept[i])
		}
	}
	if len(r.odd) != 3 || len(r.rows) != (len(kept)+reqChunk-1)/reqChunk {
		t.Errorf("after keep: %d held whole, %d chunks; want 3 and %d", len(r.odd), len(r.rows), (len(kept)+reqChunk-1)/reqChunk)
	}
	// After keep, appending reuses the freed rows.
	r.Append(want[0])
	if g := r.At(r.Len() - 1); !same(g, want[0]) {
		t.Errorf("append after keep: got %+v, want %+v", g, want[0])
	}
}

// A shift that carries a start beyond Unix ns holds that request whole,
// and one back within them returns it to the columns.
func TestImportedShiftBeyondUnixNano(t *testing.T) {
	start := time.Date(2262, 4, 11, 0, 0, 0, 0, time.UTC)
	imp := &Imported{Requests: *RequestsOf([]Request{{Start: start, Latency: time.Millisecond, Status: 200}})}
	imp.Shift(48 * time.Hour)
	if g := imp.Requests.At(0); !g.Start.Equal(start.Add(48*time.Hour)) || len(imp.Requests.odd) != 1 {
		t.Fatalf("after +48h: %v, %d held whole; want %v, 1", g.Start, len(imp.Requests.odd), start.Add(48*time.Hour))
	}
	imp.Shift(-48 * time.Hour)
	if g := imp.Requests.At(0); !g.Start.Equal(start) || len(imp.Requests.odd) != 0 || g.Status != 200 || g.Latency != time.Millisecond {
		t.Fatalf("after −48h: %+v, %d held whole; want %v and none", g, len(imp.Requests.odd), start)
	}
}

func FuzzRequestsRoundTrip(f *testing.F) {
	f.Add(int64(1796166000), int64(100), 3600, 200, false, int64(50e6))
	f.Add(int64(-62135596800), int64(0), 0, 0, true, int64(-1))
	f.Add(int64(math.MaxInt64/1_000_000_000+1), int64(999999999), -36000, math.MaxInt32+1, false, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, sec, nsec int64, off, status int, failed bool, lat int64) {
		var want []Request
		for i := range 3 {
			loc := time.FixedZone(fmt.Sprint("Z", off%7), off%(18*3600))
			want = append(want, Request{Start: time.Unix(sec, nsec).In(loc).Add(time.Duration(i)), Latency: time.Duration(lat), Status: status + i, Err: failed})
		}
		r := RequestsOf(want)
		for i, w := range want {
			if g := r.At(i); !same(g, w) {
				t.Fatalf("request %d: got %+v, want %+v", i, g, w)
			}
		}
	})
}

// BenchmarkRequestsAppend holds 100,000 requests as columns, and as the
// []Request the import kept before (for reference): bytes and
// allocations a loop, with -benchmem.
func BenchmarkRequestsAppend(b *testing.B) {
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	q := func(i int) Request {
		return Request{Start: base.Add(time.Duration(i) * 86 * time.Millisecond), Latency: 13 * time.Millisecond, Status: 200}
	}
	const n = 100_000
	b.Run("columns", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r Requests
			for i := range n {
				r.Append(q(i))
			}
			if r.Len() != n {
				b.Fatal(r.Len())
			}
		}
	})
	b.Run("slice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r []Request
			for i := range n {
				r = append(r, q(i))
			}
			if len(r) != n {
				b.Fatal(len(r))
			}
		}
	})
}
