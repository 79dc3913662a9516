// Package testutil holds what memdiag's tests share that needs no host
// set-up (for cgroups, swap files and the e2e lock see internal/testenv):
// fuzz corpus seeds read from real files, and a scratch root for fuzzing
// a reader that takes a root (procfs readers read files, not bytes).
package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Seed adds the content of each file to f's corpus as T, the type of the
// fuzz function's argument ([]byte or string). A plain path that cannot
// be read fails f: a seed file moved away would silently shrink the
// corpus. A path with glob metacharacters (*?[) adds what it matches,
// which may be nothing.
func Seed[T []byte | string](f *testing.F, paths ...string) {
	f.Helper()
	seeds, err := readSeeds(paths)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range seeds {
		f.Add(T(b))
	}
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
