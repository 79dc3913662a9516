package cmd

import (
	"context"
	"io"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/rootfs"
)

// inputFileError is a file the user named that cannot be read: exit 1,
// worded "FLAG PATH: why" (rootfs.NamedError).
type inputFileError = rootfs.NamedError

func inputError(flag, path string, err error) error {
	return &inputFileError{Flag: flag, Path: path, Err: err}
}

// openInputContext opens a file the user named, or standard input for
// "-"; name is what messages call it ("stdin" for "-"). Closing the
// returned reader does not close standard input. The wait for a FIFO's
// writer and the reads end when ctx is done (rootfs.OpenNamed, at most a
// recording's size).
func openInputContext(ctx context.Context, ios *iostreams.IOStreams, flag, path string) (rc io.ReadCloser, name string, err error) {
	limit := int64(rootfs.RecordingLimit)
	if flag == "--thresholds" {
		limit = rootfs.ThresholdsLimit
	}
	return rootfs.OpenNamed(ctx, ios.In, flag, path, limit)
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

// readThresholds reads gate's --thresholds file, or standard input for "-".
func readThresholds(ctx context.Context, ios *iostreams.IOStreams, path string) ([]*gate.Threshold, error) {
	f, name, err := openInputContext(ctx, ios, "--thresholds", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return gate.Read(f, name)
}
