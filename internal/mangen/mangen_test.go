package mangen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// TestWriteTree: one page per available command, named as GenManTree
// names them, with the mode asked for; a hidden command gets none and a
// symbolic link at a page's path is refused.
func TestWriteTree(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "a tool"}
	root.AddCommand(&cobra.Command{Use: "sub", Short: "a sub", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}})
	dir := t.TempDir()
	n, err := WriteTree(root, &doc.GenManHeader{Section: "1"}, dir, 0o644)
	if err != nil || n != 2 {
		t.Fatalf("WriteTree = %d, %v; want 2 pages", n, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "tool-sub.1"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("tool-sub.1: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tool-secret.1")); err == nil {
		t.Error("a page for the hidden command")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "tool-sub.1"))
	if !strings.Contains(string(b), "a sub") {
		t.Errorf("tool-sub.1 lacks its short help:\n%s", b)
	}
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(link, "elsewhere"), filepath.Join(link, "tool.1")); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteTree(root, &doc.GenManHeader{Section: "1"}, link, 0o644); err == nil {
		t.Error("wrote through a symbolic link")
	}
}

// TestWrite: Write makes section-1 pages of the memdiag manual with the
// source given and no generation date, whatever the tree had set.
func TestWrite(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "a tool", Run: func(*cobra.Command, []string) {}}
	dir := t.TempDir()
	n, err := Write(root, "tool v1.2.3", dir, Mode)
	if err != nil || n != 1 {
		t.Fatalf("Write = %d, %v; want 1 page", n, err)
	}
	if !root.DisableAutoGenTag {
		t.Error("DisableAutoGenTag not set: the pages would carry a date")
	}
	b, err := os.ReadFile(filepath.Join(dir, "tool.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.TH "MEMDIAG" "1"`, `"tool v1.2.3" "memdiag manual"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("tool.1 lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "Auto generated") {
		t.Errorf("tool.1 has a generation stamp:\n%s", b)
	}
	fi, _ := os.Stat(filepath.Join(dir, "tool.1"))
	if fi.Mode().Perm() != Mode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), Mode)
	}
}
