package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
	"github.com/memdiag/memdiag/timers"
	"github.com/memdiag/memdiag/units"
)

// Segments is the Sink of `memdiag record`: a store directory of
// time-sliced recordings, switched every Segment (on multiples of it
// since the epoch) and on Reopen, with Retention applied at start and at
// each switch. It says the store's state on Log (stderr, the journal).
//
// A fault of the store never stops the recorder: a write that fails (a
// full disk, a read-only store) waits and is tried again at each sample,
// retention runs at once on a full disk to free what it may, the samples
// taken meanwhile are counted, and when writing works again a gap line
// ([record.Gap]) says how many were not written and when. A segment is
// created with its first sample ([record.CreateSegment]), so no empty
// segment is left; a segment or store directory removed while written
// is started again.
type Segments struct {
	Dir       string
	Segment   time.Duration
	Retention store.Retention
	Log       io.Writer

	lock     io.Closer
	hdr      *record.Header // the run's header; each segment gets a copy with its own Start
	w        *record.Writer
	seg      record.Header // the header of the segment being written
	end      time.Time     // when the current segment's time is up
	reopen   bool
	hup      atomic.Bool
	failed   bool                 // the run ends with "write error": the store was taken by another recorder
	exp      *exposition.Exporter // the session's /metrics, told each segment's header
	opts     *Options             // the session's: interval, root, timers
	started  int                  // segments started by this run
	why      string               // why the next segment starts, when not "start" or "time"
	failing  bool                 // a write failed and none has worked since
	reason   string               // the last write error, for the stop line
	announce string               // why the segment just opened was started: its state is said after its first write

	// create opens a new segment's writer; record.CreateSegment unless
	// a test fails it.
	create func(path string) *record.Writer

	// jobs is the host's job inventory being read for the next
	// segment's header, off the sampling path (nil: not asked yet);
	// reopenAsked, a reopen waiting for it. hostJobs reads it (HostJobs
	// unless a test slows it).
	jobs        *jobsFetch
	reopenAsked bool
	hostJobs    func(root string, keepSecrets bool) ([]timers.Job, error)

	// The samples not written since the last write that worked: how
	// many, the first and last, why; and the last sample a segment took
	// (the gap line's start).
	gapN           int
	gapFrom, gapTo time.Time
	gapReason      string
	lastPut        time.Time
	lost           int       // samples not written over the run
	lostSince      time.Time // the first of them
}

// OpenStore creates dir (0700) if missing and locks it, one recorder per
// store, then says how the last run's last segment ended and removes
// empty segments an older recorder left. Unlock releases the store.
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
		r.lock = nil
	}
}

// Reopen starts a new segment at the next sample (SIGHUP). It may be
// called from any goroutine.
func (r *Segments) Reopen() { r.hup.Store(true) }

// ReopenOn makes each receive on ch start a new segment at the next
// sample, as Reopen does, until ctx is done; a nil ch does nothing.
func (r *Segments) ReopenOn(ctx context.Context, ch <-chan struct{}) {
	if ch == nil {
		return
	}
	go func() {
		for {
			select {
			case <-ch:
				r.Reopen()
			case <-ctx.Done():
				return
			}
		}
	}()
}

// Unwritten is how many samples could not be written over the run.
func (r *Segments) Unwritten() int { return r.lost }

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
// A sample that cannot be written is counted, not an error; the error
// ends the run only when the store was taken by another recorder.
func (r *Segments) WriteSample(s *record.Sample) error {
	if r.hup.Swap(false) {
		r.reopenAsked = true
		r.askJobs()
	}
	if r.reopenAsked && r.jobs.ready() {
		// the switch waits for the inventory, not the sample
		r.reopen, r.reopenAsked = true, false
	}
	if r.w != nil && !s.Time.Before(r.end.Add(-r.jobsLead())) {
		r.askJobs()
	}
	if err := r.write(s); err != nil {
		r.failed = true
		return err
	}
	return nil
}

