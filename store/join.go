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
	jr := &joinRun{j: j, ctx: ctx, fn: fn, out: &record.Recording{Header: j.header}}
	jr.out.Header.Jobs = append([]record.Job(nil), j.header.Jobs...)
	for i, seg := range j.segs {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		jr.out.Warnings = append(jr.out.Warnings, j.notes[i]...)
		if err := jr.segment(i, seg); err != nil {
			return nil, err
		}
	}
	jr.out.Warnings = append(jr.out.Warnings, j.notes[len(j.segs)]...)
	return jr.finish(), nil
}

// joinRun is one [Joined.Each]: the recording being returned and what
// reading the segments so far has found.
type joinRun struct {
	j   *Joined
	ctx context.Context // nil: never cancelled
	fn  func(*record.Sample)
	out *record.Recording

	last    time.Time      // the last sample handed on
	lead    *record.Sample // the last sample before the window's start
	cut     bool           // samples after the window's end were dropped
	kept    int            // samples handed on
	prevEnd *record.End    // the end line of the last segment read whole
	live    string         // what the live segment read last is, if any
}

// segRead is what reading one segment found.
type segRead struct {
	first bool  // no sample read yet
	past  bool  // the segment has samples after the window
	err   error // the context's error, when it ended the read
}

// segment reads segment i: a segment that cannot be opened is skipped
// with a note ([skipNote]), one of another host is an error, a read
// error in the middle leaves out the rest of that segment with a
// warning; what a segment read whole says is settled by
// [joinRun.settle].
func (jr *joinRun) segment(i int, seg Segment) error {
	r, err := record.OpenContext(orBackground(jr.ctx), seg.Path)
	if err != nil {
		if jr.ctx != nil && jr.ctx.Err() != nil {
			return jr.ctx.Err()
		}
		// removed or emptied since Join: one segment less
		if note := skipNote(seg, err); note != "" {
			jr.out.Warnings = append(jr.out.Warnings, note)
		}
		return nil
	}
	h := r.Header()
	if err := jr.checkHeader(i, seg, h); err != nil {
		r.Close()
		return err
	}
	rd := segRead{first: true}
	rec, err := r.Each(func(s *record.Sample) { jr.take(i, seg, h, &rd, s) })
	r.Close()
	if rd.err != nil {
		return rd.err
	}
	if err != nil {
		// A read error in the middle (a damaged compressed stream):
		// the samples before it were handed on; the rest of this
		// segment is left out, the other segments are read.
		jr.out.Warnings = append(jr.out.Warnings, fmt.Sprintf("%s: reading stopped (%v): its later samples are left out, the other segments are read", filepath.Base(seg.Path), err))
		jr.prevEnd = nil
		return nil
	}
	jr.settle(i, seg, rec, rd)
	return nil
}

// checkHeader compares a later segment's header h with the first's: a
// segment of another host is an error, another sampling interval a
// warning.
func (jr *joinRun) checkHeader(i int, seg Segment, h record.Header) error {
	if i == 0 {
		return nil
	}
	if h.Host != jr.j.header.Host {
		return fmt.Errorf("%s: recorded on host %q, %s on %q: join only one host's segments", seg.Path, h.Host, jr.j.segs[0].Path, jr.j.header.Host)
	}
	if h.Interval != jr.j.header.Interval {
		jr.out.Warnings = append(jr.out.Warnings, fmt.Sprintf("%s: interval %s, %s before: rates are per second either way", filepath.Base(seg.Path), h.Interval, jr.j.header.Interval))
	}
	return nil
}

