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
	rep := &ImportReport{Name: path, Format: opts.Format}
	var (
		f    *os.File
		st   os.FileInfo
		off  int64
		buf  []byte
		d    *decoder
		rbuf = make([]byte, 64<<10)
		// skipping is the length so far of a line over maxLine being
		// read past; 0 when none is.
		skipping int64
	)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	reset := func() {
		if f != nil {
			f.Close()
		}
		f, st, off, buf, d, skipping = nil, nil, 0, buf[:0], nil, 0
	}
	var sendErr error
	emit := func(x row) {
		if sendErr != nil {
			return
		}
		if x.iv != nil {
			if opts.Intervals == nil {
				sendErr = fmt.Errorf("%s: %s has no per-request rows; follow it with FollowOptions.Intervals", path, rep.Format)
				return
			}
			opts.Intervals <- *x.iv
			return
		}
		out <- x.req
	}
	draining := false
	for {
		if ctx.Err() != nil {
			// One last pass to the end of the file, then stop.
			draining = true
		}
		if f == nil {
			var err error
			f, err = openFollowed(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return rep, err
			}
			if err == nil {
				if st, err = f.Stat(); err != nil {
					return rep, err
				}
			}
		}
		if f != nil {
			// A new file at path, or this one truncated: a new run.
			if cur, err := os.Stat(path); err == nil && !os.SameFile(st, cur) {
				reset()
				continue
			}
			if cur, err := f.Stat(); err == nil && cur.Size() < off {
				reset()
				continue
			}
			// Read what was appended, a chunk at a time, handing complete
			// lines on as they come so a large file is never held whole,
			// up to the end of the file.
			for {
				n, err := f.ReadAt(rbuf, off)
				chunk := rbuf[:n]
				if skipping > 0 {
					// The rest of a line over maxLine: dropped up to
					// its newline, never held.
					if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
						followOversize(d, rep, skipping+int64(i+1))
						chunk, skipping = chunk[i+1:], 0
					} else {
						skipping += int64(len(chunk))
						chunk = nil
					}
				}
				buf = append(buf, chunk...)
				off += int64(n)
				if err != nil && !errors.Is(err, io.EOF) {
					return rep, fmt.Errorf("%s: %w", path, err)
				}
				if d == nil {
					if d, err = followDecoder(path, buf, opts, rep); err != nil {
						return rep, err
					}
				}
				if d != nil {
					if last := bytes.LastIndexByte(buf, '\n'); last >= 0 {
						for line := range bytes.SplitSeq(buf[:last], []byte("\n")) {
							d.line(string(line), emit)
							if sendErr != nil {
								return rep, sendErr
							}
						}
						buf = append(buf[:0], buf[last+1:]...)
					}
				}
				if len(buf) > maxLine {
					// An incomplete line already over the bound: skip
					// the rest of it as it comes.
					skipping, buf = int64(len(buf)), buf[:0]
				}
				if n == 0 || (!draining && ctx.Err() != nil) {
					break
				}
			}
		}
		if draining {
			switch {
			case skipping > 0: // an unterminated line over maxLine
				followOversize(d, rep, skipping)
			case d == nil:
			case len(d.pend) > 0: // a quoted record still open
				rep.Truncated = d.pend[0].n
			case len(bytes.TrimSpace(buf)) > 0:
				rep.Truncated = d.n + 1
			}
			return rep, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(opts.Poll):
		}
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
