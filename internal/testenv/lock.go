package testenv

import (
	"os"
	"sync"
	"syscall"
	"testing"
)

// lockPath serialises end-to-end tests across test binaries: `go test
// ./...` runs packages in parallel, and two tests that each drive a cgroup
// into reclaim would disturb each other's disk and timing.
const lockPath = "/var/tmp/memdiag-e2e.lock"

var (
	lockMu  sync.Mutex
	lockFor = map[testing.TB]bool{}
)

// Exclusive makes the rest of the test run alone among memdiag's
// end-to-end tests (a flock on /var/tmp/memdiag-e2e.lock, released when
// the test ends). NewCgroup and SwapFile call it; calling it twice in one
// test is fine.
func Exclusive(t testing.TB) {
	t.Helper()
	lockMu.Lock()
	held := lockFor[t]
	lockFor[t] = true
	lockMu.Unlock()
	if held {
		return
	}
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("e2e lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("e2e lock: %v", err)
	}
	t.Cleanup(func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		lockMu.Lock()
		delete(lockFor, t)
		lockMu.Unlock()
	})
}
