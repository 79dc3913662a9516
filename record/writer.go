package record

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/internal/outfile"
	"github.com/memdiag/memdiag/latency"
)

// ErrExists is returned by Create when the file exists and force is false.
var ErrExists = errors.New("recording file exists (use --force to overwrite)")

// errPending is wrapped by the error of a line refused because an
// earlier one is still waiting to be written ([Writer.Pending]).
var errPending = errors.New("an earlier line is still waiting to be written")

// File is what a Writer writes to: an *os.File, or a test's stand-in
// that fails as a full disk does.
type File interface {
	io.Writer
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Stat() (fs.FileInfo, error)
	Close() error
	Name() string
}

// Writer appends lines to a recording. It is not safe for concurrent use.
//
// Each line goes to the file whole or not at all: a write that fails (a
// full disk) is taken back (the file is truncated to the last whole
// line) and the line's bytes are kept, so that the file always ends on
// a line a reader can read, and [Writer.Retry] can write them later
// without breaking the compressed stream.
type Writer struct {
	name    string
	f       File                 // nil until the first line is written (CreateSegment)
	open    func() (File, error) // opens f; nil when f was given
	created bool                 // f was created by open: remove it if nothing reaches it
	// publish links the file, opened under a temporary name, at name
	// once its first lines are in it (CreateSegment); nil once done.
	publish func() error
	buf     bytes.Buffer // bytes of lines not yet in the file
	gz      *gzip.Writer
	enc     *json.Encoder
	off     int64 // bytes of the file that hold whole lines
	hold    bool  // keep the header in buf until the first sample
	err     error // the failed write that left buf pending
	now     func() time.Time
	ab      *ABReport // End.AB
	samples int       // samples accepted (written, or in buf waiting to be)
	inBuf   int       // of them, in buf
	durable int       // samples handed to the kernel whole: readable after a SIGKILL
}

// Create opens path for a new recording, 0600, with [outfile.Create]: it
// never follows a symlink at path (O_NOFOLLOW), so a link planted there
// cannot redirect a root-owned write, never truncates through a hard
// link, and refuses an existing file unless force is set. A path
// ending in ".gz" is written gzip-compressed.
func Create(path string, force bool) (*Writer, error) {
	return CreateMode(path, force, outfile.DefaultMode)
}

// DefaultName is the recording a run started at t writes when it is not
// given one (watch --out, gate --out): memdiag-YYYYMMDD-HHMMSS.jsonl.gz in
// the current directory. gzip by default: ~2.5 MB per hour at 1,000
// processes instead of ~17 MB plain (docs/benchmarks.md), sync-flushed
// every sample.
func DefaultName(t time.Time) string {
	return "memdiag-" + t.Format("20060102-150405") + ".jsonl.gz"
}

// CreateMode is [Create] with the file's permission (--mode) instead of
// 0600.
func CreateMode(path string, force bool, mode fs.FileMode) (*Writer, error) {
	// outfile: mode 0600 unless told (a recording holds every process's
	// command line), no symlink, no FIFO or device, no truncation
	// through a hard link.
	f, err := outfile.Create(path, outfile.Options{Overwrite: force, Mode: mode})
	if err != nil {
		if errors.Is(err, outfile.ErrExists) {
			return nil, fmt.Errorf("%s: %w", path, ErrExists)
		}
		return nil, err
	}
	w := newWriter(path, strings.HasSuffix(path, ".gz"))
	w.f = f
	return w, nil
}

// CreateSegment returns a Writer for a new recording at path (as
// [Create], never overwriting) that creates the file only when the
// first sample is written, and writes the header and that sample in one
// write: a store never holds an empty segment, nor one with a header
// and no sample, whatever stops the recorder. If that first write fails
// the file is removed and the lines wait for [Writer.Retry].
//
// The file is created under a temporary name in the same directory
// (SegmentTemp) and linked at path only once that first write is in it:
// a reader listing the store never sees the segment empty, not even for
// the instant between its creation and its first write (a live store's
// readers did, and said so).
func CreateSegment(path string) *Writer {
	tmp := SegmentTemp(path)
	w := CreateSegmentWith(path, func() (File, error) {
		_ = os.Remove(tmp) // one a killed recorder left: it holds nothing published
		f, err := outfile.Create(tmp, outfile.Options{})
		if err != nil {
			return nil, err
		}
		return f, nil
	})
	w.publish = func() error {
		if err := os.Link(tmp, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: %w", path, ErrExists)
			}
			return err
		}
		_ = os.Remove(tmp)
		return nil
	}
	return w
}

