package iostreams

import (
	"bytes"
	"context"
	"io"
)

// RenderUnlessDone runs render into a buffer and copies it to w, unless
// ctx is done first (Ctrl-C): then it returns ctx's cause at once and
// nothing more is written. A table of a million firings takes seconds to
// lay out, and the table writer cannot be stopped half-way; the abandoned
// render ends with the process. The copy goes in 64 KiB pieces, looking
// at ctx between them (90 MB to a slow pipe took most of a second).
func RenderUnlessDone(ctx context.Context, w io.Writer, render func(io.Writer) error) error {
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- render(&buf) }()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case err := <-done:
		if err != nil {
			return err
		}
	}
	// Written from a goroutine: a reader that does not read (a pager
	// waiting, a full pipe) blocks the write, and Ctrl-C must still end
	// the command at once.
	wrote := make(chan error, 1)
	go func() { wrote <- copyUnlessDone(ctx, w, buf.Bytes()) }()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case err := <-wrote:
		return err
	}
}

// copyUnlessDone writes b to w in 64 KiB pieces until ctx is done.
func copyUnlessDone(ctx context.Context, w io.Writer, b []byte) error {
	for len(b) > 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		n := min(len(b), 64<<10)
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
