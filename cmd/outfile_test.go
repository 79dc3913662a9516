package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// TestGateOutputsRefuseLinks: gate --junit and --output used to follow a
// planted symlink and truncate its target (a copy of /etc/passwd became
// JUnit XML). Each is refused now, naming the file, and the target is
// untouched; files gate creates are 0600.
func TestGateOutputsRefuseLinks(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	rec := writeRecording(t)
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	const content = "root:x:0:0:root:/root:/bin/bash\n"
	if err := os.WriteFile(passwd, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.xml")
	if err := os.Symlink(passwd, sym); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.txt")
	if err := os.Link(passwd, hard); err != nil {
		t.Fatal(err)
	}
	run := func(junit, output string) error {
		ios, _, _, _ := iostreams.Test()
		return runGate(context.Background(), &gateOptions{
			IO: ios, Root: "/", Location: time.UTC, Format: "table", Interval: time.Second,
			Getenv:     func(string) string { return "" },
			Thresholds: []string{"oom_kills==0"}, Recording: rec, JUnit: junit, Output: output,
		})
	}
	for _, tt := range []struct{ junit, output, want string }{
		{sym, "", "is a symbolic link"},
		{"", sym, "is a symbolic link"},
		{hard, "", "has 2 hard links"},
		{"", hard, "has 2 hard links"},
	} {
		err := run(tt.junit, tt.output)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("junit %q output %q: %v, want %q", tt.junit, tt.output, err, tt.want)
		}
	}
	if b, _ := os.ReadFile(passwd); string(b) != content {
		t.Fatalf("the link target was written: %q", b)
	}
	junit, output := filepath.Join(dir, "gate.xml"), filepath.Join(dir, "gate.txt")
	if err := run(junit, output); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{junit, output} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
			t.Errorf("%s: mode %v size %d, want 0600 and content", p, fi.Mode().Perm(), fi.Size())
		}
	}
}
