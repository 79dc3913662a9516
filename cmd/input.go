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
