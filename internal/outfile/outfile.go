// Package outfile creates the files memdiag writes (recordings, gate
// reports, JUnit XML, profiles) the one safe way: mode 0600 unless told
// otherwise, never through a symbolic link (O_NOFOLLOW), never into a
// FIFO, device or folder, and never truncating a file that has other
// hard links. memdiag runs as root and its recordings hold every
// process's command line, so a link planted at an output path must not
// redirect the write (a copy of /etc/passwd turned into JUnit XML) and a
// recording must not be readable by every user.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// DefaultMode is the permission of every file memdiag creates: the owner
// alone may read it.
const DefaultMode fs.FileMode = 0o600

// ErrExists is returned (wrapped) when the file exists and overwriting was
// not asked for.
var ErrExists = errors.New("file exists")

// Options say how to open an output file.
type Options struct {
	// Mode is the permission of the file (--mode); 0 means DefaultMode.
	// It is set exactly, whatever the umask, on a new file and on one
	// overwritten; a file appended to keeps its mode.
	Mode fs.FileMode
	// Overwrite truncates an existing regular file with one link; without
	// it an existing file is an ErrExists error.
	Overwrite bool
	// Append writes at the end of an existing file instead (a CI step
	// summary); it implies that an existing file is fine.
	Append bool
}

// Create opens path for writing as opts say. Errors name the path and say
// why the file was refused.
func Create(path string, opts Options) (*os.File, error) {
	mode := opts.Mode
	if mode == 0 {
		mode = DefaultMode
	}
	// O_NONBLOCK: a FIFO planted at the path must not block the open; it
	// is refused below as not a regular file.
	flags := os.O_WRONLY | os.O_CREATE | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	switch {
	case opts.Append:
		flags |= os.O_APPEND
	case !opts.Overwrite:
		flags |= os.O_EXCL
	}
	// Never O_TRUNC at open: a hard link to another file would be
	// truncated before it could be checked.
	f, err := os.OpenFile(path, flags, mode)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrExist):
			return nil, fmt.Errorf("%s: %w (use --force to overwrite)", path, ErrExists)
		case errors.Is(err, syscall.ELOOP):
			return nil, fmt.Errorf("%s: is a symbolic link; refusing to write through it", path)
		case errors.Is(err, syscall.ENXIO):
			return nil, fmt.Errorf("%s: is a FIFO or socket with no reader; refusing to write to it", path)
		}
		return nil, err
	}
	fail := func(format string, a ...any) (*os.File, error) {
		f.Close()
		return nil, fmt.Errorf("%s: "+format, append([]any{path}, a...)...)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail("%w", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file (%s); refusing to write to it", fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fail("has %d hard links; refusing to overwrite a file that is also elsewhere", st.Nlink)
	}
	if opts.Overwrite && !opts.Append {
		if err := f.Truncate(0); err != nil {
			return fail("%w", err)
		}
	}
	if !opts.Append {
		// The umask narrowed a new file's mode, and an overwritten file
		// had its own: set exactly the one asked for.
		if err := f.Chmod(mode.Perm()); err != nil {
			return fail("%w", err)
		}
	}
	// Writes block as usual from here on.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		return fail("%w", err)
	}
	return f, nil
}

// Check refuses, before any work is done, an output file the user named
// with flag that exists (without force: a report was lost to a silent
// overwrite), is a directory or is a symbolic link. All are faults of a
// file the user named (exit 1, as --latency DIR and watch --out EXISTING
// are). "" and "-" (stdout) are always fine.
func Check(flag, path string, force bool) error {
	if path == "" || path == "-" {
		return nil
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created by Write
	}
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, path, err)
	case fi.IsDir():
		return fmt.Errorf("%s %s: is a directory, not a file", flag, path)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %s: is a symbolic link; refusing to write through it", flag, path)
	case !force:
		return fmt.Errorf("%s %s: %w (use --force to overwrite)", flag, path, ErrExists)
	}
	return nil
}

// Write checks (Check) and creates (Create, opts.Overwrite as force) the
// file path that flag names, runs write on it and closes it; it returns
// the file's size in bytes. Errors name flag.
func Write(flag, path string, opts Options, write func(io.Writer) error) (size int64, err error) {
	if err := Check(flag, path, opts.Overwrite); err != nil {
		return 0, err
	}
	f, err := Create(path, opts)
	if err != nil {
		// A refused or failed file is a runtime failure (exit 1, no
		// usage text), as gate says it: the flag itself was well formed.
		return 0, fmt.Errorf("%s: %w", flag, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return 0, err
	}
	st, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return st.Size(), nil
}
