package testenv

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockPath serialises end-to-end tests across test binaries: `go test
// ./...` runs packages in parallel, and two tests that each drive a cgroup
// into reclaim would disturb each other's disk and timing.
var lockPath = "/var/tmp/memdiag-e2e.lock"

// A test binary holds the lock in one of two modes, each through its own
// open file description (flock(2) locks belong to those, so the two modes
// conflict inside one binary as they do across binaries).
type lockMode struct {
	how  int // syscall.LOCK_EX or LOCK_SH
	file *os.File
	refs int
}

// String is the mode's name in the lock log: exclusive or shared.
func (m *lockMode) String() string {
	if m.how == syscall.LOCK_SH {
		return "shared"
	}
	return "exclusive"
}

var (
	lockMu    sync.Mutex
	exclusive = &lockMode{how: syscall.LOCK_EX}
	shared    = &lockMode{how: syscall.LOCK_SH}
	lockFor   = map[testing.TB]*lockMode{}
	// sharedTests are the names of the tests that called Shared: their
	// subtests, and the NewCgroup, SwapFile and NewUML they call, hold
	// the shared lock too.
	sharedTests = map[string]bool{}
	// asideTests are the names of the tests that called Aside: they and
	// their subtests take no e2e lock.
	asideTests = map[string]bool{}
)

// Exclusive makes the rest of the test run alone among memdiag's
// end-to-end tests in other test binaries (a flock on
// /var/tmp/memdiag-e2e.lock, held while any test of this binary needs it).
// NewCgroup and SwapFile call it; calling it again, or from a subtest, is
// fine. In a test that called Shared (or a subtest of one) it holds the
// shared lock instead.
func Exclusive(t testing.TB) {
	t.Helper()
	lockMu.Lock()
	if under(asideTests, t.Name()) {
		lockMu.Unlock()
		return
	}
	m := exclusive
	if underShared(t.Name()) {
		m = shared
	}
	lockMu.Unlock()
	hold(t, m)
}

// Shared marks a test that may run beside other Shared tests, here (call
// t.Parallel first) and in other test binaries, but never beside an
// Exclusive one: a test that makes its own cgroups, processes or guest
// and asserts only on them (their own counters, their own processes' I/O,
// a UML guest's kernel), so another such test's load cannot change its
// answer, while it would still disturb a test that reads the host's PSI,
// LRU or disk, or times its samples. The cgroups, swap files and guests
// it makes hold the shared lock too.
func Shared(t testing.TB) {
	t.Helper()
	mark(t, sharedTests)
	hold(t, shared)
}

// Aside marks a test that runs beside every other end-to-end test, whatever
// lock they hold: it takes no e2e lock (Exclusive is a no-op in it and its
// subtests), and the UML guest it boots — the one kind of test this is
// for — holds only the UML lock and runs at the lowest CPU and I/O
// priority (nice 19, ionice idle), so it gets little of the CPU the
// others want (1/68 of a test's share) and only the disk time they leave.
// Fit for a guest that reads nothing of the host's (its own kernel, its
// own systemd), whose RAM is shmem and whose writes stay in its tmpfs
// and its small output directory: what other tests measure — the host's
// PSI, file LRU, disk and their own timing — it does not move.
func Aside(t testing.TB) {
	t.Helper()
	mark(t, asideTests)
}

// mark adds t's name to set until t ends.
func mark(t testing.TB, set map[string]bool) {
	lockMu.Lock()
	set[t.Name()] = true
	lockMu.Unlock()
	t.Cleanup(func() {
		lockMu.Lock()
		delete(set, t.Name())
		lockMu.Unlock()
	})
}

// underShared reports whether name is a test that called Shared or one
// of its subtests. lockMu is held.
func underShared(name string) bool { return under(sharedTests, name) }

// under reports whether name or one of its parent tests is in set.
// lockMu is held.
func under(set map[string]bool, name string) bool {
	for {
		if set[name] {
			return true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return false
		}
		name = name[:i]
	}
}

