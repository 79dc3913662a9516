package testutil

import (
	"os"
	"testing"

	"github.com/creack/pty"
)

// SilentStdins are standard inputs that never give a byte, for tests of
// reads that Ctrl-C must end: "pipe", a pipe whose writer stays open and
// writes nothing (`sleep 1d | memdiag ...`), and "terminal", a
// pseudo-terminal nobody types on (left out, with a log line, where none
// can be had). Both ends are closed when the test ends.
func SilentStdins(t testing.TB) map[string]*os.File {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); pr.Close() })
	in := map[string]*os.File{"pipe": pr}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Logf("no pseudo-terminal: %v", err)
		return in
	}
	t.Cleanup(func() { tty.Close(); ptmx.Close() })
	in["terminal"] = tty
	return in
}
