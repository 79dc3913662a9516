package rootfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
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
