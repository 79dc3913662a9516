package latency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// FollowOptions configures [Follow].
type FollowOptions struct {
	ImportOptions
	// Poll is how often the file is checked for new data; default 250 ms.
	Poll time.Duration
	// Intervals receives the rows of formats without per-request rows
	// (Locust). Following such a file with Intervals nil is an error.
	Intervals chan<- IntervalStat
	// StartFunc, if set, gives the start of the run for a format that
	// records only offsets (hey) when Start is zero; it is asked when the
	// file's first line is read, and false means not known (yet).
	StartFunc func() (time.Time, bool)
	// OnBad, if set, is called for each bad row as it is read.
	OnBad func(LineError)
}

// ErrRelative is returned by [Follow] for a format that records only
// offsets from the start of the run (hey) when no Start is given.
var ErrRelative = errors.New("format records only offsets from the start of the run")

// Follow reads the results file at path while a load test writes it, like
// tail -F, and sends each request to out as its line is completed. It
// waits for the file to appear, detects the format from its first complete
// line (unless opts.Format is set), keeps a partial last line until its
// newline arrives, and starts over when the file is truncated or replaced
// (a new run). It returns early with an error when the file cannot be read
// or its format is unknown.
//
// When ctx is done, Follow drains: it reads the file once more to its end,
// sends every complete row still unread (blocking: the caller must keep
// receiving from out and Intervals until Follow returns), and returns the
// report of everything read, with a nil error. An unterminated last line
// or a quoted record still open at the end is noted in Truncated, not
// parsed: the writer had not finished it.
//
// hey writes its CSV only at the end of its run and with offsets only; it
// needs opts.Start (else [ErrRelative]) and is better imported afterwards
// with [ImportFile].
func Follow(ctx context.Context, path string, opts FollowOptions, out chan<- Request) (*ImportReport, error) {
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	fl := &follower{path: path, opts: opts, out: out, rep: &ImportReport{Name: path, Format: opts.Format}, rbuf: make([]byte, 64<<10)}
	defer fl.close()
	draining := false
	for {
		if ctx.Err() != nil {
			// One last pass to the end of the file, then stop.
			draining = true
		}
		if err := fl.open(); err != nil {
			return fl.rep, err
		}
		if fl.f != nil {
			if fl.replaced() {
				fl.reset()
				continue
			}
			if err := fl.readAppended(ctx, draining); err != nil {
				return fl.rep, err
			}
		}
		if draining {
			fl.noteUnfinished()
			return fl.rep, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(opts.Poll):
		}
	}
}

// follower is the state of one [Follow]: the file being read, how far,
// the partial last line, and the decoder once the format is known.
type follower struct {
	path string
	opts FollowOptions
	out  chan<- Request
	rep  *ImportReport

	f    *os.File    // nil until the file exists, and after a reset
	st   os.FileInfo // f's identity when opened
	off  int64       // bytes of f read
	buf  []byte      // read and not yet handed on: the partial last line
	d    *decoder    // nil until the format is known
	rbuf []byte      // one read's chunk
	// skipping is the length so far of a line over maxLine being read
	// past; 0 when none is.
	skipping int64
	sendErr  error // a row that cannot be sent: following must stop
}

// close closes the file, if open.
func (fl *follower) close() {
	if fl.f != nil {
		fl.f.Close()
	}
}

// reset forgets the file, for a new run: it is opened and read again
// from its start, and its format detected again.
func (fl *follower) reset() {
	fl.close()
	fl.f, fl.st, fl.off, fl.buf, fl.d, fl.skipping = nil, nil, 0, fl.buf[:0], nil, 0
}

// open opens the file if it is not open yet ([openFollowed]); a file
// that does not exist yet is not an error (f stays nil), one that cannot
// be opened or is not a regular file is.
func (fl *follower) open() error {
	if fl.f != nil {
		return nil
	}
	f, err := openFollowed(fl.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // not written yet
	case err != nil:
		return err
	}
	fl.f = f
	fl.st, err = f.Stat()
	return err
}

// replaced says whether a new run began: another file is at the path,
// or this one is shorter than what was read (truncated).
func (fl *follower) replaced() bool {
	if cur, err := os.Stat(fl.path); err == nil && !os.SameFile(fl.st, cur) {
		return true
	}
	if cur, err := fl.f.Stat(); err == nil && cur.Size() < fl.off {
		return true
	}
	return false
}

// readAppended reads what was appended, a chunk at a time, handing
// complete lines on as they come so a large file is never held whole,
// up to the end of the file (or, unless draining, until ctx is done).
// An incomplete line already over maxLine is skipped as it comes.
func (fl *follower) readAppended(ctx context.Context, draining bool) error {
	for more := true; more; {
		n, err := fl.f.ReadAt(fl.rbuf, fl.off)
		if errors.Is(err, io.EOF) {
			err = nil // the end of what is written so far
		}
		fl.take(fl.rbuf[:n])
		fl.off += int64(n)
		if err != nil {
			return fmt.Errorf("%s: %w", fl.path, err)
		}
		if err := fl.handOn(); err != nil {
			return err
		}
		if len(fl.buf) > maxLine {
			// An incomplete line already over the bound: skip
			// the rest of it as it comes.
			fl.skipping, fl.buf = int64(len(fl.buf)), fl.buf[:0]
		}
		// Until the end of the file, or while not draining until ctx is done.
		more = n > 0 && (draining || ctx.Err() == nil)
	}
	return nil
}

