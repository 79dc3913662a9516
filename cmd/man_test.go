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