// SegmentTemp is the temporary name CreateSegment writes path's first
// lines under: hidden, and no segment name (store.List skips it).
func SegmentTemp(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
}

// CreateSegmentWith is [CreateSegment] with the file opened by open
// (tests: a file that fails as a full disk does). The file at path is
// removed if open created it and nothing could be written to it.
func CreateSegmentWith(path string, open func() (File, error)) *Writer {
	w := newWriter(path, strings.HasSuffix(path, ".gz"))
	w.open, w.hold = open, true
	return w
}

func newWriter(name string, compress bool) *Writer {
	w := &Writer{name: name, now: time.Now}
	var out io.Writer = &w.buf
	if compress {
		w.gz = gzip.NewWriter(&w.buf)
		out = w.gz
	}
	w.enc = json.NewEncoder(out)
	w.enc.SetEscapeHTML(false)
	return w
}

// Name is the file's path.
func (w *Writer) Name() string { return w.name }

// WriteHeader writes the header line; call it once, first.
func (w *Writer) WriteHeader(h *Header) error {
	h.Type, h.Format, h.SchemaVersion = TypeHeader, FormatName, SchemaVersion
	return w.writeLine(h)
}

// WriteSample writes one sample line and flushes it to the kernel; a gzip
// file gets a sync flush (the compressed stream up to this line is
// complete and decodable), so a SIGKILL loses at most the interval in
// progress. A sample's Gap is written just before it, as its own line,
// in the same write. When the write fails the sample (and its gap) stay
// in the Writer ([Writer.Pending]) and the file ends with the sample
// before.
func (w *Writer) WriteSample(s *Sample) error {
	s.Type = TypeSample
	if s.Gap != nil {
		s.Gap.Type = TypeGap
		return w.writeLines(s.Gap, s)
	}
	return w.writeLines(s)
}

// Samples is how many samples the file holds or will hold once the
// pending write succeeds (see [Writer.ReadBack] for how many can be read
// back after a write error).
func (w *Writer) Samples() int { return w.samples }

// SetAB gives the end line what ab's standard output counted (End.AB).
func (w *Writer) SetAB(s *latency.ABSummary) { w.ab = FromABSummary(s) }

// SetClock makes the Writer take the end line's time from now instead
// of the wall clock, so a file written from a fixed recording (test
// fixtures, replays) is the same bytes every time.
func (w *Writer) SetClock(now func() time.Time) { w.now = now }

// Written is how many samples reached the file.
func (w *Writer) Written() int { return w.durable }

// Pending reports whether lines wait to be written after a failed
// write; [Writer.Retry] writes them. No other line is taken meanwhile.
func (w *Writer) Pending() bool { return w.err != nil }

// Retry writes the lines a failed write left pending; nil when there are
// none or they are now in the file.
func (w *Writer) Retry() error {
	if w.err == nil {
		return nil
	}
	return w.flush()
}

// Removed reports whether the file was removed (its last link is gone:
// an operator, or a store directory removed) while it is being written:
// what is written to it from now on is lost.
func (w *Writer) Removed() bool {
	if w.f == nil {
		return false
	}
	fi, err := w.f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}

// ReadBack counts the samples a reader gets from the file as it is on
// disk, with the same reader analyze uses. After a write error it is the
// exact answer: a gzip sample whose data reached the file before its sync
// flush failed is readable though its write returned an error. It falls
// back to the samples whose writes succeeded if the file cannot be
// opened; a file whose header cannot be read holds no readable sample.
func (w *Writer) ReadBack() int {
	f, err := os.Open(w.name)
	if err != nil {
		return w.durable
	}
	defer f.Close()
	r, err := NewReader(f, w.name)
	if err != nil {
		return 0
	}
	n := 0
	for {
		s, err := r.Next()
		if err != nil || s == nil {
			return n
		}
		n++
	}
}

