package process

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/memdiag/memdiag/internal/english"
)

// The policy every reader of per-process files keeps (package diskio's
// per-second scanner, package memstate's processes by RSS): what an
// error reading /proc/PID/FILE means depends on why.
//
//   - The process exited between the listing of /proc and the read
//     (ENOENT on open, ESRCH on a read of a dead task's open file): normal,
//     counted as vanished, said nowhere ([Gone]).
//   - The file is another user's and memdiag is not root (EACCES, EPERM):
//     normal, counted as denied ([Denied]).
//   - Anything else — the file is there but not a regular file (a FIFO or
//     a device in a --root tree), over its size limit, not in the
//     kernel's format, or an I/O error — is a fault: the figure the file
//     holds is left out (the process skipped when it is the file that
//     says what the process is), never read as zero; the fault is
//     counted, and the first one, naming its file and line, is said once
//     as a warning ([Faults]). One bad process never stops the sample or
//     the command.

// Gone reports whether err means the process exited while being read:
// fs.ErrNotExist (ENOENT) or ESRCH.
func Gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// Denied reports whether err is EACCES or EPERM (fs.ErrPermission
// matches both): another user's file, read without root.
func Denied(err error) bool { return errors.Is(err, fs.ErrPermission) }

// Faults counts the per-process files of one scan that are there but
// cannot be used, and keeps the first, whose error names the file (and
// line). The zero value is empty.
type Faults struct {
	N     int
	First error
}

// Add counts one fault: err, which names its file.
func (f *Faults) Add(err error) {
	f.N++
	if f.First == nil {
		f.First = err
	}
}

// Note sorts a read error of a per-process file by the policy above: a
// fault is added (unless f is nil: a caller that does not report them)
// and Note returns true; a vanished process, a denied file or nil
// return false.
func (f *Faults) Note(err error) bool {
	if err == nil || Gone(err) || Denied(err) {
		return false
	}
	if f != nil {
		f.Add(err)
	}
	return true
}

// Err is the warning to say: nil when there was no fault, else how many
// files were left out and the first of them.
func (f *Faults) Err() error {
	if f.N == 0 {
		return nil
	}
	return &FaultError{N: f.N, First: f.First}
}

// FaultError is [Faults.Err]'s warning: N per-process files left out,
// First naming the first of them.
type FaultError struct {
	N     int
	First error
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("%s left out (there but unusable: not a regular file, too large or malformed); the first: %v",
		english.Count(e.N, "per-process file"), e.First)
}

func (e *FaultError) Unwrap() error { return e.First }