func (r *Segments) write(s *record.Sample) error {
	if r.w != nil && r.w.Removed() {
		fmt.Fprintf(r.Log, "memdiag: warning: record: %s was removed while being written (its %d samples with it); a new segment starts\n", filepath.Base(r.w.Name()), r.w.Written())
		_ = r.w.Abandon()
		r.w, r.why = nil, "segment removed"
	}
	if r.w == nil || r.w.Pending() {
		if err := r.ensureDir(); err != nil {
			if errors.Is(err, errTaken) {
				return err
			}
			r.unwritten(s, err)
			return nil
		}
	}
	if r.w != nil && r.w.Pending() {
		if err := r.retry(); err != nil {
			r.unwritten(s, err)
			return nil
		}
	}
	if r.w != nil && (r.reopen || !s.Time.Before(r.end)) {
		why := "time"
		if r.reopen {
			why = "reopen (SIGHUP)"
		}
		if !r.put(s) || r.w.Pending() {
			return nil // the switch waits until the segment's lines are written
		}
		if err := r.w.Close("segment switch: " + why); err != nil {
			// the segment ends on its last whole sample, without an end line
			fmt.Fprintf(r.Log, "memdiag: warning: record: %s: end line not written: %v\n", filepath.Base(r.w.Name()), err)
		}
		r.w, r.reopen = nil, false
		r.open(s.Time, why)
	} else if r.w == nil {
		why := "start"
		if r.why != "" {
			why, r.why = r.why, ""
		}
		r.open(s.Time, why)
	}
	if r.put(s) && r.announce != "" && !r.w.Pending() {
		r.state(r.w.Name(), r.announce)
		r.announce = ""
	}
	return nil
}

// put writes the gap line, if samples were not written, and s to the
// current segment, and reports whether s is in it. A write that fails
// leaves its line waiting in the segment's writer (written at the next
// retry): first retention frees what it may (a full disk) and the write
// is tried once more.
func (r *Segments) put(s *record.Sample) bool {
	n, from, to, why := r.gapN, r.gapFrom, r.gapTo, r.gapReason
	if n > 0 {
		start := r.lastPut
		if start.IsZero() {
			start = from // nothing written before in this run
		}
		r.gapN = 0
		// just before the first sample after it, as the sampler's gaps
		g := record.Gap{Start: start, End: s.Time, Missed: n, Reason: why}
		err := r.w.WriteGap(&g) // the line waits in the writer if it fails
		if err != nil {
			err = r.retry()
		}
		if err != nil {
			r.unwritten(s, err)
			return false
		}
	}
	r.lastPut = s.Time
	err := r.w.WriteSample(s)
	if err != nil {
		err = r.retry()
	}
	if err != nil {
		return true // s waits in the writer; the next sample retries
	}
	if r.failing {
		r.failing = false
		l := fmt.Sprintf("memdiag: record: writing again to %s", filepath.Base(r.w.Name()))
		if n > 0 {
			l += fmt.Sprintf(": %d %s from %s to %s not written (%s), recorded as a gap", n, english.Plural(n, "sample"), from.UTC().Format(stampMilli), to.UTC().Format(stampMilli), why)
		}
		fmt.Fprintln(r.Log, l)
	}
	return true
}

// fault says, at the first sample not written and then not until
// writing works again, that the store cannot be written.
func (r *Segments) fault(err error) {
	if r.failing {
		return
	}
	r.failing = true
	what := r.Dir
	if r.w != nil {
		what = r.w.Name()
	}
	fmt.Fprintf(r.Log, "memdiag: warning: record: cannot write %s: %s; recording goes on: the samples that cannot be written are counted and the gap is recorded when writing works again\n", what, errText(err))
}

// retry writes what the segment's writer holds after a failed write;
// on a full disk retention first removes what it may.
func (r *Segments) retry() error {
	err := r.w.Retry()
	if err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		if n, _ := r.prune(r.w.Name(), time.Now()); n > 0 {
			err = r.w.Retry()
		}
	}
	return err
}

