package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// runWith runs a memdiag command line on test streams (not a TTY, no
// colour) with the given clock and filesystem root, and returns the exit
// code, stdout and stderr.
func runWith(t *testing.T, now func() time.Time, root string, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &Factory{IO: ios, Now: now, Root: root}
	code := Run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}
