package cmd

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// minParallel is how many of cmd's parallel tests run at once when the
// command line does not say (go test's default is GOMAXPROCS): most of
// them wait on a memdiag child process — a run of watch or record, a
// signal, a timeout — not on the CPU. On the 2-core CI machine the
// package's fast tests took 33.4 s at -parallel 2 and 23.4 s at 8, the
// same CPU time (user + sys 30 s; docs/ci.md, the twenty-fourth session).
const minParallel = 8

// TestMain raises -test.parallel to minParallel unless it was given
// (CI's GOFLAGS gives -parallel=5 to the whole suite) or GOMAXPROCS is
// higher already.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && runtime.GOMAXPROCS(0) < minParallel {
		if err := flag.Set("test.parallel", strconv.Itoa(minParallel)); err != nil {
			fmt.Fprintln(os.Stderr, "cmd tests:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
