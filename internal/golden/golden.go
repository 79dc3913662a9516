// Package golden compares test output with golden files, in the manner of
// go/printer's tests. MEMDIAG_UPDATE_GOLDEN=1 rewrites them: in every
// package at once (`make golden`) or in one (`MEMDIAG_UPDATE_GOLDEN=1 go
// test ./report`). Every rewrite must be reviewed like code.
//
// There is no -update flag: a flag that only some test binaries define
// makes `go test ./... -update` fail in the others, so the one mechanism
// is the environment variable, which every test binary sees. Every test
// package that keeps golden files or fixture recordings asks [Updating].
package golden

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// EnvVar is the environment variable that, set to 1, rewrites golden
// files instead of comparing with them.
const EnvVar = "MEMDIAG_UPDATE_GOLDEN"

// Updating reports whether MEMDIAG_UPDATE_GOLDEN=1 is set.
func Updating() bool { return os.Getenv(EnvVar) == "1" }

// Check compares got with the file at path (relative to the test's
// package directory), or writes it when [Updating], showing a -want +got
// diff on a mismatch. A path ending in .gz is kept gzip-compressed (large
// goldens: `zcat` reads them, `git diff --text` with textconv shows them).
func Check(t testing.TB, path, got string) {
	t.Helper()
	gz := strings.HasSuffix(path, ".gz")
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		b := []byte(got)
		if gz {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			if _, err := zw.Write(b); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			b = buf.Bytes()
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run make golden, or MEMDIAG_UPDATE_GOLDEN=1 go test in this package, to create it, then review it)", err)
	}
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(want))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if want, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}
