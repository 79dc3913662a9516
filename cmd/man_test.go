package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestManPages: memdiag man writes one page per command, from the help.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	code, out, errOut := runWith(t, time.Now, "/", "man", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, page := range []string{"memdiag.1", "memdiag-analyze.1", "memdiag-watch.1", "memdiag-gate.1", "memdiag-timers.1", "memdiag-mem.1", "memdiag-compare.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ".SH NAME") || !strings.Contains(string(b), ".SH SYNOPSIS") {
			t.Errorf("%s has no NAME or SYNOPSIS section", page)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "memdiag-gate.1")); !strings.Contains(string(b), "threshold") {
		t.Error("memdiag-gate.1 does not carry gate's help text")
	}
	if !strings.HasPrefix(out, "wrote ") {
		t.Errorf("stdout %q", out)
	}
}

// TestFormatCompletion: --format completes to the command's formats.
func TestFormatCompletion(t *testing.T) {
	for cmd, want := range map[string]string{
		"analyze": "table\nmarkdown\njson\ncsv\n",
		"gate":    "table\njson\nmarkdown\ngithub\n",
	} {
		_, out, _ := runWith(t, time.Now, "/", "__complete", cmd, "--format", "")
		if !strings.HasPrefix(out, want) {
			t.Errorf("%s --format <TAB>: %q, want %q first", cmd, out, want)
		}
	}
}

// TestManRefusesLinks: a page path that is a symbolic link or has another
// hard link is refused (issue 29.4): memdiag man runs as root into shared
// folders, and a link planted there must not redirect or clobber the
// write. Pages are 0644 exactly (every user reads man pages), not the
// umask's choice.
func TestManRefusesLinks(t *testing.T) {
	for _, link := range []string{"symlink", "hardlink"} {
		t.Run(link, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "man1")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(t.TempDir(), "passwd")
			const orig = "root:x:0:0:root:/root:/bin/bash\n"
			if err := os.WriteFile(victim, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, "memdiag-analyze.1")
			mk := os.Symlink
			if link == "hardlink" {
				mk = os.Link
			}
			if err := mk(victim, page); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runWith(t, time.Now, "/", "man", "--dir", dir)
			if code == 0 {
				t.Errorf("exit 0 with a %s at %s", link, page)
			}
			if !strings.Contains(errOut, page) {
				t.Errorf("stderr does not name %s:\n%s", page, errOut)
			}
			b, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != orig {
				t.Errorf("the %s's target was written:\n%.200s", link, b)
			}
			if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the %s's target: %v, %v", link, fi.Mode(), err)
			}
		})
	}
	t.Run("mode", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "man1")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old := filepath.Join(dir, "memdiag.1")
		if err := os.WriteFile(old, []byte("old page"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(old, 0o666); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runWith(t, time.Now, "/", "man", "--dir", dir); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
		if len(pages) < 10 {
			t.Fatalf("%d pages", len(pages))
		}
		for _, p := range pages {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: %v %v, want 0644", p, fi.Mode(), err)
			}
		}
		if b, _ := os.ReadFile(old); !strings.Contains(string(b), ".SH NAME") {
			t.Errorf("memdiag.1 was not rewritten: %q", b)
		}
	})
}
