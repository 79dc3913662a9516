package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"context"
	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/record"
	"syscall"
)

// stdinName is the file name "-" stands for, in messages.
const stdinName = "stdin"

// inputFileError is a file the user named (an argument or a flag's value)
// that cannot be read. Every command words it the same way — "FLAG PATH:
// no such file or directory", or "PATH: ..." for an argument — and it is
// a runtime error (exit 1), never a usage error: the command line was
// right, the file is not there.
type inputFileError struct {
	Flag string // "--latency", or "" for a positional argument
	Path string
	Err  error
}

func (e *inputFileError) Error() string {
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

func (e *inputFileError) Unwrap() error { return e.Err }

func inputError(flag, path string, err error) error {
	return &inputFileError{Flag: flag, Path: path, Err: err}
}

// openInputContext opens a file the user named, or standard input for
// "-"; name is what messages call it ("stdin" for "-"). Closing the
// returned reader does not close standard input. The wait for a FIFO's
// writer and the reads end when ctx is done.
func openInputContext(ctx context.Context, ios *iostreams.IOStreams, flag, path string) (rc io.ReadCloser, name string, err error) {
	if ctx == nil {
		ctx = context.Background() // analyzeFileTrace's callers may pass none
	}
	if path == "-" {
		return io.NopCloser(ios.In), stdinName, nil
	}
	// A regular file or a pipe, never a device (/dev/zero) or a socket,
	// and no more than the limit (package rootfs).
	limit := int64(rootfs.RecordingLimit)
	if flag == "--thresholds" {
		limit = rootfs.ThresholdsLimit
	}
	f, err := rootfs.OpenInput(ctx, path, limit, true)
	if errors.Is(err, syscall.EISDIR) {
		return nil, path, inputError(flag, path, errors.New("is a directory, not a file"))
	}
	if err != nil {
		return nil, path, inputError(flag, path, err)
	}
	return f, path, nil
}

// checkInput stats a file the user named ("-" always exists), for callers
// that open it by name themselves.
func checkInput(flag, path string) error {
	if path == "-" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return inputError(flag, path, err)
	}
	if fi.IsDir() {
		return inputError(flag, path, errors.New("is a directory, not a file"))
	}
	return nil
}

// oneStdin fails when more than one of paths is "-": standard input can be
// read once.
func oneStdin(names []string, paths ...string) error {
	var got []string
	for i, p := range paths {
		if p == "-" {
			got = append(got, names[i])
		}
	}
	if len(got) > 1 {
		return flagErrorf("only one input can be - (stdin); got %d: %v", len(got), got)
	}
	return nil
}

// readRecording reads a whole recording the user named (flag is its flag,
// "" for an argument), or standard input for "-".
func readRecording(ctx context.Context, ios *iostreams.IOStreams, flag, path string) (*record.Recording, error) {
	f, name, err := openInputContext(ctx, ios, flag, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := record.NewReader(f, name)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	rec, err := r.Each(func(s *record.Sample) { samples = append(samples, *s) })
	if err != nil {
		return nil, err
	}
	rec.Samples = samples
	return rec, nil
}

// readThresholds reads gate's --thresholds file, or standard input for "-".
func readThresholds(ctx context.Context, ios *iostreams.IOStreams, path string) ([]*gate.Threshold, error) {
	f, name, err := openInputContext(ctx, ios, "--thresholds", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return gate.Read(f, name)
}
