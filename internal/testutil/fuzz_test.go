package testutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadSeeds(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.txt": "A", "b.txt": "B", "c.csv": "C"} {
		WriteInput(t, filepath.Join(dir, name), []byte(body))
	}
	got, err := readSeeds([]string{filepath.Join(dir, "c.csv"), filepath.Join(dir, "*.txt"), filepath.Join(dir, "*.none")})
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, b := range got {
		s = append(s, string(b))
	}
	// A plain path, then the glob's matches in order; an empty glob adds nothing.
	if want := []string{"C", "A", "B"}; !slices.Equal(s, want) {
		t.Errorf("readSeeds = %q, want %q", s, want)
	}
	if _, err := readSeeds([]string{filepath.Join(dir, "gone.txt")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing plain path: err = %v, want ErrNotExist", err)
	}
}

func TestMakeDirs(t *testing.T) {
	root := t.TempDir()
	if err := makeDirs(root, []string{"proc/1", "sys"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proc/1", "sys"} {
		if st, err := os.Stat(filepath.Join(root, d)); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v", d, st, err)
		}
	}
}
