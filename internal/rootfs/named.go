package rootfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/memdiag/memdiag/internal/usage"
)

// StdinName is the file name "-" (standard input) stands for, in messages.
const StdinName = "stdin"

// NamedError is a file the user named (an argument or a flag's value)
// that cannot be read. Every command words it the same way — "FLAG PATH:
// no such file or directory", or "PATH: ..." for an argument — and it is
// a runtime error (exit 1), never a usage error: the command line was
// right, the file is not there.
type NamedError struct {
	Flag string // "--latency", or "" for a positional argument
	Path string
	Err  error
}

func (e *NamedError) Error() string {
	why := e.Err
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		why = pe.Err // "no such file or directory", without Go's "open PATH:"
	}
	if e.Flag != "" {
		return fmt.Sprintf("%s %s: %v", e.Flag, e.Path, why)
	}
	return fmt.Sprintf("%s: %v", e.Path, why)
}

func (e *NamedError) Unwrap() error { return e.Err }

// ErrIsDir is why a folder named where a file was wanted cannot be read.
var ErrIsDir = errors.New("is a directory, not a file")

// CheckNamed stats a file the user named with flag ("-", standard input,
// always exists), for callers that open it by name themselves; a missing
// file or a folder is a *NamedError.
func CheckNamed(flag, path string) error {
	if path == "-" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return &NamedError{Flag: flag, Path: path, Err: err}
	}
	if fi.IsDir() {
		return &NamedError{Flag: flag, Path: path, Err: ErrIsDir}
	}
	return nil
}

// OneStdin fails when more than one of paths is "-": standard input can
// be read once. names[i] is what the command line calls paths[i] (an
// argument such as REC, or a flag); the error, a *usage.Error, lists
// those given as "-".
func OneStdin(names []string, paths ...string) error {
	var got []string
	for i, p := range paths {
		if p == "-" {
			got = append(got, names[i])
		}
	}
	if len(got) > 1 {
		return usage.Errorf("only one input can be - (stdin); got %d: %v", len(got), got)
	}
	return nil
}

// OpenNamed opens the file path the user named with flag ("" for an
// argument), or stdin for "-"; name is what messages call it (StdinName
// for "-"). A regular file or a pipe (OpenInput), never a device
// (/dev/zero) or a socket, and no more than limit bytes, stdin included
// ([Stdin]); one that cannot be opened is a *NamedError. Closing the
// returned reader does not close stdin. The wait for a FIFO's writer and
// the reads end when ctx is done, a read of stdin from a terminal or a
// silent pipe too.
func OpenNamed(ctx context.Context, stdin io.Reader, flag, path string, limit int64) (rc io.ReadCloser, name string, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if path == "-" {
		return Stdin(ctx, stdin, limit), StdinName, nil
	}
	f, err := OpenInput(ctx, path, limit, true)
	if errors.Is(err, syscall.EISDIR) {
		return nil, path, &NamedError{Flag: flag, Path: path, Err: ErrIsDir}
	}
	if err != nil {
		return nil, path, &NamedError{Flag: flag, Path: path, Err: err}
	}
	return f, path, nil
}
