package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestModeFlag: --mode sets the permission of every file watch, analyze,
// compare and gate write, exactly (a umask of 077 does not narrow it);
// without it they are 0600; a bad value is a usage error naming the flag.
func TestModeFlag(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	rec := writeRecording(t)
	perm := func(p string) fs.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, tt := range []struct {
		args  []string
		files []string
		want  fs.FileMode
	}{
		{[]string{"analyze", rec, "-o", p("a.txt"), "--mode", "0640"}, []string{"a.txt"}, 0o640},
		{[]string{"analyze", rec, "-o", p("a.html"), "-f", "html"}, []string{"a.html"}, 0o600},
		{[]string{"compare", rec, rec, "-o", p("c.txt"), "--mode", "644"}, []string{"c.txt"}, 0o644},
		{[]string{"gate", "--recording", rec, "-t", "oom_kills==0", "--output", p("g.txt"), "--junit", p("g.xml"), "--mode", "0660"}, []string{"g.txt", "g.xml"}, 0o660},
		{[]string{"gate", "--recording", rec, "-t", "oom_kills==0", "--junit", p("g2.xml")}, []string{"g2.xml"}, 0o600},
		{[]string{"watch", "--root", "../testdata/linux-6.18", "--no-timers", "-q", "--duration", "200ms", "--interval", "100ms", "--out", p("w.jsonl.gz"), "--mode", "0640"}, []string{"w.jsonl.gz"}, 0o640},
	} {
		t.Setenv("GITHUB_STEP_SUMMARY", "")
		if code, _, stderr := run(t, "/", tt.args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", tt.args, code, stderr)
		}
		for _, f := range tt.files {
			if got := perm(p(f)); got != tt.want {
				t.Errorf("%v: %s has mode %o, want %o", tt.args, f, got, tt.want)
			}
		}
	}
	for _, c := range []string{"watch", "analyze", "compare", "gate"} {
		code, _, stderr := run(t, "/", c, "--mode", "0400")
		if code != exitUsage || !strings.Contains(stderr, `memdiag: --mode "0400": want an octal file mode`) {
			t.Errorf("%s --mode 0400: exit %d, stderr %q; want a usage error naming --mode", c, code, stderr)
		}
	}
}
