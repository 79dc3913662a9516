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

// errLocked is wrapped by Lock's error when another recorder holds the
// store.
var errLocked = errors.New("another memdiag record holds this store")

// Lock takes the store's lock (flock(2) on dir/.lock, which the kernel
// releases when the holder dies, SIGKILL included, so a restart after a
// crash never finds a stale lock) and writes the holder's PID into it.
// Close the returned file to release it.
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
			return nil, fmt.Errorf("%s: %w%s", dir, errLocked, holder)
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}
