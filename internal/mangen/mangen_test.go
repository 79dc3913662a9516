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
