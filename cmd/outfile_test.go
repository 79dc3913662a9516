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
	"github.com/memdiag/memdiag/session"
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
			IO: ios, Options: session.Options{Root: "/", Interval: time.Second}, Location: time.UTC, Format: "table",
			Getenv: func(string) string { return "" },
			Exprs:  []string{"oom_kills==0"}, Recording: rec, JUnit: junit, Output: output,
			Force: true, // links are refused even with it
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

// TestOutputFileRules (issue 31 item 5): one rule for an existing output
// file — analyze and compare refuse it without --force, as watch --out
// does (a report was lost to a silent overwrite), and leave it as it was
// — and one exit code for a directory named as a file: 1, for --output
// as for --latency and the recording argument, each path named once.
func TestOutputFileRules(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.html")
	const kept = "<p>yesterday's report</p>\n"
	if err := os.WriteFile(report, []byte(kept), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "store")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "etc")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "hosts"), []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"analyze", unionRec, "-o", report}, 1, "memdiag: --output " + report + ": file exists (use --force to overwrite)\n"},
		{[]string{"compare", unionRec, unionRec, "-o", report}, 1, "memdiag: --output " + report + ": file exists (use --force to overwrite)\n"},
		{[]string{"gate", "--recording", unionRec, "-t", "oom_kills==0", "-o", report}, 1, "memdiag: --output " + report + ": file exists (use --force to overwrite)\n"},
		{[]string{"gate", "--recording", unionRec, "-t", "oom_kills==0", "--junit", report}, 1, "memdiag: --junit " + report + ": file exists (use --force to overwrite)\n"},
		{[]string{"analyze", unionRec, "-o", dir}, 1, "memdiag: --output " + dir + ": is a directory, not a file\n"},
		{[]string{"analyze", unionRec, "--latency", dir}, 1, "memdiag: --latency " + dir + ": is a directory, not a file\n"},
		{[]string{"analyze", empty}, 1, "memdiag: " + empty + ": an empty directory, not a recording: no memdiag segments (memdiag-*.jsonl.gz) in it yet\n"},
		{[]string{"analyze", unionRec, other}, 1, "memdiag: " + other + ": a directory, not a recording: no memdiag segments (memdiag-*.jsonl.gz) in it\n"},
	} {
		code, _, stderr := runWith(t, time.Now, "/", tc.args...)
		if code != tc.code || stderr != tc.err {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, stderr, tc.code, tc.err)
		}
	}
	if b, _ := os.ReadFile(report); string(b) != kept {
		t.Fatalf("the existing report was overwritten: %.60q", b)
	}
	code, _, stderr := runWith(t, time.Now, "/", "analyze", unionRec, "-o", report, "--force")
	if b, _ := os.ReadFile(report); code != 0 || !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.Contains(stderr, "memdiag: wrote "+report) {
		t.Errorf("--force: exit %d, stderr %q, file %.60q", code, stderr, b)
	}
}
