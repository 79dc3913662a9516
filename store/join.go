package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memdiag/memdiag/record"
)

// Expand turns what a user named — segment files, other recordings, store
// directories — into the recordings to read, in time order: a directory
// stands for its segments; a file for itself, its start taken from its
// name when it is a segment, else from its header. Last is each file's
// modification time (the recorder's last write).
func Expand(paths []string) ([]Segment, error) {
	var out []Segment
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			segs, err := List(p)
			if err != nil {
				return nil, err
			}
			if len(segs) == 0 {
				return nil, fmt.Errorf("%s: no segments (memdiag-*.jsonl.gz) in this directory", p)
			}
			out = append(out, segs...)
			continue
		}
		s := Segment{Path: p, Last: fi.ModTime(), Size: fi.Size()}
		if start, _, ok := parseSegmentName(filepath.Base(p)); ok {
			s.Start = start
		} else {
			r, err := record.Open(p)
			if err != nil {
				return nil, err
			}
			s.Start = r.Header().Start
			r.Close()
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, nil
}

// Select keeps the segments that may hold a sample in w, and the one
// before the first of them: its last sample starts the window's first
// interval.
func Select(segs []Segment, w Window) []Segment {
	if w.IsZero() {
		return segs
	}
	var out []Segment
	for i, s := range segs {
		// a segment's samples run from its start to its last write; the
		// name's start is truncated to the second
		if w.Overlaps(s.Start, s.Last.Add(time.Second)) {
			if len(out) == 0 && i > 0 {
				out = append(out, segs[i-1])
			}
			out = append(out, s)
		}
	}
	return out
}

// Joined reads several recordings — the segments of a store, a window of
// them — as one continuous recording: the header is the first one's
// (with the start of the window), samples come in time order, the sample
// a recorder wrote at a segment switch into both segments comes once,
// and counters run on across each join (they are the kernel's cumulative
// counters, so the interval across a join is like any other). A join
// where the recorder was not running (killed, restarted) is a longer
// interval, said in the warnings.
type Joined struct {
	segs   []Segment
	w      Window
	header record.Header
}

// Join opens the first of segs and reads its header. segs must be in
// time order (Expand, Select) and not empty.
func Join(segs []Segment, w Window) (*Joined, error) {
	if len(segs) == 0 {
		return nil, errors.New("no recording overlaps the window")
	}
	r, err := record.Open(segs[0].Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", segs[0].Path, err)
	}
	defer r.Close()
	j := &Joined{segs: segs, w: w, header: r.Header()}
	// A job installed while recording is in the later segments' headers
	// only: the joined header lists it too (the first definition wins).
	for _, s := range segs[1:] {
		r, err := record.Open(s.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Path, err)
		}
		h := r.Header()
		r.Close()
		for _, jb := range h.Jobs {
			if !hasJob(j.header.Jobs, jb.Name) {
				j.header.Jobs = append(j.header.Jobs, jb)
			}
		}
	}
	return j, nil
}

// Header is the joined recording's header: the first segment's.
func (j *Joined) Header() record.Header { return j.header }

// Segments are the files Each reads.
func (j *Joined) Segments() []Segment { return j.segs }

// Name says what is read, for messages: the one file, or "DIR (N
// segments)", or "N recordings".
func (j *Joined) Name() string {
	if len(j.segs) == 1 {
		return j.segs[0].Path
	}
	dir := filepath.Dir(j.segs[0].Path)
	for _, s := range j.segs[1:] {
		if filepath.Dir(s.Path) != dir {
			return fmt.Sprintf("%d recordings", len(j.segs))
		}
	}
	return fmt.Sprintf("%s (%d segments)", dir, len(j.segs))
}

// Each hands every sample of the window to fn, in time order, and
// returns the joined Recording's header, end and warnings (no Samples).
// The end is the last segment's, or, when the window cut the recording
// short, an end line at the last sample kept with reason "window".
// ctx ends a long read between samples.
func (j *Joined) Each(ctx context.Context, fn func(*record.Sample)) (*record.Recording, error) {
	out := &record.Recording{Header: j.header}
	out.Header.Jobs = append([]record.Job(nil), j.header.Jobs...)
	var (
		last    time.Time      // the last sample handed on
		lead    *record.Sample // the last sample before the window's start
		cut     bool           // samples after the window's end were dropped
		kept    int
		prevEnd *record.End
	)
	emit := func(s *record.Sample) {
		if !last.IsZero() && !s.Time.After(last) {
			return // the switch sample, written into both segments
		}
		fn(s)
		last = s.Time
		kept++
	}
	for i, seg := range j.segs {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r, err := record.Open(seg.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", seg.Path, err)
		}
		h := r.Header()
		if i > 0 {
			if h.Host != j.header.Host {
				r.Close()
				return nil, fmt.Errorf("%s: recorded on host %q, %s on %q: join only one host's segments", seg.Path, h.Host, j.segs[0].Path, j.header.Host)
			}
			if h.Interval != j.header.Interval {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s: interval %s, %s before: rates are per second either way", filepath.Base(seg.Path), h.Interval, j.header.Interval))
			}
		}
		first := true
		var rerr error
		rec, err := r.Each(func(s *record.Sample) {
			if ctx != nil && ctx.Err() != nil {
				rerr = ctx.Err()
				return
			}
			if first && i > 0 && !last.IsZero() {
				if gap := s.Time.Sub(last); gap > 2*h.Interval && h.Interval > 0 {
					out.Warnings = append(out.Warnings, fmt.Sprintf("%s: %s without samples before it (from %s to %s)", filepath.Base(seg.Path), gap.Round(time.Second), last.UTC().Format(time.RFC3339), s.Time.UTC().Format(time.RFC3339)))
				}
			}
			first = false
			switch {
			case !j.w.From.IsZero() && s.Time.Before(j.w.From):
				lead = s
			case !j.w.To.IsZero() && s.Time.After(j.w.To):
				cut = true
			default:
				// the lead starts the window's first interval, unless the
				// recorder was not running between them
				if lead != nil && (h.Interval <= 0 || s.Time.Sub(lead.Time) <= 2*h.Interval) {
					emit(lead)
				}
				lead = nil
				emit(s)
			}
		})
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", seg.Path, err)
		}
		if rerr != nil {
			return nil, rerr
		}
		killed := rec.End == nil && i < len(j.segs)-1
		for _, w := range rec.Warnings {
			if killed && (strings.Contains(w, "cut short at this line") || strings.Contains(w, "truncated last line")) {
				continue // said below, as what it is: the end of a killed run, not damage
			}
			out.Warnings = append(out.Warnings, w)
		}
		if killed {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s has no end line: the recorder was killed or the host went down (the sample being written then is lost); the next segment is a new run",
				filepath.Base(seg.Path)))
		}
		prevEnd = rec.End
		if i == 0 && !j.w.From.IsZero() && j.w.From.After(out.Header.Start) {
			out.Header.Start = j.w.From
		}
	}
	out.End = prevEnd
	if cut {
		out.End = &record.End{Type: record.TypeEnd, Time: last, Samples: kept, Reason: "window"}
	} else if out.End != nil {
		// the last segment's own count is of that segment; the joined
		// recording's is what was read
		e := *out.End
		e.Samples = kept
		out.End = &e
	}
	return out, nil
}

func hasJob(jobs []record.Job, name string) bool {
	for _, j := range jobs {
		if j.Name == name {
			return true
		}
	}
	return false
}
