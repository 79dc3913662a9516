package rootfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Stdin is standard input ("-") read as a file the user named: no more
// than limit bytes (ErrTooLarge past it), and reads that end with ctx's
// error once ctx is done, even one blocked on a terminal or on a pipe
// whose writer never writes. Go reads standard input with blocking
// read(2) calls that neither a signal (Go restarts them) nor closing the
// file wakes, so each read first waits in poll(2) on stdin and on a pipe
// that ctx's end closes; stdin's own flags are left as they are (it is
// shared with the shell). A stdin that is not an *os.File (a test's
// buffer) is read as it is, its reads checked against ctx. Closing the
// returned reader does not close stdin.
func Stdin(ctx context.Context, stdin io.Reader, limit int64) io.ReadCloser {
	if ctx == nil {
		ctx = context.Background()
	}
	s := &stdinReader{ctx: ctx, r: stdin, limit: limit, wake: -1}
	f, ok := stdin.(*os.File)
	if !ok {
		return s
	}
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK) != nil {
		return s // out of descriptors: reads are checked against ctx only
	}
	s.f, s.wake = f, p[0]
	s.stop = context.AfterFunc(ctx, func() { unix.Close(p[1]) }) // poll sees POLLHUP
	s.wakeW = p[1]
	return s
}

type stdinReader struct {
	ctx   context.Context
	r     io.Reader
	f     *os.File // r, when it is a file: polled before each read
	n     int64
	limit int64

	mu     sync.Mutex // held by Read while it waits; Close waits for it
	wake   int        // read end of the pipe ctx's end closes; -1 if none
	wakeW  int        // its write end, closed by ctx's func or by Close
	stop   func() bool
	closed bool
}

// Read reads from stdin unless ctx is done, waiting for input in poll(2)
// so that ctx's end wakes it.
func (s *stdinReader) Read(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctx.Err(); err != nil {
		return 0, s.fail(err)
	}
	if s.n > s.limit {
		return 0, s.fail(fmt.Errorf("%w: over the %s limit", ErrTooLarge, sizeText(s.limit)))
	}
	if s.closed {
		return 0, s.fail(os.ErrClosed)
	}
	if rest := s.limit - s.n + 1; int64(len(b)) > rest {
		b = b[:rest]
	}
	if s.f != nil {
		if err := s.waitReadable(); err != nil {
			return 0, s.fail(err)
		}
	}
	n, err := s.r.Read(b)
	s.n += int64(n)
	if err != nil && s.ctx.Err() != nil {
		return n, s.fail(s.ctx.Err())
	}
	if s.n > s.limit {
		return n, s.fail(fmt.Errorf("%w: over the %s limit", ErrTooLarge, sizeText(s.limit)))
	}
	return n, err
}

// waitReadable waits until stdin has input (or its end, or an error, for
// read to report) or ctx is done.
func (s *stdinReader) waitReadable() error {
	rc, err := s.f.SyscallConn()
	if err != nil {
		return err // a closed stdin: read would fail alike
	}
	var perr error
	woken := false
	cerr := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
		for {
			_, perr = unix.Poll(fds, -1)
			if !errors.Is(perr, unix.EINTR) {
				break
			}
		}
		woken = fds[1].Revents != 0
	})
	switch {
	case s.ctx.Err() != nil:
		return s.ctx.Err()
	case woken:
		return os.ErrClosed // Close, from another goroutine
	case cerr != nil:
		return cerr
	}
	return perr
}

func (s *stdinReader) fail(err error) error {
	return &fs.PathError{Op: "read", Path: StdinName, Err: err}
}

// Close ends a read in progress and releases the wake pipe; stdin stays
// open.
func (s *stdinReader) Close() error {
	if s.stop != nil && s.stop() {
		// ctx's func will not run now: close the write end in its
		// place, which wakes a read waiting in poll.
		unix.Close(s.wakeW)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.wake >= 0 {
		unix.Close(s.wake)
	}
	return nil
}
