package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tryLock reports whether another open file description of lockPath
// could take the lock in mode how now (as another test binary would).
func tryLock(t *testing.T, how int) bool {
	t.Helper()
	f, err := os.Open(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return true
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatal(err)
	}
	return false
}

func TestLockModes(t *testing.T) {
	old := lockPath
	lockPath = filepath.Join(t.TempDir(), "e2e.lock")
	t.Cleanup(func() { lockPath = old })

	t.Run("exclusive", func(t *testing.T) {
		Exclusive(t)
		Exclusive(t) // again: a no-op
		if tryLock(t, syscall.LOCK_SH) {
			t.Error("another binary could take the shared lock while a test holds the exclusive one")
		}
	})
	if !tryLock(t, syscall.LOCK_EX) {
		t.Fatal("the exclusive lock is still held after its test ended")
	}

	// Two Shared tests hold the lock at the same time; a subtest's
	// NewCgroup-style Exclusive call holds the shared lock too; another
	// binary can share it but not take it exclusively.
	var both sync.WaitGroup
	both.Add(2)
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				Shared(t)
				both.Done()
				done := make(chan struct{})
				go func() { both.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(2 * time.Minute): // a hang bound: the other may wait seconds for the CPU (SCHED_IDLE, as CI's fresh clone as nobody)
					t.Fatal("the other Shared test did not get the lock beside this one in 2 min")
				}
				t.Run("sub", func(t *testing.T) {
					Exclusive(t)
					if lockFor[t] != shared {
						t.Error("Exclusive under a Shared test took the exclusive lock")
					}
				})
				if tryLock(t, syscall.LOCK_EX) {
					t.Error("another binary could take the exclusive lock while Shared tests hold it")
				}
				if !tryLock(t, syscall.LOCK_SH) {
					t.Error("another binary could not share the lock with Shared tests")
				}
			})
		}
	})
	if !tryLock(t, syscall.LOCK_EX) {
		t.Fatal("the lock is still held after the Shared tests ended")
	}
}

func TestUnderShared(t *testing.T) {
	sharedTests["TestA"] = true
	defer delete(sharedTests, "TestA")
	for name, want := range map[string]bool{"TestA": true, "TestA/x": true, "TestA/x/y": true, "TestAB": false, "TestB/TestA": false} {
		if got := underShared(name); got != want {
			t.Errorf("underShared(%q) = %v, want %v", name, got, want)
		}
	}
}

// Two guests never run at once: the second waits for the first to end.
func TestOneGuest(t *testing.T) {
	old := umlLockPath
	umlLockPath = filepath.Join(t.TempDir(), "uml.lock")
	t.Cleanup(func() { umlLockPath = old })
	var mu sync.Mutex
	running, most := 0, 0
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b", "c"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				oneGuest(t)
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
			})
		}
	})
	if most != 1 {
		t.Errorf("%d guests ran at once, want 1", most)
	}
}

// With MEMDIAG_E2E_LOCKLOG set, each test's hold and release of each lock
// is a line: time, PID, event, mode, test.
func TestLockLog(t *testing.T) {
	old := lockPath
	lockPath = filepath.Join(t.TempDir(), "e2e.lock")
	t.Cleanup(func() { lockPath = old })
	log := filepath.Join(t.TempDir(), "locks.log")
	t.Setenv("MEMDIAG_E2E_LOCKLOG", log)
	t.Run("one", func(t *testing.T) { Exclusive(t) })
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("log %q: want a hold and a release", b)
	}
	var at [2]time.Time
	for i, want := range []string{"hold exclusive TestLockLog/one", "release exclusive TestLockLog/one"} {
		f := strings.SplitN(lines[i], " ", 3)
		if len(f) != 3 || f[1] != strconv.Itoa(os.Getpid()) || f[2] != want {
			t.Errorf("line %d %q: want TIME %d %s", i+1, lines[i], os.Getpid(), want)
			continue
		}
		if at[i], err = time.Parse(time.RFC3339Nano, f[0]); err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
	}
	if at[1].Before(at[0]) {
		t.Errorf("released %s before held %s", at[1], at[0])
	}
}

// An Aside test and its subtests take no e2e lock: another binary can
// take it exclusively while they run.
func TestAsideTakesNoLock(t *testing.T) {
	old := lockPath
	lockPath = filepath.Join(t.TempDir(), "e2e.lock")
	t.Cleanup(func() { lockPath = old })
	if err := os.WriteFile(lockPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("aside", func(t *testing.T) {
		Aside(t)
		Exclusive(t)
		t.Run("sub", func(t *testing.T) {
			Exclusive(t)
			if !tryLock(t, syscall.LOCK_EX) {
				t.Error("a subtest of an Aside test holds the e2e lock")
			}
		})
		if !tryLock(t, syscall.LOCK_EX) {
			t.Error("an Aside test holds the e2e lock")
		}
	})
	// After it, Exclusive locks again.
	t.Run("after", func(t *testing.T) {
		Exclusive(t)
		if tryLock(t, syscall.LOCK_SH) {
			t.Error("Exclusive took no lock after the Aside test ended")
		}
	})
}
