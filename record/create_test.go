package record

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCreateModeAndLinks: a recording is created 0600 (it holds every
// process's command line); --force never truncates through a hard link
// (it used to) nor writes through a symlink.
func TestCreateModeAndLinks(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "run.jsonl.gz")
	w, err := Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&Header{}); err != nil {
		t.Fatal(err)
	}
	w.Close("test")
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	other := filepath.Join(dir, "important")
	if err := os.WriteFile(other, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.jsonl")
	if err := os.Link(other, hard); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(hard, true); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("--force on a hard link: %v", err)
	}
	sym := filepath.Join(dir, "sym.jsonl")
	if err := os.Symlink(other, sym); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(sym, true); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("--force on a symlink: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "keep me" {
		t.Errorf("target changed: %q", b)
	}
}

// TestDefaultName: the default recording is named after its start, in
// that time's zone, and gzip-compressed.
func TestDefaultName(t *testing.T) {
	at := time.Date(2026, 12, 6, 14, 5, 9, 0, time.FixedZone("CET", 3600))
	if got, want := DefaultName(at), "memdiag-20261206-140509.jsonl.gz"; got != want {
		t.Errorf("DefaultName = %q, want %q", got, want)
	}
}
