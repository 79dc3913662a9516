package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
	"github.com/memdiag/memdiag/units"
)

// Segments is the Sink of `memdiag record`: a store directory of
// time-sliced recordings, switched every Segment (on multiples of it
// since the epoch) and on Reopen, with Retention applied at start and at
// each switch. It says the store's state on Log (stderr, the journal).
type Segments struct {
	Dir       string
	Segment   time.Duration
	Retention store.Retention
	Log       io.Writer

	lock    io.Closer
	hdr     *record.Header // the run's header; each segment gets a copy with its own Start
	w       *record.Writer
	seg     record.Header // the header of the segment being written
	end     time.Time     // when the current segment's time is up
	reopen  bool
	hup     atomic.Bool
	failed  bool                 // a write failed: the run ends with "write error"
	exp     *exposition.Exporter // the session's /metrics, told each segment's header
	opts    *Options             // the session's: interval, root, timers
	started int                  // segments started by this run
}

// OpenStore creates dir (0700) if missing and locks it, one recorder per
// store, then says how the last run's last segment ended. Unlock
// releases the store.
func OpenStore(dir string, seg time.Duration, ret store.Retention, log io.Writer) (*Segments, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := store.Lock(dir)
	if err != nil {
		return nil, err
	}
	sg := &Segments{Dir: dir, Segment: seg, Retention: ret, Log: log, lock: lock}
	sg.previous()
	return sg, nil
}

// Unlock releases the store's lock.
func (r *Segments) Unlock() {
	if r.lock != nil {
		r.lock.Close()
	}
}

// Reopen starts a new segment at the next sample (SIGHUP). It may be
// called from any goroutine.
func (r *Segments) Reopen() { r.hup.Store(true) }

// ReadBack is how many samples of the last segment are readable (after a
// write error).
func (r *Segments) ReadBack() int {
	if r.w == nil {
		return 0
	}
	return r.w.ReadBack()
}

func (r *Segments) attach(s *Session) { r.exp, r.opts = s.exp, &s.opts }

// WriteHeader keeps the run's header; each segment writes a copy.
func (r *Segments) WriteHeader(h *record.Header) error {
	r.hdr = h
	return nil
}

// WriteSample puts s in the current segment, switching segments first
// when its time is up or a reopen was asked for: the sample at a switch
// ends the old segment and starts the new one, so each is a whole
// recording of its span and a reader joining them drops the duplicate.
func (r *Segments) WriteSample(s *record.Sample) error {
	if r.hup.Swap(false) {
		r.reopen = true
	}
	if err := r.write(s); err != nil {
		r.failed = true
		return err
	}
	return nil
}

func (r *Segments) write(s *record.Sample) error {
	if r.w != nil && (r.reopen || !s.Time.Before(r.end)) {
		why := "time"
		if r.reopen {
			why = "reopen (SIGHUP)"
		}
		if err := r.w.WriteSample(s); err != nil {
			return err
		}
		if err := r.w.Close("segment switch: " + why); err != nil {
			return err
		}
		r.w = nil
		r.reopen = false
		if err := r.open(s.Time, why); err != nil {
			return err
		}
	} else if r.w == nil {
		if err := r.open(s.Time, "start"); err != nil {
			return err
		}
	}
	return r.w.WriteSample(s)
}

// Close ends the last segment with reason ("write error" if a write
// failed) and says so.
func (r *Segments) Close(reason string) error {
	if r.failed {
		reason = "write error"
	}
	if r.w == nil {
		return nil
	}
	err := r.w.Close(reason)
	fmt.Fprintf(r.Log, "memdiag: record: stopped (%s); last segment %s: %d samples\n", reason, r.w.Name(), r.w.Samples())
	return err
}

// open starts a segment at t, applies retention and says the state.
func (r *Segments) open(t time.Time, why string) error {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil { // removed by hand meanwhile
		return err
	}
	path, err := store.NextName(r.Dir, t)
	if err != nil {
		return err
	}
	w, err := record.Create(path, false)
	if err != nil {
		return err
	}
	r.seg = *r.hdr
	r.seg.Start = t
	if r.started > 0 && r.opts != nil && !r.opts.NoTimers {
		// the jobs as they are now: a timer installed since the last
		// segment is projected from this one on
		if jobs, err := HostJobs(r.opts.Root, r.opts.KeepCmdline); err == nil {
			r.seg.Jobs = record.FromJobs(jobs)
		}
	}
	if err := w.WriteHeader(&r.seg); err != nil {
		w.Close("write error")
		return err
	}
	r.w = w
	if r.exp != nil {
		r.exp.SetHeader(r.seg)
	}
	r.end = store.Boundary(t, r.Segment)
	r.started++
	removed, total, err := r.Retention.Prune(r.Dir, path, t)
	for _, rm := range removed {
		fmt.Fprintf(r.Log, "memdiag: record: removed %s (%s, %s)\n", filepath.Base(rm.Path), units.FormatBytes(uint64(rm.Size)), rm.Why)
	}
	if err != nil {
		fmt.Fprintf(r.Log, "memdiag: warning: record: retention: %v\n", err)
	}
	r.state(path, why, total)
	return nil
}

// state is the line said at start and at each switch: what is being
// written, why, and what the store holds.
func (r *Segments) state(path, why string, total int64) {
	segs, _ := store.List(r.Dir)
	oldest := "-"
	if len(segs) > 0 {
		oldest = segs[0].Start.Format(time.RFC3339)
	}
	keep := "keep all"
	switch ret := r.Retention; {
	case ret.MaxAge > 0 && ret.MaxBytes > 0:
		keep = fmt.Sprintf("keep %s and %s", store.FormatAge(ret.MaxAge), units.FormatBytes(uint64(ret.MaxBytes)))
	case ret.MaxAge > 0:
		keep = "keep " + store.FormatAge(ret.MaxAge)
	case ret.MaxBytes > 0:
		keep = "keep " + units.FormatBytes(uint64(ret.MaxBytes))
	}
	var iv time.Duration
	if r.opts != nil {
		iv = r.opts.Interval
	}
	fmt.Fprintf(r.Log, "memdiag: record: %s: writing %s (every %s, until %s); store %s: %s, %s, oldest %s; %s\n",
		why, filepath.Base(path), iv, r.end.UTC().Format(time.RFC3339), r.Dir, english.Count(len(segs), "segment"), units.FormatBytes(uint64(total)), oldest, keep)
}

// previous says how the last run's last segment ended: a recorder
// killed (SIGKILL, power loss) leaves it without an end line, readable
// up to its last whole sample.
func (r *Segments) previous() {
	segs, err := store.List(r.Dir)
	if err != nil || len(segs) == 0 {
		return
	}
	last := segs[len(segs)-1]
	rd, err := record.Open(last.Path)
	if err != nil {
		fmt.Fprintf(r.Log, "memdiag: warning: record: previous segment %s cannot be read: %v\n", filepath.Base(last.Path), err)
		return
	}
	defer rd.Close()
	n := 0
	for {
		s, err := rd.Next()
		if err != nil || s == nil {
			if err != nil && !errors.Is(err, io.EOF) {
				fmt.Fprintf(r.Log, "memdiag: warning: record: previous segment %s: %v\n", filepath.Base(last.Path), err)
			}
			break
		}
		n++
	}
	if rd.End() == nil {
		fmt.Fprintf(r.Log, "memdiag: record: previous segment %s has no end line (the recorder was killed or the host went down); its %d samples are kept\n", filepath.Base(last.Path), n)
	}
}
