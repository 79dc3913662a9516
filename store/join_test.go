package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// writeSegment writes a segment of dir with the samples at the given
// seconds after t0 (seq numbering them), the major-fault counter at
// 100 per second; close = false leaves it as a SIGKILL does (no end line).
func writeSegment(t *testing.T, dir string, t0 time.Time, secs []int, close bool) string {
	t.Helper()
	start := t0.Add(time.Duration(secs[0]) * time.Second)
	p := filepath.Join(dir, segmentName(start, 0))
	w, err := record.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&record.Header{Host: "h1", Start: start, Interval: time.Second, PageSize: 4096, ClockTicks: 100}); err != nil {
		t.Fatal(err)
	}
	for _, s := range secs {
		n := uint64(100 * s)
		if err := w.WriteSample(&record.Sample{Seq: s, Time: t0.Add(time.Duration(s) * time.Second), VMStat: &record.VMStat{Pgmajfault: &n}}); err != nil {
			t.Fatal(err)
		}
	}
	if close {
		if err := w.Close("segment switch: time"); err != nil {
			t.Fatal(err)
		}
	}
	// the modification time a recorder leaves: its last sample's
	last := t0.Add(time.Duration(secs[len(secs)-1]) * time.Second)
	if err := os.Chtimes(p, last, last); err != nil {
		t.Fatal(err)
	}
	return p
}

func seq(a, b int) []int {
	var s []int
	for i := a; i <= b; i++ {
		s = append(s, i)
	}
	return s
}

func TestJoin(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	// 06:00:00-06:00:10 and 06:00:10-06:00:20 share the switch sample at
	// :10; the second run was killed after :20; a third starts at :25.
	writeSegment(t, dir, t0, seq(0, 10), true)
	writeSegment(t, dir, t0, seq(10, 20), false)
	writeSegment(t, dir, t0, seq(25, 30), true)
	segs, err := Expand([]string{dir})
	if err != nil || len(segs) != 3 {
		t.Fatalf("Expand: %v %v", segs, err)
	}

	read := func(w Window) ([]record.Sample, *record.Recording) {
		t.Helper()
		j, err := Join(Select(segs, w), w)
		if err != nil {
			t.Fatal(err)
		}
		var got []record.Sample
		rec, err := j.Each(context.Background(), func(s *record.Sample) { got = append(got, *s) })
		if err != nil {
			t.Fatal(err)
		}
		return got, rec
	}
	secsOf := func(ss []record.Sample) []int {
		var out []int
		for _, s := range ss {
			out = append(out, int(s.Time.Sub(t0)/time.Second))
		}
		return out
	}

	// the whole store: :10 once, every interval's counter delta 100/s
	// across the join, the 5 s gap after the killed run said
	got, rec := read(Window{})
	if want := append(seq(0, 20), seq(25, 30)...); !equalInts(secsOf(got), want) {
		t.Fatalf("samples at %v, want %v", secsOf(got), want)
	}
	h := rec.Header
	for _, iv := range record.Intervals(&h, got) {
		dt := iv.End.Sub(iv.Start).Seconds()
		if d := iv.Start.Sub(t0); d == 9*time.Second || d == 10*time.Second {
			if dt != 1 {
				t.Errorf("interval at the join: %gs", dt)
			}
		}
	}
	if rec.End == nil || rec.End.Samples != 27 || rec.End.Reason != "segment switch: time" {
		t.Errorf("end = %+v, want the last segment's with 27 samples", rec.End)
	}
	warns := strings.Join(rec.Warnings, "\n")
	for _, want := range []string{"memdiag-20261201T060010Z.jsonl.gz has no end line", "memdiag-20261201T060025Z.jsonl.gz: 5s without samples before it"} {
		if !strings.Contains(warns, want) {
			t.Errorf("warnings lack %q:\n%s", want, warns)
		}
	}
	if strings.Contains(warns, "cut short") || strings.Contains(warns, "truncated") {
		t.Errorf("a killed middle segment is reported as damage:\n%s", warns)
	}

	// a window across the join: the sample before :05 leads, :15 is the
	// last; the first segment is read, the third is not
	w := Window{From: t0.Add(4500 * time.Millisecond), To: t0.Add(15 * time.Second)}
	if sel := Select(segs, w); len(sel) != 2 {
		t.Fatalf("Select kept %d segments, want 2", len(sel))
	}
	got, rec = read(w)
	if want := seq(4, 15); !equalInts(secsOf(got), want) {
		t.Fatalf("window samples at %v, want %v", secsOf(got), want)
	}
	if rec.End == nil || rec.End.Reason != "window" || rec.End.Samples != 12 {
		t.Errorf("end of a cut window = %+v", rec.End)
	}
	if !rec.Header.Start.Equal(w.From) {
		t.Errorf("header start %v, want the window's %v", rec.Header.Start, w.From)
	}

	// a window starting after the restart gap takes no lead from the
	// killed run
	got, _ = read(Window{From: t0.Add(22 * time.Second)})
	if want := seq(25, 30); !equalInts(secsOf(got), want) {
		t.Fatalf("after the gap: samples at %v, want %v", secsOf(got), want)
	}
	// a window after the last segment selects nothing
	if sel := Select(segs, Window{From: t0.Add(time.Hour)}); len(sel) != 0 {
		t.Errorf("Select after the end kept %d", len(sel))
	}
}

func TestJoinRefusesTwoHosts(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	writeSegment(t, dir, t0, seq(0, 3), true)
	p := filepath.Join(t.TempDir(), "other.jsonl")
	w, err := record.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&record.Header{Host: "h2", Start: t0.Add(5 * time.Second), Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSample(&record.Sample{Time: t0.Add(5 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	w.Close("duration")
	segs, err := Expand([]string{p, dir})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(segs[1].Path) != "other.jsonl" {
		t.Fatalf("a recording not named as a segment is ordered by its header's start: %v", segs)
	}
	j, err := Join(segs, Window{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = j.Each(context.Background(), func(*record.Sample) {})
	if err == nil || !strings.Contains(err.Error(), `recorded on host "h2"`) {
		t.Fatalf("joining two hosts: %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
