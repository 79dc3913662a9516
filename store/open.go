package store

import (
	"context"
	"fmt"
	"time"

	"github.com/memdiag/memdiag/record"
)

// WindowError is a --from or --to that does not parse (a usage error).
type WindowError struct{ Err error }

func (e *WindowError) Error() string { return e.Err.Error() }
func (e *WindowError) Unwrap() error { return e.Err }

// OpenWindow joins segs (from Expand; name is what messages call them)
// kept to the window from and to give: the window is parsed in the zone
// of the first readable recording (the zone its timeline is shown in;
// a damaged segment is skipped), and only the segments that overlap it
// are read. A window that no segment overlaps is an error naming the
// span they cover.
func OpenWindow(segs []Segment, from, to string, now time.Time, name string) (*Joined, Window, error) {
	loc := time.Local
	for _, s := range segs {
		if r, err := record.Open(s.Path); err == nil {
			loc = zoneOf(r.Header())
			r.Close()
			break
		}
	}
	w, err := ParseWindow(from, to, now, loc)
	if err != nil {
		return nil, w, &WindowError{Err: err}
	}
	sel := Select(segs, w)
	if len(sel) == 0 {
		first, last := segs[0].Start, segs[len(segs)-1].Last
		return nil, w, fmt.Errorf("%s: no recording overlaps %s: they span %s .. %s",
			name, w.describe(loc), first.In(loc).Format(time.RFC3339), last.In(loc).Format(time.RFC3339))
	}
	j, err := Join(sel, w)
	if err != nil {
		return nil, w, err
	}
	return j, w, nil
}

// zoneOf is the zone a recording's header names, else its UTC offset at
// start, else the local zone.
func zoneOf(h record.Header) *time.Location {
	if h.TimeZone != "" {
		if loc, err := time.LoadLocation(h.TimeZone); err == nil {
			return loc
		}
	}
	if h.TimeZone != "" || h.UTCOffset != 0 {
		return time.FixedZone(h.TimeZone, h.UTCOffset)
	}
	return time.Local
}

// describe is w in loc for messages, … for an open side.
func (w Window) describe(loc *time.Location) string {
	show := func(t time.Time) string {
		if t.IsZero() {
			return "…"
		}
		return t.In(loc).Format(time.RFC3339)
	}
	return show(w.From) + " .. " + show(w.To)
}

// ReadAll reads the joined recording whole, its samples in Samples
// (gate --recording).
func (j *Joined) ReadAll(ctx context.Context) (*record.Recording, error) {
	var samples []record.Sample
	rec, err := j.Each(ctx, func(s *record.Sample) { samples = append(samples, *s) })
	if err != nil {
		return nil, err
	}
	rec.Samples = samples
	return rec, nil
}
