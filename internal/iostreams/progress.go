package iostreams

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// ProgressMinBytes: files smaller than this are read without a progress
// bar (a day at 1 s is ~40 MB compressed, ~4 s to analyse).
const ProgressMinBytes = 16 << 20

// Progress returns a reader of r that draws a progress bar of the
// bytes read ("reading NAME") on stderr when stderr is a terminal and r is
// a large file, and a func that clears the bar; otherwise r itself and a no-op.
// For a .gz file the bar counts compressed bytes; a stream that is not a
// file (stdin from a pipe) gets no bar.
func (ios *IOStreams) Progress(r io.Reader, name string) (io.Reader, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	st, err := f.Stat()
	if err != nil || !ios.IsStderrTTY() || !st.Mode().IsRegular() || st.Size() < ProgressMinBytes {
		return f, func() {}
	}
	bar := progressbar.NewOptions64(st.Size(),
		progressbar.OptionSetWriter(ios.ErrOut),
		progressbar.OptionSetDescription("reading "+name),
		progressbar.OptionShowBytes(true),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	pr := progressbar.NewReader(f, bar)
	return &pr, func() { _ = bar.Finish() }
}

// CtxReader ends reading with ctx's error once ctx is done, so that a
// signal ends a long read of a large recording within one read.
type CtxReader struct {
	Ctx context.Context
	R   io.Reader
}

// Read reads from R unless Ctx is done.
func (c CtxReader) Read(p []byte) (int, error) {
	if c.Ctx == nil {
		return c.R.Read(p)
	}
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.R.Read(p)
	if err != nil && c.Ctx.Err() != nil {
		// The read was cut by closing the file (a FIFO, stdin).
		return n, c.Ctx.Err()
	}
	return n, err
}
