package cmd

import (
	"github.com/memdiag/memdiag/internal/rootfs"
)

// inputFileError is a file the user named that cannot be read: exit 1,
// worded "FLAG PATH: why" (rootfs.NamedError).
type inputFileError = rootfs.NamedError

func inputError(flag, path string, err error) error {
	return &inputFileError{Flag: flag, Path: path, Err: err}
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