// unwritten counts s as a sample that could not be written because of
// err.
func (r *Segments) unwritten(s *record.Sample, err error) {
	r.fault(err)
	if r.gapN == 0 {
		r.gapFrom = s.Time
	}
	r.gapTo = s.Time
	r.gapN++
	r.gapReason = errText(err)
	r.reason = r.gapReason
	if r.lost == 0 {
		r.lostSince = s.Time
	}
	r.lost++
}

// stampMilli is how the log gives a sample's time: to the millisecond,
// as intervals under a second need.
const stampMilli = "2006-01-02T15:04:05.000Z07:00"

// errText is err's cause as the kernel says it ("no space left on
// device"), without the path the messages already name.
func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// errTaken is wrapped by ensureDir's error when another recorder locked
// the store directory this one had to create again.
var errTaken = errors.New("another recorder took the store")

// ensureDir creates the store directory again, and takes its lock
// again, when it was removed while recording.
func (r *Segments) ensureDir() error {
	if _, err := os.Stat(r.Dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return err
	}
	r.Unlock()
	lock, err := store.Lock(r.Dir)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("%w: %w", errTaken, err)
		}
		return err
	}
	r.lock = lock
	fmt.Fprintf(r.Log, "memdiag: warning: record: the store %s was removed while recording; created again\n", r.Dir)
	return nil
}

// Close ends the last segment with reason ("write error" if the store
// was taken) and says so, with the samples that could not be written.
func (r *Segments) Close(reason string) error {
	if r.failed {
		reason = "write error"
	}
	lost := ""
	if r.lost > 0 {
		lost = fmt.Sprintf("; %d %s not written since %s (%s)", r.lost, english.Plural(r.lost, "sample"), r.lostSince.UTC().Format(stampMilli), r.reason)
	}
	if r.w == nil {
		if lost != "" {
			fmt.Fprintf(r.Log, "memdiag: record: stopped (%s)%s\n", reason, lost)
		}
		return nil
	}
	err := r.w.Close(reason)
	if err != nil {
		fmt.Fprintf(r.Log, "memdiag: record: stopped (%s); last segment %s: %d samples written, no end line (%v)%s\n", reason, r.w.Name(), r.w.Written(), err, lost)
		return err
	}
	fmt.Fprintf(r.Log, "memdiag: record: stopped (%s); last segment %s: %d samples%s\n", reason, r.w.Name(), r.w.Samples(), lost)
	return nil
}

// open starts a segment at t (the file is created with its first
// sample) and applies retention; the state is said once the first
// sample is written.
func (r *Segments) open(t time.Time, why string) {
	path, err := store.NextName(r.Dir, t)
	if err != nil {
		path = filepath.Join(r.Dir, fmt.Sprintf("memdiag-%s%s", t.UTC().Format("20060102T150405Z"), store.Suffix))
	}
	create := r.create
	if create == nil {
		create = record.CreateSegment
	}
	w := create(path)
	prev := r.seg.Jobs
	r.seg = *r.hdr
	r.seg.Start = t
	if r.started > 0 && r.opts != nil && !r.opts.NoTimers {
		// the jobs as read just before (a timer installed since the
		// last segment is projected from this one on); the last
		// segment's while the inventory is still being read
		r.seg.Jobs = prev
		if r.jobs.ready() && r.jobs.ok {
			r.seg.Jobs = r.jobs.jobs
		}
	}
	r.jobs = nil
	_ = w.WriteHeader(&r.seg) // held until the first sample
	r.w = w
	if r.exp != nil {
		r.exp.SetHeader(r.seg)
	}
	r.end = store.Boundary(t, r.Segment)
	r.started++
	r.prune(path, t)
	r.announce = why
}

// jobsFetch is one reading of the host's job inventory on a goroutine
// of its own: HostJobs parses every timer unit and crontab and asks
// systemd which run (~170 ms on a quiet 2-core host, more under load),
// which at a switch on the sampling path made the 1-hour soak's one late
// sample.
type jobsFetch struct {
	done chan struct{}
	jobs []record.Job
	ok   bool
}