// take handles sample s of segment i (sampling interval h.Interval): it
// warns of a gap of over two intervals since the previous segment's
// last sample, keeps a sample before the window as the lead, drops one
// after it, and hands on one inside it, after the lead when the lead
// is at most two intervals earlier (it starts the window's first
// interval, unless the recorder was not running between them).
func (jr *joinRun) take(i int, seg Segment, h record.Header, rd *segRead, s *record.Sample) {
	if jr.ctx != nil && jr.ctx.Err() != nil {
		rd.err = jr.ctx.Err()
		return
	}
	if rd.first && i > 0 && !jr.last.IsZero() {
		if gap := s.Time.Sub(jr.last); gap > 2*h.Interval && h.Interval > 0 {
			jr.out.Warnings = append(jr.out.Warnings, fmt.Sprintf("%s: %s without samples before it (from %s to %s)", filepath.Base(seg.Path), gap.Round(time.Second), jr.last.UTC().Format(time.RFC3339), s.Time.UTC().Format(time.RFC3339)))
		}
	}
	rd.first = false
	w := jr.j.w
	switch {
	case !w.From.IsZero() && s.Time.Before(w.From):
		jr.lead = s
	case !w.To.IsZero() && s.Time.After(w.To):
		jr.cut, rd.past = true, true
	default:
		if jr.lead != nil && (h.Interval <= 0 || s.Time.Sub(jr.lead.Time) <= 2*h.Interval) {
			jr.emit(jr.lead)
		}
		jr.lead = nil
		jr.emit(s)
	}
}

// emit hands s on unless it is not after the last sample handed on
// (the switch sample, written into both segments).
func (jr *joinRun) emit(s *record.Sample) {
	if !jr.last.IsZero() && !s.Time.After(jr.last) {
		return
	}
	jr.fn(s)
	jr.last = s.Time
	jr.kept++
}

// settle takes what segment i, read whole as rec, says: a segment with
// a header only is skipped with a note (unless live); its warnings are
// kept, except a half-written last line of a killed run or of a
// recorder still writing, which is said as what it is; a live segment
// is remembered for the end; its end line is the joined one's so far.
func (jr *joinRun) settle(i int, seg Segment, rec *record.Recording, rd segRead) {
	// The newest segment of a store whose recorder runs: being
	// written, or ended by a switch whose next segment is not
	// written yet (it is created with its first sample).
	isLive := seg.Live && (rec.End == nil || strings.HasPrefix(rec.End.Reason, "segment switch"))
	tail := rec.End == nil && (isLive || rd.past) // its unfinished end is not the window's
	if rd.first && rec.End == nil {
		// A header and nothing else (an older recorder on a full
		// disk, or one that has just started): no sample to read.
		if !isLive {
			jr.out.Warnings = append(jr.out.Warnings, skipNote(seg, record.ErrNoSamples))
		}
		return
	}
	killed := rec.End == nil && !tail && i < len(jr.j.segs)-1
	for _, w := range rec.Warnings {
		if (killed || tail) && record.IsEndWarning(w) {
			continue // said below, as what it is: the end of a killed run, or a recorder still writing, not damage
		}
		jr.out.Warnings = append(jr.out.Warnings, w)
	}
	if killed {
		jr.out.Warnings = append(jr.out.Warnings, fmt.Sprintf("%s has no end line: the recorder was killed or the host went down (the sample being written then is lost); the next segment is a new run",
			filepath.Base(seg.Path)))
	}
	jr.live = ""
	if isLive && !rd.past {
		jr.live = "memdiag record is writing " + filepath.Base(seg.Path)
		if rec.End != nil {
			jr.live = "memdiag record is running; the segment after " + filepath.Base(seg.Path) + " is not written yet"
		}
	}
	jr.prevEnd = rec.End
	if i == 0 && !jr.j.w.From.IsZero() && jr.j.w.From.After(jr.out.Header.Start) {
		jr.out.Header.Start = jr.j.w.From
	}
}

// finish gives the joined recording its end: at the last sample kept,
// reason "window", when the window cut it short; at the last sample
// read, reason [ReasonLive], with a note, when the last segment is
// live; else the last segment's end line counting the samples kept.
func (jr *joinRun) finish() *record.Recording {
	out := jr.out
	out.End = jr.prevEnd
	switch {
	case jr.cut:
		out.End = &record.End{Type: record.TypeEnd, Time: jr.last, Samples: jr.kept, Reason: "window"}
	case jr.live != "" && jr.kept > 0:
		out.End = &record.End{Type: record.TypeEnd, Time: jr.last, Samples: jr.kept, Reason: ReasonLive}
		out.Warnings = append(out.Warnings, fmt.Sprintf("live: up to %s (%s; read up to its last flushed sample)", jr.last.Format("15:04:05 MST"), jr.live))
	case out.End != nil:
		// the last segment's own count is of that segment; the joined
		// recording's is what was read
		e := *out.End
		e.Samples = jr.kept
		out.End = &e
	}
	return out
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
