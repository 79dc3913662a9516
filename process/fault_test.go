package process

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// TestFaults: the per-process file policy sorts read errors: an exited
// process (ENOENT, ESRCH) and a denied file (EACCES, EPERM) are no
// fault; a FIFO refused, a file too large or a malformed one is, counted,
// and the first is what the warning names. A nil *Faults sorts without
// keeping.
func TestFaults(t *testing.T) {
	var f Faults
	if err := f.Err(); err != nil {
		t.Errorf("no fault: Err() = %v", err)
	}
	for _, err := range []error{nil,
		&fs.PathError{Op: "open", Path: "/proc/9/io", Err: syscall.ENOENT},
		&fs.PathError{Op: "read", Path: "/proc/9/io", Err: syscall.ESRCH},
		&fs.PathError{Op: "open", Path: "/proc/9/io", Err: syscall.EACCES},
		syscall.EPERM,
	} {
		if f.Note(err) {
			t.Errorf("%v sorted as a fault", err)
		}
	}
	first := &fs.PathError{Op: "open", Path: "/r/proc/9/stat", Err: rootfs.ErrNotRegular}
	for _, err := range []error{first,
		fmt.Errorf("/r/proc/9/io:2:%w", fmt.Errorf(" %w: read_bytes \"x\"", ErrParse)),
		&fs.PathError{Op: "read", Path: "/r/proc/9/maps", Err: rootfs.ErrTooLarge},
	} {
		if !f.Note(err) {
			t.Errorf("%v not sorted as a fault", err)
		}
	}
	err := f.Err()
	var fe *FaultError
	if f.N != 3 || !errors.As(err, &fe) || !errors.Is(err, rootfs.ErrNotRegular) ||
		err.Error() != "3 per-process files left out (there but unusable: not a regular file, too large or malformed); the first: open /r/proc/9/stat: not a regular file" {
		t.Errorf("N %d, Err() = %v", f.N, err)
	}
	var none *Faults
	if !none.Note(first) || none.Note(syscall.ESRCH) {
		t.Error("a nil *Faults sorts differently")
	}
	if !Gone(syscall.ESRCH) || !Gone(fs.ErrNotExist) || Gone(syscall.EACCES) || !Denied(syscall.EPERM) || Denied(syscall.ENOENT) {
		t.Error("Gone or Denied")
	}
}