// Close writes the end line with reason, flushes and closes the file.
// Lines still pending are tried once more first; if they cannot be
// written the file is closed as it is, without an end line.
func (w *Writer) Close(reason string) error {
	if w.f == nil && w.open == nil {
		return nil // closed
	}
	if w.hold && w.samples == 0 {
		return w.drop() // a segment that never got its first sample: no file
	}
	if w.err != nil {
		if err := w.flush(); err != nil {
			_ = w.drop()
			return err
		}
	}
	err := w.writeLine(&End{Type: TypeEnd, Time: w.now(), Samples: w.samples, Reason: reason, AB: w.ab})
	if err == nil && w.gz != nil {
		if err = w.gz.Close(); err == nil {
			err = w.flush()
		}
	}
	if derr := w.drop(); err == nil {
		err = derr
	}
	return err
}

// Abandon closes the file without writing anything more (a file that
// was removed, [Writer.Removed]).
func (w *Writer) Abandon() error { return w.drop() }

// drop closes the file; a file this Writer created that holds nothing
// is removed.
func (w *Writer) drop() error {
	w.open = nil
	if w.f == nil {
		return nil
	}
	name := w.f.Name()
	err := w.f.Close()
	if w.created && w.off == 0 {
		_ = os.Remove(name)
	}
	w.f = nil
	return err
}

// writeLine encodes v and hands it, with any lines held before it, to
// the file.
func (w *Writer) writeLine(v any) error { return w.writeLines(v) }

// writeLines encodes vs and hands them to the file in one write, with
// any lines held before them: a gap line and the sample it precedes
// reach the file together or not at all.
func (w *Writer) writeLines(vs ...any) error {
	if w.err != nil {
		return fmt.Errorf("%s: %w (%w)", w.name, errPending, w.err)
	}
	sample := false
	for _, v := range vs {
		if err := w.enc.Encode(v); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		if w.gz != nil {
			// A sync flush (Z_SYNC_FLUSH): ends the deflate block on a
			// byte boundary; costs a few bytes per sample
			// (docs/benchmarks.md).
			if err := w.gz.Flush(); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
		}
		if _, ok := v.(*Sample); ok {
			sample = true
			w.samples++
			w.inBuf++
		}
	}
	if !sample && w.hold {
		return nil // the header waits for the first sample
	}
	return w.flush()
}

// flush writes buf to the file, opening it first if it is not open. A
// write that fails is taken back (truncated), so the file ends on a
// whole line; the bytes stay in buf for Retry.
func (w *Writer) flush() error {
	if w.f == nil {
		if w.open == nil {
			return fmt.Errorf("%s: %w", w.name, os.ErrClosed)
		}
		f, err := w.open()
		if err != nil {
			w.err = err
			return err
		}
		w.f, w.created = f, true
	}
	n, err := w.f.Write(w.buf.Bytes())
	if err == nil && w.publish != nil {
		// The first lines are in: the file takes its name. If it cannot,
		// nothing was published; taken back below, like a failed write.
		if err = w.publish(); err == nil {
			w.publish = nil
		}
	}
	if err == nil {
		w.off += int64(n)
		w.buf.Reset()
		w.durable += w.inBuf
		w.inBuf, w.err, w.hold = 0, nil, false
		return nil
	}
	if n > 0 {
		if terr := w.f.Truncate(w.off); terr == nil {
			_, _ = w.f.Seek(w.off, io.SeekStart)
		} else {
			// The part written stays; the rest follows it.
			w.off += int64(n)
			w.buf.Next(n)
		}
	}
	if w.created && w.off == 0 {
		// Nothing of this recording reached the file: no empty file is
		// left; Retry creates it again.
		name := w.f.Name()
		_ = w.f.Close()
		_ = os.Remove(name)
		w.f = nil
	}
	w.err = err
	return fmt.Errorf("%s: %w", w.name, err)
}
