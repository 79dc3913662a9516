package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
// modification time (the recorder's last write). The newest segment of a
// store whose recorder is running is marked Live.
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
				return nil, notAStore(p)
			}
			segs[len(segs)-1].Live = Held(p)
			out = append(out, segs...)
			continue
		}
		s := Segment{Path: p, Last: fi.ModTime(), Size: fi.Size()}
		if start, _, ok := parseSegmentName(filepath.Base(p)); ok {
			s.Start = start
			s.Live = IsLive(p)
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

// notAStore is the error for a directory named as a recording that holds
// no segment: a *fs.PathError naming it once, saying whether it is empty
// (a store not written yet) or some other directory (/etc).
func notAStore(dir string) error {
	why := "a directory, not a recording: no memdiag segments (memdiag-*.jsonl.gz) in it"
	if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
		why = "an empty directory, not a recording: no memdiag segments (memdiag-*.jsonl.gz) in it yet"
	}
	return &fs.PathError{Op: "open", Path: dir, Err: errors.New(why)}
}

// IsLive reports whether the file at path is the segment a recorder is
// writing: the newest segment of its directory, whose lock is held.
func IsLive(path string) bool {
	if _, _, ok := parseSegmentName(filepath.Base(path)); !ok {
		return false
	}
	dir := filepath.Dir(path)
	if !Held(dir) {
		return false
	}
	segs, err := List(dir)
	return err == nil && len(segs) > 0 && filepath.Base(segs[len(segs)-1].Path) == filepath.Base(path)
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
// interval, said in the warnings. A segment that cannot be read (empty,
// its header incomplete, not a recording) is skipped with a note, never
// the whole store; the segment a recorder is still writing is read up to
// its last flushed sample, and said to be live.
type Joined struct {
	segs    []Segment
	w       Window
	header  record.Header
	skipped []string // notes on the segments left out
	// notes[i] is said before segs[i] is read (segments left out just
	// before it, in time order); notes[len(segs)] after the last.
	notes [][]string
}

// Join opens each of segs, reads its header and leaves out, with a note,
// those that hold no recording. segs must be in time order (Expand,
// Select) and not empty; it is an error when none is readable.
func Join(segs []Segment, w Window) (*Joined, error) {
	if len(segs) == 0 {
		return nil, errors.New("no recording overlaps the window")
	}
	j := &Joined{w: w}
	var first error
	var pending []string
	for _, s := range segs {
		r, err := record.Open(s.Path)
		if err != nil {
			if first == nil {
				first = err
			}
			if note := skipNote(s, err); note != "" {
				j.skipped = append(j.skipped, note)
				pending = append(pending, note)
			}
			continue
		}
		h := r.Header()
		r.Close()
		if len(j.segs) == 0 {
			j.header = h
		}
		j.segs = append(j.segs, s)
		j.notes = append(j.notes, pending)
		pending = nil
		// A job installed while recording is in the later segments'
		// headers only: the joined header lists it too (the first
		// definition wins).
		for _, jb := range h.Jobs {
			if !hasJob(j.header.Jobs, jb.Name) {
				j.header.Jobs = append(j.header.Jobs, jb)
			}
		}
	}
	if len(j.segs) == 0 {
		if len(segs) == 1 {
			return nil, first
		}
		return nil, fmt.Errorf("none of the %d segments in the window is readable: %s: %w", len(segs), strings.Join(j.skipped, "; "), first)
	}
	j.notes = append(j.notes, pending)
	return j, nil
}

// skipNote says why segment s, which record.Open refused with err, is
// left out; "" for the live segment a recorder has just created (its
// first line is on its way). The notes avoid the words the gaps
// accounting reads as a cut or damaged recording: the segments read are
// whole.
func skipNote(s Segment, err error) string {
	name := filepath.Base(s.Path)
	switch {
	case s.Live && errors.Is(err, record.ErrNoSamples):
		return ""
	case s.Size == 0:
		return name + " is empty (0 bytes): skipped, the other segments are read"
	case errors.Is(err, record.ErrNoSamples):
		return name + " holds no sample (its header is incomplete or alone): skipped, the other segments are read"
	}
	return fmt.Sprintf("%s cannot be read (%v): skipped, the other segments are read", name, err)
}

// Header is the joined recording's header: the first readable segment's.
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

// ReasonLive is the reason of the end line Each gives a recording whose
// last segment is still being written: it ends at the last sample read.
const ReasonLive = "live"

// Each hands every sample of the window to fn, in time order, and
// returns the joined Recording's header, end and warnings (no Samples).
// The end is the last segment's; or, when the window cut the recording
// short, an end line at the last sample kept with reason "window"; or,
// when the last segment is live, one at its last flushed sample with
// reason [ReasonLive] and a note "live: up to 12:03:59 UTC". A segment's
// half-written last line is not a warning when the segment is live or
// when the window ends before it. ctx ends a long read between samples.
func (j *Joined) Each(ctx context.Context, fn func(*record.Sample)) (*record.Recording, error) {
	out := &record.Recording{Header: j.header}
	out.Header.Jobs = append([]record.Job(nil), j.header.Jobs...)
	var (
		last    time.Time      // the last sample handed on
		lead    *record.Sample // the last sample before the window's start
		cut     bool           // samples after the window's end were dropped
		kept    int
		prevEnd *record.End
		live    string // what the live segment read last is, if any
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
		out.Warnings = append(out.Warnings, j.notes[i]...)
		r, err := record.OpenContext(orBackground(ctx), seg.Path)
		if err != nil {
			if ctx != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// removed or emptied since Join: one segment less
			if note := skipNote(seg, err); note != "" {
				out.Warnings = append(out.Warnings, note)
			}
			continue
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
		past := false // this segment has samples after the window
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
				cut, past = true, true
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
		if rerr != nil {
			return nil, rerr
		}
		if err != nil {
			// A read error in the middle (a damaged compressed stream):
			// the samples before it were handed on; the rest of this
			// segment is left out, the other segments are read.
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: reading stopped (%v): its later samples are left out, the other segments are read", filepath.Base(seg.Path), err))
			prevEnd = nil
			continue
		}
		// The newest segment of a store whose recorder runs: being
		// written, or ended by a switch whose next segment is not
		// written yet (it is created with its first sample).
		isLive := seg.Live && (rec.End == nil || strings.HasPrefix(rec.End.Reason, "segment switch"))
		tail := rec.End == nil && (isLive || past) // its unfinished end is not the window's
		if first && rec.End == nil {
			// A header and nothing else (an older recorder on a full
			// disk, or one that has just started): no sample to read.
			if !isLive {
				out.Warnings = append(out.Warnings, skipNote(seg, record.ErrNoSamples))
			}
			continue
		}
		killed := rec.End == nil && !tail && i < len(j.segs)-1
		for _, w := range rec.Warnings {
			if (killed || tail) && (strings.Contains(w, "cut short at this line") || strings.Contains(w, "truncated last line")) {
				continue // said below, as what it is: the end of a killed run, or a recorder still writing, not damage
			}
			out.Warnings = append(out.Warnings, w)
		}
		if killed {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s has no end line: the recorder was killed or the host went down (the sample being written then is lost); the next segment is a new run",
				filepath.Base(seg.Path)))
		}
		live = ""
		if isLive && !past {
			live = "memdiag record is writing " + filepath.Base(seg.Path)
			if rec.End != nil {
				live = "memdiag record is running; the segment after " + filepath.Base(seg.Path) + " is not written yet"
			}
		}
		prevEnd = rec.End
		if i == 0 && !j.w.From.IsZero() && j.w.From.After(out.Header.Start) {
			out.Header.Start = j.w.From
		}
	}
	out.Warnings = append(out.Warnings, j.notes[len(j.segs)]...)
	out.End = prevEnd
	switch {
	case cut:
		out.End = &record.End{Type: record.TypeEnd, Time: last, Samples: kept, Reason: "window"}
	case live != "" && kept > 0:
		out.End = &record.End{Type: record.TypeEnd, Time: last, Samples: kept, Reason: ReasonLive}
		out.Warnings = append(out.Warnings, fmt.Sprintf("live: up to %s (%s; read up to its last flushed sample)", last.Format("15:04:05 MST"), live))
	case out.End != nil:
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

// orBackground is ctx, or context.Background() when ctx is nil.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
