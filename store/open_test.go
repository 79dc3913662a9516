package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// TestOpenWindow: a window is read whole with ReadAll; a --from that
// does not parse is a *WindowError; a window no segment overlaps names
// the span the segments cover. The header names no zone (times are read
// in the local zone); the window is given in UTC.
func TestOpenWindow(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	writeSegment(t, dir, t0, seq(0, 10), true)
	writeSegment(t, dir, t0, seq(10, 20), true)
	segs, err := Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour)
	j, w, err := OpenWindow(segs, "2026-12-01T06:00:05Z", "2026-12-01T06:00:15Z", now, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !w.From.Equal(t0.Add(5*time.Second)) || !w.To.Equal(t0.Add(15*time.Second)) {
		t.Errorf("window %v .. %v", w.From, w.To)
	}
	rec, err := j.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, s := range rec.Samples {
		got = append(got, s.Seq)
	}
	// The sample before the window leads (the first interval's start),
	// across the switch at :10.
	if !equalInts(got, seq(4, 15)) {
		t.Errorf("samples %v, want 4..15", got)
	}
	_, _, err = OpenWindow(segs, "not a time", "", now, dir)
	if we := (*WindowError)(nil); !errors.As(err, &we) {
		t.Errorf("bad --from: %v, want a *WindowError", err)
	}
	_, _, err = OpenWindow(segs, "2001-01-01T00:00:00Z", "2001-01-01T01:00:00Z", now, dir)
	if err == nil || !strings.Contains(err.Error(), dir+": no recording overlaps ") || !strings.Contains(err.Error(), "they span ") {
		t.Errorf("no overlap: %v", err)
	}
}

// TestZoneOf: a header's IANA zone, else its offset, else local.
func TestZoneOf(t *testing.T) {
	if z := zoneOf(record.Header{TimeZone: "Europe/Berlin"}); z.String() != "Europe/Berlin" {
		t.Errorf("named zone: %v", z)
	}
	z := zoneOf(record.Header{TimeZone: "Nowhere/Nothing", UTCOffset: 3600})
	if _, off := time.Date(2026, 1, 1, 0, 0, 0, 0, z).Zone(); off != 3600 {
		t.Errorf("unknown name with an offset: %v at %d s", z, off)
	}
	if z := zoneOf(record.Header{}); z != time.Local {
		t.Errorf("nothing known: %v, want Local", z)
	}
}
