package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestHoldFileLock: the lock is held while the test that took it runs
// (another open file description cannot take it) and released when it
// ends.
func TestHoldFileLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lane.lock")
	try := func() error {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	t.Run("holder", func(t *testing.T) {
		HoldFileLock(t, path, "nothing")
		if err := try(); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("flock beside the holder: %v; want EWOULDBLOCK", err)
		}
	})
	if err := try(); err != nil {
		t.Errorf("flock after the holder ended: %v", err)
	}
}
