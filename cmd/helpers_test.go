package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/spf13/cobra"
)

// runWith runs a memdiag command line on test streams (not a TTY, no
// colour) with the given clock and filesystem root, and returns the exit
// code, stdout and stderr.
func runWith(t *testing.T, now func() time.Time, root string, args ...string) (int, string, string) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	// watch -- CMD gives the command memdiag's own stdout and stderr:
	// not files here, so os/exec copies the child's output into them from
	// a goroutine of its own, beside memdiag's writes.
	var out, errOut syncBuffer
	ios.Out, ios.ErrOut = &out, &errOut
	f := &factory{IO: ios, Now: now, Root: root}
	code := execute(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

// execInRoot runs args ("NAME flags…") against the full command tree with
// the registered command of c's name replaced by c — built with a runF
// that captures its options — so that global flags and flag errors behave
// as in memdiag itself. It returns Execute's error.
func execInRoot(f *factory, c *cobra.Command, args ...string) error {
	root := newRootCmd(f)
	for _, old := range root.Commands() {
		if old.Name() == c.Name() {
			root.RemoveCommand(old)
		}
	}
	root.AddCommand(c)
	root.SetArgs(args)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	return root.Execute()
}

// iostreamsTest is iostreams.Test.
var iostreamsTest = iostreams.Test

// runFactory runs args against f and returns the exit code.
func runFactory(f *factory, args []string) int { return execute(context.Background(), f, args) }