// take appends a chunk read to buf, except the rest of a line over
// maxLine being skipped: that is dropped up to its newline, never held,
// and counted as a bad row ([followOversize]) once its newline comes.
func (fl *follower) take(chunk []byte) {
	if fl.skipping > 0 {
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			followOversize(fl.d, fl.rep, fl.skipping+int64(i+1))
			chunk, fl.skipping = chunk[i+1:], 0
		} else {
			fl.skipping += int64(len(chunk))
			chunk = nil
		}
	}
	fl.buf = append(fl.buf, chunk...)
}

// handOn detects the format once buf has a complete line
// ([followDecoder]), then decodes every complete line in buf and sends
// its rows ([follower.emit]), keeping the partial last line. The error
// is the format's, or a row that cannot be sent.
func (fl *follower) handOn() error {
	if fl.d == nil {
		d, err := followDecoder(fl.path, fl.buf, fl.opts, fl.rep)
		if err != nil {
			return err
		}
		fl.d = d
	}
	if fl.d == nil {
		return nil
	}
	last := bytes.LastIndexByte(fl.buf, '\n')
	if last < 0 {
		return nil
	}
	for line := range bytes.SplitSeq(fl.buf[:last], []byte("\n")) {
		fl.d.line(string(line), fl.emit)
		if fl.sendErr != nil {
			return fl.sendErr
		}
	}
	fl.buf = append(fl.buf[:0], fl.buf[last+1:]...)
	return nil
}

// emit sends a decoded row: a request to out, an interval row (Locust)
// to opts.Intervals, which must be set; sending blocks until received.
// After the first row that cannot be sent, nothing more is.
func (fl *follower) emit(x row) {
	if fl.sendErr != nil {
		return
	}
	if x.iv != nil {
		if fl.opts.Intervals == nil {
			fl.sendErr = fmt.Errorf("%s: %s has no per-request rows; follow it with FollowOptions.Intervals", fl.path, fl.rep.Format)
			return
		}
		fl.opts.Intervals <- *x.iv
		return
	}
	fl.out <- x.req
}

// noteUnfinished notes, once drained, what the writer had not finished:
// an unterminated line over maxLine (a bad row), or the line number of a
// quoted record still open or of an unterminated last line (Truncated).
func (fl *follower) noteUnfinished() {
	switch {
	case fl.skipping > 0:
		followOversize(fl.d, fl.rep, fl.skipping)
	case fl.d == nil:
	case len(fl.d.pend) > 0:
		fl.rep.Truncated = fl.d.pend[0].n
	case len(bytes.TrimSpace(fl.buf)) > 0:
		fl.rep.Truncated = fl.d.n + 1
	}
}

// followOversize counts a line of size bytes over maxLine as a bad row.
func followOversize(d *decoder, rep *ImportReport, size int64) {
	if d != nil {
		d.oversize(size)
		return
	}
	rep.bad(LineError{File: rep.Name, Line: 1, Text: fmt.Sprintf("(%d bytes, over the %d MiB a line may have)", size, maxLine>>20), Err: ErrLineTooLong})
}

// followDecoder returns a decoder once the format is known: forced, or
// detected from the first complete non-empty line in buf. It returns nil
// and no error while that line is still incomplete.
func followDecoder(path string, buf []byte, opts FollowOptions, rep *ImportReport) (*decoder, error) {
	format := opts.Format
	if format == "" {
		end := bytes.IndexByte(buf, '\n')
		for end >= 0 && len(bytes.TrimSpace(buf[:end])) == 0 {
			next := bytes.IndexByte(buf[end+1:], '\n')
			if next < 0 {
				end = -1
				break
			}
			end += 1 + next
		}
		if end < 0 {
			return nil, nil
		}
		var err error
		if format, err = detectFor(buf[:end+1], opts.ImportOptions); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	from := StartOption
	if format == formatHey && opts.Start.IsZero() && opts.StartFunc != nil {
		if t, ok := opts.StartFunc(); ok {
			opts.Start, from = t, StartCommand
		}
	}
	if format == formatHey && opts.Start.IsZero() {
		return nil, fmt.Errorf("%s: hey: %w; import it after the run instead, or give a start", path, ErrRelative)
	}
	d, err := newDecoder(path, format, opts.ImportOptions, rep)
	if err != nil {
		return nil, err
	}
	d.onBad = opts.OnBad
	if rep.StartFrom != "" {
		rep.StartFrom = from
	}
	return d, nil
}

// openFollowed opens the followed file without blocking and refuses what
// is not a regular file: a FIFO (which would block the open, and has no
// end to drain) or a device (/dev/zero: an endless stream, 100 % CPU).
func openFollowed(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s); --latency follows a regular file", rootfs.ErrNotRegular, fi.Mode().Type())}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
