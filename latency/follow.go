package latency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// FollowOptions configures [Follow].
type FollowOptions struct {
	ImportOptions
	// Poll is how often the file is checked for new data; default 250 ms.
	Poll time.Duration
	// Intervals receives the rows of formats without per-request rows
	// (Locust). Following such a file with Intervals nil is an error.
	Intervals chan<- IntervalStat
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
// (a new run). It returns when ctx is done, with the report of everything
// read (an unterminated line or quoted record left at the end is noted
// in Truncated, not parsed) and a nil error; it returns early with an error when the file
// cannot be read or its format is unknown.
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
		f, st, off, buf, d = nil, nil, 0, buf[:0], nil
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
			select {
			case opts.Intervals <- *x.iv:
			case <-ctx.Done():
			}
			return
		}
		select {
		case out <- x.req:
		case <-ctx.Done():
		}
	}
	for {
		if f == nil {
			var err error
			f, err = os.Open(path)
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
			// lines on as they come so a large file is never held whole.
			for {
				n, err := f.ReadAt(rbuf, off)
				buf = append(buf, rbuf[:n]...)
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
				if n == 0 || ctx.Err() != nil {
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			switch {
			case d == nil:
			case len(d.pend) > 0: // a quoted record still open
				rep.Truncated = d.pend[0].n
			case len(bytes.TrimSpace(buf)) > 0:
				rep.Truncated = d.n + 1
			}
			return rep, nil
		case <-time.After(opts.Poll):
		}
	}
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
		if format, err = Detect(buf[:end+1]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if format == FormatHey && opts.Start.IsZero() {
		return nil, fmt.Errorf("%s: hey: %w; import it after the run instead, or give a start", path, ErrRelative)
	}
	d, err := newDecoder(path, format, opts.ImportOptions, rep)
	if err != nil {
		return nil, err
	}
	d.onBad = opts.OnBad
	return d, nil
}
