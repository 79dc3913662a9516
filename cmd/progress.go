package cmd

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// progressMinBytes: files smaller than this are read without a progress
// bar (a day at 1 s is ~40 MB compressed, ~4 s to analyse).
const progressMinBytes = 16 << 20

// withProgress returns a reader of f that draws a progress bar of the
// bytes read ("reading NAME") on stderr when stderr is a terminal and f is
// large, and a func that clears the bar; otherwise f itself and a no-op.
// For a .gz file the bar counts compressed bytes; a stream that is not a
// file (stdin from a pipe) gets no bar.
func withProgress(ios *iostreams.IOStreams, r io.Reader, name string) (io.Reader, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	st, err := f.Stat()
	if err != nil || !ios.IsStderrTTY() || !st.Mode().IsRegular() || st.Size() < progressMinBytes {
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

// ctxReader ends reading with ctx's error once ctx is done, so that a
// signal ends a long read of a large recording within one read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx == nil {
		return c.r.Read(p)
	}
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if err != nil && c.ctx.Err() != nil {
		// The read was cut by closing the file (a FIFO, stdin).
		return n, c.ctx.Err()
	}
	return n, err
}
