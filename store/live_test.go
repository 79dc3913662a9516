package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

func TestHeld(t *testing.T) {
	dir := t.TempDir()
	if Held(dir) {
		t.Fatal("a store without a lock file is held")
	}
	f, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !Held(dir) {
		t.Fatal("a locked store is not held")
	}
	// Held asks without taking: a second recorder is still refused, and
	// the holder keeps the store.
	if _, err := Lock(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	f.Close()
	if Held(dir) {
		t.Fatal("a released store is held")
	}
	g, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after Held: %v", err)
	}
	g.Close()
}

// joinAll reads dir's segments in w as analyze and gate --recording do.
func joinAll(t *testing.T, dir string, w Window) ([]record.Sample, *record.Recording) {
	t.Helper()
	segs, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
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

func seqsOf(ss []record.Sample) (a, b int) { return ss[0].Seq, ss[len(ss)-1].Seq }

// The segment a running recorder writes has no end line and may end in
// the middle of a line: a window that reaches it reads it to its last
// whole sample, ends there as "live" and says so, and the gaps
// accounting sees nothing abnormal (gate judges it). A closed window
// that ends where the live segment starts is whole too.
func TestJoinLive(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	writeSegment(t, dir, t0, seq(0, 10), true)
	live := writeSegment(t, dir, t0, seq(10, 16), false)
	// half of the next line, as a recorder caught mid-write leaves it
	f, err := os.OpenFile(live, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0x12, 0x34, 0x56}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	lock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()

	abnormal := func(rec *record.Recording, ss []record.Sample) string {
		g := record.NewGaps(rec.Header)
		for i := range ss {
			g.Add(&ss[i])
		}
		return g.Abnormal(rec.End, rec.Warnings)
	}
	for _, c := range []struct {
		name        string
		w           Window
		first, last int
		reason      string
		note        string
	}{
		{"store", Window{}, 0, 16, ReasonLive, "live: up to 06:00:16 UTC (memdiag record is writing memdiag-20261201T060010Z.jsonl.gz; read up to its last flushed sample)"},
		{"from", Window{From: t0.Add(12 * time.Second)}, 11, 16, ReasonLive, "live: up to 06:00:16 UTC"},
		{"closed at the live start", Window{From: t0.Add(5 * time.Second), To: t0.Add(10 * time.Second)}, 4, 10, "window", ""},
		{"closed inside", Window{From: t0.Add(5 * time.Second), To: t0.Add(13 * time.Second)}, 4, 13, "window", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss, rec := joinAll(t, dir, c.w)
			if a, b := seqsOf(ss); a != c.first || b != c.last {
				t.Errorf("samples %d..%d, want %d..%d", a, b, c.first, c.last)
			}
			if rec.End == nil || rec.End.Reason != c.reason || rec.End.Samples != len(ss) {
				t.Errorf("end %+v, want %s with %d samples", rec.End, c.reason, len(ss))
			}
			notes := strings.Join(rec.Warnings, "\n")
			if c.note != "" && !strings.Contains(notes, c.note) {
				t.Errorf("warnings %q, want %q", rec.Warnings, c.note)
			}
			if c.note == "" && strings.Contains(notes, "live") {
				t.Errorf("a window before the live edge says live: %q", rec.Warnings)
			}
			if strings.Contains(notes, "killed") || strings.Contains(notes, "cut short") || strings.Contains(notes, "truncated") {
				t.Errorf("the live segment is called damaged: %q", rec.Warnings)
			}
			if why := abnormal(rec, ss); why != "" {
				t.Errorf("abnormal: %s", why)
			}
		})
	}

	// Without the lock the same segment is what a killed recorder left.
	lock.Close()
	ss, rec := joinAll(t, dir, Window{})
	if rec.End != nil || len(ss) != 17 || !strings.Contains(strings.Join(rec.Warnings, "\n"), "cut short") {
		t.Errorf("unlocked: end %+v, %d samples, warnings %q", rec.End, len(ss), rec.Warnings)
	}
}

// A running recorder whose next segment is not written yet (created with
// its first sample, which waits on a full disk): its newest segment ended
// with a switch, and the store is still live.
func TestJoinLiveAfterSwitch(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	writeSegment(t, dir, t0, seq(0, 10), true) // "segment switch: time"
	lock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	ss, rec := joinAll(t, dir, Window{From: t0.Add(5 * time.Second)})
	if a, b := seqsOf(ss); a != 4 || b != 10 || rec.End == nil || rec.End.Reason != ReasonLive {
		t.Errorf("samples %d..%d, end %+v; want 4..10, live", a, b, rec.End)
	}
	if !strings.Contains(strings.Join(rec.Warnings, "\n"), "live: up to 06:00:10 UTC (memdiag record is running; the segment after memdiag-20261201T060000Z.jsonl.gz is not written yet; read up to its last flushed sample)") {
		t.Errorf("warnings %q", rec.Warnings)
	}
}

// Empty, header-only and foreign files named as segments are left out
// with a note; the others are read. When none is readable the error says
// why for each.
func TestJoinSkipsUnreadable(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	writeSegment(t, dir, t0, seq(0, 10), true)
	empty := segment(t, dir, t0.Add(10*time.Second), 0, 0, t0.Add(10*time.Second))
	header := filepath.Join(dir, segmentName(t0.Add(11*time.Second), 0))
	w, err := record.Create(header, false) // what an older recorder left on a full disk
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&record.Header{Host: "h1", Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, segmentName(t0.Add(12*time.Second), 0))
	if err := os.WriteFile(foreign, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeSegment(t, dir, t0, seq(20, 30), true)

	ss, rec := joinAll(t, dir, Window{})
	if len(ss) != 22 || rec.End == nil {
		t.Fatalf("%d samples, end %+v; want 22 and the last segment's end", len(ss), rec.End)
	}
	want := []string{
		"memdiag-20261201T060010Z.jsonl.gz is empty (0 bytes): skipped, the other segments are read",
		"memdiag-20261201T060011Z.jsonl.gz holds no sample (its header is incomplete or alone): skipped, the other segments are read",
		"memdiag-20261201T060012Z.jsonl.gz cannot be read (" + foreign + ":1: not a memdiag recording: the first line is not a memdiag header): skipped, the other segments are read",
	}
	if len(rec.Warnings) < 3 || strings.Join(rec.Warnings[:3], "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant first:\n%s", strings.Join(rec.Warnings, "\n"), strings.Join(want, "\n"))
	}
	g := record.NewGaps(rec.Header)
	for i := range ss {
		g.Add(&ss[i])
	}
	if why := g.Abnormal(rec.End, rec.Warnings); why != "" {
		t.Errorf("skipped segments make the recording abnormal: %s", why)
	}

	// a store of nothing but unreadable segments
	bad := t.TempDir()
	for _, p := range []string{empty, foreign} {
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(filepath.Join(bad, filepath.Base(p)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	segs, err := Expand([]string{bad})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Join(segs, Window{})
	if !errors.Is(err, record.ErrNoSamples) || !strings.Contains(err.Error(), "none of the 2 segments in the window is readable") {
		t.Errorf("a store of unreadable segments: %v", err)
	}
}
