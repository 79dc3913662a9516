package testenv

import (
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockPath serialises end-to-end tests across test binaries: `go test
// ./...` runs packages in parallel, and two tests that each drive a cgroup
// into reclaim would disturb each other's disk and timing.
const lockPath = "/var/tmp/memdiag-e2e.lock"

var (
	lockMu   sync.Mutex
	lockFile *os.File
	lockRefs int
	lockFor  = map[testing.TB]bool{}
)

// Exclusive makes the rest of the test run alone among memdiag's
// end-to-end tests in other test binaries (a flock on
// /var/tmp/memdiag-e2e.lock, held while any test of this binary needs it).
// NewCgroup and SwapFile call it; calling it again, or from a subtest, is
// fine.
func Exclusive(t testing.TB) {
	t.Helper()
	lockMu.Lock()
	defer lockMu.Unlock()
	if lockFor[t] {
		return
	}
	if lockRefs == 0 {
		f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatalf("e2e lock: %v", err)
		}
		// A test's time in go test's output includes this wait: say how
		// long it was, so a slow test is told from one that queued.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			waitStart := time.Now()
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				f.Close()
				t.Fatalf("e2e lock: %v", err)
			}
			t.Logf("waited %s for the e2e lock %s (another test binary's end-to-end test held it)",
				time.Since(waitStart).Round(100*time.Millisecond), lockPath)
		}
		lockFile = f
	}
	lockRefs++
	lockFor[t] = true
	t.Cleanup(func() {
		lockMu.Lock()
		defer lockMu.Unlock()
		delete(lockFor, t)
		lockRefs--
		if lockRefs == 0 {
			_ = syscall.Flock(int(lockFile.Fd()), syscall.LOCK_UN)
			lockFile.Close()
			lockFile = nil
		}
	})
}
