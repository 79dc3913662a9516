package record

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/outfile"
)

// ErrExists is returned by Create when the file exists and force is false.
var ErrExists = errors.New("recording file exists (use --force to overwrite)")

// Writer appends lines to a recording. It is not safe for concurrent use.
type Writer struct {
	f       *os.File
	bw      *bufio.Writer
	gz      *gzip.Writer
	enc     *json.Encoder
	now     func() time.Time
	samples int
	durable int // samples handed to the kernel whole: readable after a SIGKILL
}

// Create opens path for a new recording, 0600, with [outfile.Create]: it
// never follows a symlink at path (O_NOFOLLOW), so a link planted there
// cannot redirect a root-owned write, never truncates through a hard
// link, and refuses an existing file unless force is set. A path
// ending in ".gz" is written gzip-compressed.
func Create(path string, force bool) (*Writer, error) {
	return CreateMode(path, force, outfile.DefaultMode)
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
	return newWriter(f, strings.HasSuffix(path, ".gz")), nil
}

func newWriter(f *os.File, compress bool) *Writer {
	w := &Writer{f: f, now: time.Now}
	var out io.Writer = f
	if compress {
		w.gz = gzip.NewWriter(f)
		out = w.gz
	}
	w.bw = bufio.NewWriterSize(out, 64<<10)
	w.enc = json.NewEncoder(w.bw)
	w.enc.SetEscapeHTML(false)
	return w
}

// Name is the file's path.
func (w *Writer) Name() string { return w.f.Name() }

// WriteHeader writes the header line; call it once, first.
func (w *Writer) WriteHeader(h *Header) error {
	h.Type, h.Format, h.SchemaVersion = TypeHeader, FormatName, SchemaVersion
	return w.writeLine(h)
}

// WriteSample writes one sample line and flushes it to the kernel; a gzip
// file gets a sync flush (the compressed stream up to this line is
// complete and decodable), so a SIGKILL loses at most the interval in
// progress.
//
// A sample's Gap is written first, as its own line.
func (w *Writer) WriteSample(s *Sample) error {
	if s.Gap != nil {
		if err := w.WriteGap(s.Gap); err != nil {
			return err
		}
	}
	s.Type = TypeSample
	w.samples++
	if err := w.writeLine(s); err != nil {
		return err
	}
	w.durable++
	return nil
}

// Samples is how many samples were written (see [Writer.ReadBack] for how
// many can be read back after a write error).
func (w *Writer) Samples() int { return w.samples }

// ReadBack counts the samples a reader gets from the file as it is on
// disk, with the same reader analyze uses. After a write error it is the
// exact answer: a gzip sample whose data reached the file before its sync
// flush failed is readable though its write returned an error. It falls
// back to the samples whose writes succeeded if the file cannot be
// opened; a file whose header cannot be read holds no readable sample.
func (w *Writer) ReadBack() int {
	f, err := os.Open(w.f.Name())
	if err != nil {
		return w.durable
	}
	defer f.Close()
	r, err := NewReader(f, w.f.Name())
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
func (w *Writer) Close(reason string) error {
	err := w.writeLine(&End{Type: TypeEnd, Time: w.now(), Samples: w.samples, Reason: reason})
	if w.gz != nil {
		if e := w.gz.Close(); err == nil {
			err = e
		}
	}
	if e := w.f.Close(); err == nil {
		err = e
	}
	return err
}

func (w *Writer) writeLine(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	if w.gz != nil {
		// A sync flush (Z_SYNC_FLUSH): ends the deflate block on a byte
		// boundary; costs a few bytes per sample (docs/benchmarks.md).
		if err := w.gz.Flush(); err != nil {
			return fmt.Errorf("%s: %w", w.f.Name(), err)
		}
	}
	return nil
}
