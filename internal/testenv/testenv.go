// Package testenv holds helpers for memdiag's end-to-end tests: the rule
// that decides whether a root-only test runs, skips or fails, and real
// components (cgroups, swap files) created for a test and removed after it.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Required reports whether end-to-end tests must run (MEMDIAG_E2E=require,
// set by .ci/run): then a missing precondition is a failure, not a skip.
func Required() bool { return os.Getenv("MEMDIAG_E2E") == "require" }

// Enabled reports whether end-to-end tests that change the host (cgroups,
// swap files, timer units, memory hogs, kernel settings) may run:
// MEMDIAG_E2E=1 or MEMDIAG_E2E=require. Plain `go test ./...` leaves the
// host alone, even as root.
func Enabled() bool {
	v := os.Getenv("MEMDIAG_E2E")
	return v == "1" || v == "require"
}

// RequireRoot skips the test with a message unless end-to-end tests are
// enabled (MEMDIAG_E2E=1) and it runs as root, or fails it when they are
// required. what says what the test needs root for.
func RequireRoot(t testing.TB, what string) {
	t.Helper()
	if !Enabled() {
		t.Skip("end-to-end test skipped: it changes the host (" + what + "); set MEMDIAG_E2E=1 as root to run it")
	}
	if os.Geteuid() == 0 {
		return
	}
	Unmet(t, "needs root for "+what+"; run as root (CI does) to include it")
}

// Unmet skips (or, when required, fails) the test because a precondition
// of an end-to-end test does not hold.
func Unmet(t testing.TB, why string) {
	t.Helper()
	if Required() {
		t.Fatalf("end-to-end test required (MEMDIAG_E2E=require) but cannot run: %s", why)
	}
	t.Skip("end-to-end test skipped: " + why)
}

// BuildHog compiles internal/testenv/hog into the test's temp dir and
// returns the binary's path.
func BuildHog(t testing.TB) string {
	t.Helper()
	return BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/hog", "hog")
}

// BuildMemdiag compiles memdiag into the test's temp dir and returns the
// binary's path, so end-to-end tests run the real program.
func BuildMemdiag(t testing.TB) string {
	t.Helper()
	return BuildPackage(t, "github.com/memdiag/memdiag", "memdiag")
}

// BuildC compiles one of internal/testenv/cprog's C programs (name.c)
// with gcc into the test's temp dir, extra arguments (libraries, -pthread)
// after the source. Without gcc the test is unmet (.ci/run installs it).
func BuildC(t testing.TB, name string, args ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		Unmet(t, "gcc not installed (.ci/run installs it)")
	}
	out := filepath.Join(t.TempDir(), name)
	src := filepath.Join(moduleRoot(t), "internal", "testenv", "cprog", name+".c")
	if b, err := exec.Command(gcc, append([]string{"-O2", "-o", out, src}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	return out
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(b) < 2 {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(string(b[:len(b)-1]))
}

// BuildPackage runs go build for pkg into a temp dir.
func BuildPackage(t testing.TB, pkg, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}
