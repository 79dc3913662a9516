package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockName is the file in a store that its recorder holds locked.
const lockName = ".lock"

// ErrLocked is wrapped by Lock's error when another recorder holds the
// store.
var ErrLocked = errors.New("another memdiag record holds this store")

// Lock takes the store's lock (flock(2) on dir/.lock, which the kernel
// releases when the holder dies, SIGKILL included, so a restart after a
// crash never finds a stale lock) and writes the holder's PID into it.
// It also takes an open file description lock (fcntl F_OFD_SETLK) on the
// same file, which readers can test without taking it ([Held]); the
// kernel releases both together. Close the returned file to release it.
func Lock(dir string) (*os.File, error) {
	p := filepath.Join(dir, lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(p); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (PID %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w%s", dir, ErrLocked, holder)
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	// The flock above is what keeps a second recorder out (memdiag
	// before this lock took only it); this one tells readers. A reader
	// cannot test a flock without taking it, and a reader holding it for
	// an instant would turn a recorder starting in that instant away.
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// Held reports whether a recorder holds dir's lock now: whether the
// newest segment of dir is being written. It takes no lock (fcntl
// F_OFD_GETLK only asks), so it never keeps a recorder from starting. A
// store whose lock file cannot be opened (none, or not readable by this
// user) is not held, as far as the reader can tell.
func Held(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}