// ready says whether the inventory was read (true for none asked).
func (f *jobsFetch) ready() bool {
	if f == nil {
		return true
	}
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// jobsLead is how long before a segment's end the next one's inventory
// is read: 30 s, at most half a segment.
func (r *Segments) jobsLead() time.Duration {
	return min(30*time.Second, r.Segment/2)
}

// askJobs starts reading the inventory for the next segment, once per
// segment; nothing when the run projects no timers.
func (r *Segments) askJobs() {
	if r.jobs != nil || r.opts == nil || r.opts.NoTimers {
		return
	}
	read := r.hostJobs
	if read == nil {
		read = HostJobs
	}
	f := &jobsFetch{done: make(chan struct{})}
	root, keep := r.opts.Root, r.opts.KeepCmdline
	go func() {
		defer close(f.done)
		if jobs, err := read(root, keep); err == nil {
			f.jobs, f.ok = record.FromJobs(jobs), true
		}
	}()
	r.jobs = f
}

// prune applies retention, keeping current, says what it removed and
// returns how many segments it removed and the bytes the store holds.
func (r *Segments) prune(current string, now time.Time) (int, int64) {
	removed, total, err := r.Retention.Prune(r.Dir, current, now)
	for _, rm := range removed {
		fmt.Fprintf(r.Log, "memdiag: record: removed %s (%s, %s)\n", filepath.Base(rm.Path), units.FormatBytes(uint64(rm.Size)), rm.Why)
	}
	if err != nil {
		fmt.Fprintf(r.Log, "memdiag: warning: record: retention: %v\n", err)
	}
	return len(removed), total
}

// state is the line said at start and at each switch: what is being
// written, why, and what the store holds.
func (r *Segments) state(path, why string) {
	segs, _ := store.List(r.Dir)
	var total int64
	for _, sg := range segs {
		total += sg.Size
	}
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
// up to its last whole sample. Segments with no sample at all — empty
// files, or a header alone, which an older memdiag left on a full disk —
// are removed: they hold nothing, and readers would only skip them.
func (r *Segments) previous() {
	// A recorder killed between creating a segment and its first write
	// left it under its temporary name (record.SegmentTemp): nothing in
	// it was published.
	if tmps, _ := filepath.Glob(record.SegmentTemp(filepath.Join(r.Dir, store.Prefix+"*"+store.Suffix))); len(tmps) > 0 {
		for _, tmp := range tmps {
			if os.Remove(tmp) == nil {
				fmt.Fprintf(r.Log, "memdiag: record: removed %s: a segment a stopped recorder had not written its first sample to\n", filepath.Base(tmp))
			}
		}
	}
	segs, err := store.List(r.Dir)
	if err != nil || len(segs) == 0 {
		return
	}
	for i, s := range segs {
		if s.Size > 0 && i < len(segs)-1 {
			continue
		}
		n, end, err := countSamples(s.Path)
		if n > 0 || (err != nil && !errors.Is(err, record.ErrNoSamples)) {
			if i == len(segs)-1 {
				switch {
				case err != nil:
					fmt.Fprintf(r.Log, "memdiag: warning: record: previous segment %s: %v\n", filepath.Base(s.Path), err)
				case end == nil:
					fmt.Fprintf(r.Log, "memdiag: record: previous segment %s has no end line (the recorder was killed or the host went down); its %d samples are kept\n", filepath.Base(s.Path), n)
				}
			}
			continue
		}
		if err := os.Remove(s.Path); err == nil {
			fmt.Fprintf(r.Log, "memdiag: record: removed %s: it holds no sample (%s bytes; a recorder stopped before its first sample was written)\n", filepath.Base(s.Path), strconv.FormatInt(s.Size, 10))
		}
	}
}

// countSamples reads the recording at path and returns how many samples
// it holds and its end line; an error wrapping record.ErrNoSamples for a
// file without a header.
func countSamples(path string) (int, *record.End, error) {
	rd, err := record.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	n := 0
	for {
		s, err := rd.Next()
		if err != nil || s == nil {
			if err != nil && !errors.Is(err, io.EOF) {
				return n, nil, err
			}
			return n, rd.End(), nil
		}
		n++
	}
}
