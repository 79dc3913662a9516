package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCreateNewFileIs0600(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "out.jsonl")
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %v, want 0600", got)
	}
	p2 := filepath.Join(t.TempDir(), "shared.xml")
	f, err = Create(p2, Options{Mode: 0o640})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(p2); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
}

func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "passwd")
	const content = "root:x:0:0:root:/root:/bin/bash\n"
	if err := os.WriteFile(secret, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "junit.xml")
	if err := os.Symlink(secret, sym); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "report.txt")
	if err := os.Link(secret, hard); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(existing, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		opts       Options
		want       string
	}{
		{"symlink", sym, Options{Overwrite: true}, "is a symbolic link"},
		{"symlink, append", sym, Options{Append: true}, "is a symbolic link"},
		{"hard link", hard, Options{Overwrite: true}, "has 2 hard links"},
		{"hard link, append", hard, Options{Append: true}, "has 2 hard links"},
		{"fifo without a reader", fifo, Options{Overwrite: true}, "FIFO"},
		{"folder", dir, Options{Overwrite: true}, "is a directory"},
		{"existing file", existing, Options{}, "file exists (use --force to overwrite)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Create(tt.path, tt.opts)
			if err == nil {
				f.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q, want it to name %s and say %q", err, tt.path, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != content {
		t.Errorf("the link target changed: %q", b)
	}
	if _, err := Create(existing, Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("existing: %v, want ErrExists", err)
	}
}

func TestCreateOverwriteAndAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.txt")
	if err := os.WriteFile(p, []byte("long old content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new\n")
	f.Close()
	f, err = Create(p, Options{Append: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "new\nmore\n" {
		t.Errorf("content %q", b)
	}
}

// TestCreateModeExact: the mode asked for is the file's mode whatever the
// umask, on a new file and on one overwritten; a file appended to keeps
// its own.
func TestCreateModeExact(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	stat := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	p := filepath.Join(dir, "report.txt")
	f, err := Create(p, Options{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := stat(p); got != 0o644 {
		t.Errorf("new file under umask 077: mode %v, want 0644", got)
	}
	f, err = Create(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := stat(p); got != 0o600 {
		t.Errorf("overwritten with the default: mode %v, want 0600", got)
	}
	sum := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(sum, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sum, 0o664); err != nil {
		t.Fatal(err)
	}
	f, err = Create(sum, Options{Append: true, Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := stat(sum); got != 0o664 {
		t.Errorf("appended to: mode %v, want its own 0664", got)
	}
}
