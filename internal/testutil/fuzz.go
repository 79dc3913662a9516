// Package testutil holds what memdiag's tests share that needs no host
// set-up (for cgroups, swap files and the e2e lock see internal/testenv):
// fuzz corpus seeds read from real files, a scratch root for fuzzing
// a reader that takes a root (procfs readers read files, not bytes), and
// fake processes for a /proc built in a test ([WriteProc]).
package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Seed adds the content of each file to f's corpus as T, the type of the
// fuzz function's argument ([]byte or string), through [Head]: whole
// under plain go test, which runs the fuzz function on every seed (the
// real files stay regression tests), and only their first lines when
// fuzzing. A plain path that cannot be read fails f: a seed file moved
// away would silently shrink the corpus. A path with glob metacharacters
// (*?[) adds what it matches, which may be nothing.
func Seed[T []byte | string](f *testing.F, paths ...string) {
	f.Helper()
	seeds, err := readSeeds(paths)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range seeds {
		f.Add(T(Head(b)))
	}
}

// MaxSeed bounds a seed's length while fuzzing. The engine minimizes
// every new interesting input, and minimizing n bytes runs the target up
// to about n²/2 times, uncounted: grown from a real file of kilobytes
// that is minutes, and the target stalls (issue 29.8: FuzzReader made 8
// executions in 21 s; scripts/fuzz.sh now fails a target under 1,000).
const MaxSeed = 256

// Head returns b when the test binary is not fuzzing (go test without
// -fuzz runs each seed once, so a whole real file is a regression test)
// and, when it is, the first whole lines of b that fit in MaxSeed bytes
// (at least the first line, cut to MaxSeed).
func Head(b []byte) []byte { return head(b, Fuzzing()) }

func head(b []byte, fuzzing bool) []byte {
	if !fuzzing || len(b) <= MaxSeed {
		return b
	}
	if i := bytes.LastIndexByte(b[:MaxSeed], '\n'); i > 0 {
		return b[:i+1]
	}
	return b[:MaxSeed]
}

// Fuzzing reports whether the test binary runs a fuzz target's engine
// (-test.fuzz given), not just its seeds.
func Fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// readSeeds reads the files Seed adds, in order.
func readSeeds(paths []string) ([][]byte, error) {
	var seeds [][]byte
	for _, p := range paths {
		ms := []string{p}
		if strings.ContainsAny(p, "*?[") {
			var err error
			if ms, err = filepath.Glob(p); err != nil {
				return nil, err
			}
		}
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				return nil, err
			}
			seeds = append(seeds, b)
		}
	}
	return seeds, nil
}

// FuzzRoot makes a root directory once per fuzzing worker (f.TempDir),
// with each of dirs (relative to it, mode 0700) created, and returns it.
// Each input is then written into it with [WriteInput] and read back by
// the reader under test.
func FuzzRoot(f *testing.F, dirs ...string) string {
	f.Helper()
	root := f.TempDir()
	if err := makeDirs(root, dirs); err != nil {
		f.Fatal(err)
	}
	return root
}

func makeDirs(root string, dirs []string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// WriteInput writes one fuzz input b to path (mode 0600), failing t if it
// cannot.
func WriteInput(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
