package rootfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/usage"
)

func TestCheckNamed(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.csv")
	err := CheckNamed("--latency", missing)
	var ne *NamedError
	if !errors.As(err, &ne) || !errors.Is(err, fs.ErrNotExist) || err.Error() != "--latency "+missing+": no such file or directory" {
		t.Errorf("missing file: %T %v", err, err)
	}
	if err := CheckNamed("", dir); err == nil || err.Error() != dir+": is a directory, not a file" {
		t.Errorf("folder: %v", err)
	}
	if err := CheckNamed("--latency", "-"); err != nil {
		t.Errorf("stdin: %v", err)
	}
}

func TestOpenNamed(t *testing.T) {
	rc, name, err := OpenNamed(context.Background(), strings.NewReader("x"), "", "-", 10)
	if err != nil || name != StdinName {
		t.Fatalf("stdin: %q, %v", name, err)
	}
	if b, _ := io.ReadAll(rc); string(b) != "x" {
		t.Errorf("stdin read %q", b)
	}
	dir := t.TempDir()
	if _, _, err := OpenNamed(context.Background(), nil, "--recording", dir, 10); err == nil || err.Error() != "--recording "+dir+": is a directory, not a file" {
		t.Errorf("folder: %v", err)
	}
	var ne *NamedError
	if _, _, err := OpenNamed(context.Background(), nil, "", filepath.Join(dir, "none"), 10); !errors.As(err, &ne) || ne.Flag != "" {
		t.Errorf("missing: %T %v", err, err)
	}
}

// TestOneStdin: one "-" is fine; two are a *usage.Error naming both, in
// the order given.
func TestOneStdin(t *testing.T) {
	names := []string{"BEFORE", "AFTER", "--latency-before"}
	if err := OneStdin(names, "-", "b.jsonl", "lat.csv"); err != nil {
		t.Errorf("one stdin: %v", err)
	}
	err := OneStdin(names, "-", "b.jsonl", "-")
	var ue *usage.Error
	if !errors.As(err, &ue) || err.Error() != "only one input can be - (stdin); got 2: [BEFORE --latency-before]" {
		t.Errorf("two stdins: %T %v", err, err)
	}
}