// hold takes m for t until t ends (once per test).
func hold(t testing.TB, m *lockMode) {
	t.Helper()
	lockMu.Lock()
	if lockFor[t] != nil {
		lockMu.Unlock()
		return
	}
	// Mark t before waiting, so a second call from t returns at once.
	lockFor[t] = m
	first := m.refs == 0
	m.refs++
	if first {
		f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			lockMu.Unlock()
			t.Fatalf("e2e lock: %v", err)
		}
		m.file = f
	}
	f := m.file
	lockMu.Unlock()
	t.Cleanup(func() { release(t, m) })
	if !first {
		// Another test of this binary holds (or is taking) the lock in
		// this mode; wait until it has it.
		waitHeld(m)
		logLock("hold", m.String(), t.Name())
		return
	}
	// A test's time in go test's output includes this wait: say how
	// long it was, so a slow test is told from one that queued.
	if err := syscall.Flock(int(f.Fd()), m.how|syscall.LOCK_NB); err != nil {
		waitStart := time.Now()
		if err := syscall.Flock(int(f.Fd()), m.how); err != nil {
			markHeld(m) // the others waiting fail on their own
			t.Fatalf("e2e lock: %v", err)
		}
		t.Logf("waited %s for the e2e lock %s (another end-to-end test held it)",
			time.Since(waitStart).Round(100*time.Millisecond), lockPath)
	}
	markHeld(m)
	logLock("hold", m.String(), t.Name())
}

// logLock appends "RFC3339Nano PID event mode test" to the file named by
// MEMDIAG_E2E_LOCKLOG when it is set (CI sets it, scripts/locktimeline.py
// reads it): when each test began and ended holding each lock (a
// binary's flock is the union of its tests' spans in one mode), the
// suite's critical path measured instead of guessed from test
// durations. One O_APPEND write per line, so binaries' lines do not
// interleave.
func logLock(event, mode, name string) {
	path := os.Getenv("MEMDIAG_E2E_LOCKLOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "%s %d %s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), os.Getpid(), event, mode, name)
}

var (
	heldMu   sync.Mutex
	heldCond = sync.NewCond(&heldMu)
	held     = map[*lockMode]bool{}
)

func markHeld(m *lockMode) {
	heldMu.Lock()
	held[m] = true
	heldMu.Unlock()
	heldCond.Broadcast()
}

func waitHeld(m *lockMode) {
	heldMu.Lock()
	for !held[m] {
		heldCond.Wait()
	}
	heldMu.Unlock()
}

// release drops t's hold of m; the last one unlocks.
func release(t testing.TB, m *lockMode) {
	lockMu.Lock()
	defer lockMu.Unlock()
	delete(lockFor, t)
	logLock("release", m.String(), t.Name())
	m.refs--
	if m.refs == 0 {
		heldMu.Lock()
		held[m] = false
		heldMu.Unlock()
		_ = syscall.Flock(int(m.file.Fd()), syscall.LOCK_UN)
		m.file.Close()
		m.file = nil
	}
}

// umlLockPath is held by each running UML guest (NewUML): one at a time,
// in this binary or another.
var umlLockPath = "/var/tmp/memdiag-e2e-uml.lock"

// oneGuest waits until no other test runs a UML guest and holds that
// until t ends. Each call has its own open file description, so two
// tests of one binary wait for each other too.
func oneGuest(t testing.TB) {
	t.Helper()
	HoldFileLock(t, umlLockPath, "another test's UML guest to end")
	logLock("hold", "uml", t.Name())
	t.Cleanup(func() { logLock("release", "uml", t.Name()) })
}

// HoldFileLock takes an exclusive flock on path (made if missing), waiting
// while another test — of this binary or another process — holds it, and
// holds it until t ends: its release is registered now, so it runs after
// every cleanup t registers later. waitFor says what a wait was for, in
// the log line a wait leaves.
func HoldFileLock(t testing.TB, path, waitFor string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		waitStart := time.Now()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatalf("lock %s: %v", path, err)
		}
		t.Logf("waited %s for %s (%s)", time.Since(waitStart).Round(100*time.Millisecond), waitFor, path)
	}
}
