package cmd

import (
	"context"
	"io"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// withProgress is ios.Progress: a progress bar of a large file read on a
// terminal's stderr.
func withProgress(ios *iostreams.IOStreams, r io.Reader, name string) (io.Reader, func()) {
	return ios.Progress(r, name)
}

// ctxReader ends a read once its context is done (iostreams.CtxReader).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	return iostreams.CtxReader{Ctx: c.ctx, R: c.r}.Read(p)
}
