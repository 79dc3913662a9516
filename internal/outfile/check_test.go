package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: an output the user named is refused before any work when
// it is a directory, a symbolic link, or exists without force.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path  string
		force bool
		want  string // "" for no error
	}{
		{"", false, ""},
		{"-", false, ""},
		{filepath.Join(dir, "new.txt"), false, ""},
		{file, true, ""},
		{file, false, "--junit " + file + ": file exists (use --force to overwrite)"},
		{dir, true, "--junit " + dir + ": is a directory, not a file"},
		{link, true, "--junit " + link + ": is a symbolic link; refusing to write through it"},
	}
	for _, c := range cases {
		err := Check("--junit", c.path, c.force)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Check(%q, force %v) = %q, want %q", c.path, c.force, got, c.want)
		}
	}
	if err := Check("--junit", file, false); !errors.Is(err, ErrExists) {
		t.Errorf("Check of an existing file = %v, want ErrExists", err)
	}
}

// TestWrite: Write returns the size written and keeps an existing file
// unless overwriting was asked for.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.html")
	write := func(w io.Writer) error { _, err := io.WriteString(w, "<html>"); return err }
	size, err := Write("--output", path, Options{}, write)
	if err != nil || size != 6 {
		t.Fatalf("Write = %d, %v; want 6 bytes", size, err)
	}
	if _, err := Write("--output", path, Options{}, write); err == nil || !strings.HasPrefix(err.Error(), "--output "+path+": file exists") {
		t.Errorf("second Write without Overwrite = %v; want the file refused", err)
	}
	failed := errors.New("render failed")
	if _, err := Write("--output", path, Options{Overwrite: true}, func(io.Writer) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("Write with a failing render = %v, want its error", err)
	}
}
