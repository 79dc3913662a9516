package rootfs

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testutil"
)

// readEnds reads r, a Stdin of f, in a goroutine, runs end once the read
// is seen waiting on f (testutil.WaitPollingOn; not after a fixed sleep,
// which a goroutine starved of CPU can outlast), and returns the read's
// error; it fails the test when the read has not returned 30 s after end
// (a hang bound, not a timing: it returns at once).
func readEnds(t *testing.T, r io.Reader, f *os.File, end func()) error {
	t.Helper()
	done := make(chan error, 1)
	ended := make(chan struct{})
	go func() {
		_, err := r.Read(make([]byte, 64))
		done <- err
		close(ended)
	}()
	testutil.WaitPollingOn(t, os.Getpid(), testutil.FdOf(t, f), 2*time.Minute, ended)
	end()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the read of stdin did not end")
		return nil
	}
}

// TestStdinCancel (issue 29): a read of standard input blocked on a
// silent pipe or a terminal ends with ctx's error, naming stdin, once ctx
// is done (what Ctrl-C does). Before, Go's blocking read of stdin went on
// until the next byte came.
func TestStdinCancel(t *testing.T) {
	for name, f := range testutil.SilentStdins(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := Stdin(ctx, f, 1<<20)
			defer r.Close()
			err := readEnds(t, r, f, cancel)
			if !errors.Is(err, context.Canceled) || err.Error() != "read stdin: context canceled" {
				t.Errorf("read after cancel: %v", err)
			}
		})
	}
}

// TestStdinClose: closing the reader from another goroutine ends a read
// waiting for input (os.ErrClosed), and leaves stdin itself open.
func TestStdinClose(t *testing.T) {
	for name, f := range testutil.SilentStdins(t) {
		t.Run(name, func(t *testing.T) {
			r := Stdin(context.Background(), f, 1<<20)
			err := readEnds(t, r, f, func() { r.Close() })
			if !errors.Is(err, os.ErrClosed) {
				t.Errorf("read after Close: %v", err)
			}
			if _, err := f.Stat(); err != nil {
				t.Errorf("stdin closed with the reader: %v", err)
			}
		})
	}
}

// TestStdinReads: a pipe's bytes and its end come through; past the
// limit the read fails with ErrTooLarge naming stdin; a reader that is
// not a file is read as it is.
func TestStdinReads(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() { pw.Write([]byte("0123456789abcdef")); pw.Close() }()
	if b, err := io.ReadAll(Stdin(context.Background(), pr, 16)); string(b) != "0123456789abcdef" || err != nil {
		t.Errorf("16 bytes at a 16-byte limit: %q, %v", b, err)
	}

	pr2, pw2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr2.Close()
	go func() { pw2.Write([]byte("0123456789abcdefg")); pw2.Close() }()
	b, err := io.ReadAll(Stdin(context.Background(), pr2, 16))
	if !errors.Is(err, ErrTooLarge) || err.Error() != "read stdin: "+ErrTooLarge.Error()+": over the 16 bytes limit" || len(b) > 17 {
		t.Errorf("17 bytes at a 16-byte limit: %d bytes, %v", len(b), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	r := Stdin(ctx, errReader{}, 16)
	cancel()
	if _, err := r.Read(make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Errorf("a buffer after cancel: %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read") }
