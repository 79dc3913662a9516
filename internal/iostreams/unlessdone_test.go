package iostreams

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestRenderUnlessDone: a render that has not finished when the context
// ends (a table of a million rows) is abandoned: the context's cause is
// returned at once and nothing is written.
func TestRenderUnlessDone(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted by SIGINT")
	release := make(chan struct{})
	defer close(release)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- RenderUnlessDone(ctx, &out, func(w io.Writer) error {
			io.WriteString(w, "half a table")
			<-release
			return nil
		})
	}()
	cancel(stop)
	select {
	case err := <-done:
		if !errors.Is(err, stop) || out.Len() != 0 {
			t.Errorf("RenderUnlessDone = %v with %q written; want %v and nothing", err, out.String(), stop)
		}
	case <-time.After(2 * time.Minute): // a hang bound: at once unless starved of CPU
		t.Fatal("RenderUnlessDone waited for the render after the context ended")
	}
}

// A render that finishes is written whole, in pieces.
func TestRenderUnlessDoneWrites(t *testing.T) {
	var out bytes.Buffer
	big := bytes.Repeat([]byte("x"), 200<<10)
	err := RenderUnlessDone(context.Background(), &out, func(w io.Writer) error { _, err := w.Write(big); return err })
	if err != nil || !bytes.Equal(out.Bytes(), big) {
		t.Errorf("RenderUnlessDone = %v, %d bytes written; want %d", err, out.Len(), len(big))
	}
}
