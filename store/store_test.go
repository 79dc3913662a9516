package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/units"
)

func TestNameRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 25, 3, 999, time.FixedZone("CET", 3600))
	if got, want := segmentName(at, 0), "memdiag-20261201T052503Z.jsonl.gz"; got != want {
		t.Fatalf("Name = %s, want %s", got, want)
	}
	for _, n := range []int{0, 1, 12} {
		start, gotN, ok := parseSegmentName(segmentName(at, n))
		if !ok || gotN != n || !start.Equal(at.Truncate(time.Second)) {
			t.Errorf("parseSegmentName(segmentName(at, %d)) = %v %d %v", n, start, gotN, ok)
		}
	}
	for _, bad := range []string{"memdiag-20261201T052503Z.jsonl", "memdiag-20261301T052503Z.jsonl.gz",
		"memdiag-20261201T052503Z-0.jsonl.gz", "memdiag-20261201T052503Z-01.jsonl.gz", "memdiag-20261201T052503Z-x.jsonl.gz",
		"memdiag-20261201T052503Z-.jsonl.gz", "x-20261201T052503Z.jsonl.gz", ".lock"} {
		if _, _, ok := parseSegmentName(bad); ok {
			t.Errorf("parseSegmentName(%q) accepted", bad)
		}
	}
}

func TestBoundary(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 25, 3, 0, time.UTC)
	for _, c := range []struct {
		len  time.Duration
		want string
	}{{time.Hour, "07:00:00"}, {10 * time.Second, "06:25:10"}, {24 * time.Hour, "00:00:00"}} {
		if got := Boundary(at, c.len).Format("15:04:05"); got != c.want {
			t.Errorf("Boundary(06:25:03, %s) = %s, want %s", c.len, got, c.want)
		}
	}
}

// segment writes a file named for start, of size bytes, last written at last.
func segment(t *testing.T, dir string, start time.Time, n, size int, last time.Time) string {
	t.Helper()
	p := filepath.Join(dir, segmentName(start, n))
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, last, last); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestListAndPrune(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// five hourly segments of 1000 bytes (the third restarted once within
	// its second) and a file that is not a segment
	for i := range 4 {
		segment(t, dir, t0.Add(time.Duration(i)*time.Hour), 0, 1000, t0.Add(time.Duration(i+1)*time.Hour))
	}
	segment(t, dir, t0.Add(2*time.Hour), 1, 1000, t0.Add(3*time.Hour))
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	segs, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range segs {
		names = append(names, filepath.Base(s.Path))
	}
	want := "memdiag-20261201T000000Z.jsonl.gz memdiag-20261201T010000Z.jsonl.gz memdiag-20261201T020000Z.jsonl.gz memdiag-20261201T020000Z-1.jsonl.gz memdiag-20261201T030000Z.jsonl.gz"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("List:\n got %s\nwant %s", got, want)
	}
	current := segs[4].Path
	now := t0.Add(4*time.Hour + 30*time.Minute)
	// age: the first segment's last sample is 3h30m old, the second's 2h30m
	removed, total, err := Retention{MaxAge: 3 * time.Hour}.Prune(dir, current, now)
	if err != nil || len(removed) != 1 || filepath.Base(removed[0].Path) != names[0] || removed[0].Why != "older than 3h" || total != 4000 {
		t.Fatalf("age prune: removed %v total %d err %v", removed, total, err)
	}
	// size: 4000 bytes held, 2500 allowed: the two oldest go, never the current one
	removed, total, err = Retention{MaxBytes: 2500}.Prune(dir, current, now)
	if err != nil || len(removed) != 2 || filepath.Base(removed[0].Path) != names[1] || filepath.Base(removed[1].Path) != names[2] || total != 2000 {
		t.Fatalf("size prune: removed %v total %d err %v", removed, total, err)
	}
	// a bound below the current segment alone removes all but it
	removed, total, err = Retention{MaxBytes: 10}.Prune(dir, current, now)
	if err != nil || len(removed) != 1 || total != 1000 {
		t.Fatalf("tiny bound: removed %v total %d err %v", removed, total, err)
	}
	if _, err := os.Stat(current); err != nil {
		t.Fatalf("current segment removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatalf("a file that is not a segment was removed: %v", err)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	f, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second open in this process
	// conflicts as a second recorder would.
	if _, err := Lock(dir); err == nil || !strings.Contains(err.Error(), "another memdiag record holds this store (PID ") {
		t.Fatalf("second Lock: %v", err)
	}
	f.Close()
	g, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	g.Close()
}

func TestFormatAge(t *testing.T) {
	for d, want := range map[time.Duration]string{7 * 24 * time.Hour: "7d", 36 * time.Hour: "36h", 90 * time.Second: "1m30s", 10 * time.Second: "10s", 2 * time.Hour: "2h", 30 * time.Minute: "30m"} {
		if got := FormatAge(d); got != want {
			t.Errorf("FormatAge(%s) = %q, want %q", d, got, want)
		}
	}
}

func FuzzParseSegmentName(f *testing.F) {
	for _, s := range []string{"memdiag-20261201T052503Z.jsonl.gz", "memdiag-20261201T052503Z-12.jsonl.gz", "memdiag-20261201T052503Z-0.jsonl.gz", ".lock", "memdiag-.jsonl.gz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		start, n, ok := parseSegmentName(name)
		if !ok {
			return
		}
		// a name accepted is the one Name writes for it
		if got := segmentName(start, n); got != name {
			t.Fatalf("parseSegmentName(%q) = %v, %d; Name gives %q", name, start, n, got)
		}
	})
}

// TestCheckSegmentAndBound: the flag errors of a store's segment length
// and retention, as *usage.Error naming the flags, and --max-size read
// into MaxBytes.
func TestCheckSegmentAndBound(t *testing.T) {
	var ue *usage.Error
	for _, c := range []struct {
		segment, interval time.Duration
		want              string
	}{
		{500 * time.Millisecond, 100 * time.Millisecond, "--segment 500ms is too short (at least 1s and two intervals)"},
		{time.Second, time.Second, "--segment 1s is too short (at least 1s and two intervals)"},
		{2 * time.Second, time.Second, ""},
	} {
		err := CheckSegment(c.segment, c.interval)
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &ue) || err.Error() != c.want) {
			t.Errorf("CheckSegment(%s, %s) = %v; want %q", c.segment, c.interval, err, c.want)
		}
	}
	r := Retention{MaxAge: 30 * time.Second}
	if err := r.Bound(time.Minute, ""); !errors.As(err, &ue) || err.Error() != "--max-age 30s is shorter than --segment 1m0s: every finished segment would be removed" {
		t.Errorf("Bound(max-age < segment) = %v", err)
	}
	r = Retention{MaxAge: 7 * units.Day}
	if err := r.Bound(time.Hour, "1XB"); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--max-size: ") {
		t.Errorf("Bound(--max-size 1XB) = %v", err)
	}
	if err := r.Bound(time.Hour, "1GiB"); err != nil || r.MaxBytes != 1<<30 {
		t.Errorf("Bound(1GiB) = %v, MaxBytes %d; want 1073741824", err, r.MaxBytes)
	}
	r = Retention{}
	for _, none := range []string{"", "0"} {
		if err := r.Bound(time.Hour, none); err != nil || r.MaxBytes != 0 {
			t.Errorf("Bound(%q) = %v, MaxBytes %d; want no bound", none, err, r.MaxBytes)
		}
	}
}
