package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/iostreams"
)

// TestListenAllInterfacesWarns (issue 29.9): --listen with no host (or
// 0.0.0.0) serves every interface and says so once, with the address for
// this host only; 127.0.0.1 says nothing.
func TestListenAllInterfacesWarns(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn bool
	}{{":0", true}, {"0.0.0.0:0", true}, {"127.0.0.1:0", false}} {
		t.Run(tc.addr, func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			f := &factory{IO: ios, Now: time.Now, Root: filepath.Join("..", "testdata", "linux-6.18")}
			code := execute(context.Background(), f, []string{"watch", "--listen", tc.addr, "--duration", "300ms", "--interval", "100ms",
				"--no-timers", "-q", "--force", "--out", filepath.Join(t.TempDir(), "w.jsonl")})
			got := errOut.String()
			if !strings.Contains(got, "memdiag: metrics at ") {
				t.Fatalf("exit %d; no listener started:\n%s", code, got)
			}
			warned := strings.Contains(got, "serves on every network interface") && strings.Contains(got, "no TLS, no authentication") &&
				strings.Contains(got, "127.0.0.1:9840")
			if warned != tc.warn || strings.Count(got, "every network interface") > 1 {
				t.Errorf("--listen %s: warned %v, want %v:\n%s", tc.addr, warned, tc.warn, got)
			}
		})
	}
}

// TestOutputRefusedSameExit (issue 29.9): -o at a symbolic link is refused
// by analyze and gate alike: exit 1, the reason, and no usage text (the
// flag was well formed; the file was refused). Before, analyze exited 2
// with usage text and gate 1.
func TestOutputRefusedSameExit(t *testing.T) {
	rec := filepath.Join("..", "record", "testdata", "v1", "watch-6.18-cgroup.jsonl")
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"analyze", "-o", link, rec},
		{"gate", "-t", "memory.some.avg10<99%", "--recording", rec, "-o", link},
		{"compare", "-o", link, rec, rec},
	} {
		ios, _, _, errOut := iostreams.Test()
		code := execute(context.Background(), &factory{IO: ios, Now: time.Now, Root: "/"}, args)
		got := errOut.String()
		if code != exitError || !strings.Contains(got, "is a symbolic link; refusing to write through it") || strings.Contains(got, "--help") {
			t.Errorf("%s -o symlink: exit %d, want %d with the reason and no usage text:\n%s", args[0], code, exitError, got)
		}
		if _, err := os.Lstat(filepath.Join(dir, "target")); !os.IsNotExist(err) {
			t.Errorf("%s wrote through the link", args[0])
		}
	}
}

// TestModeWarns (issue 29.9): --mode with execute bits or write for every
// user says so once; 0640 says nothing. The file still gets the mode
// asked for.
func TestModeWarns(t *testing.T) {
	rec := filepath.Join("..", "record", "testdata", "v1", "watch-6.18-cgroup.jsonl")
	for _, tc := range []struct {
		mode string
		want string
	}{
		{"0777", "makes the files written executable and writable by every user"},
		{"0606", "makes the files written writable by every user"},
		{"0700", "makes the files written executable;"},
		{"0640", ""},
	} {
		ios, _, _, errOut := iostreams.Test()
		out := filepath.Join(t.TempDir(), "r.txt")
		code := execute(context.Background(), &factory{IO: ios, Now: time.Now, Root: "/"}, []string{"analyze", "--mode", tc.mode, "-o", out, rec})
		got := errOut.String()
		if code != 0 {
			t.Fatalf("--mode %s: exit %d:\n%s", tc.mode, code, got)
		}
		if tc.want == "" && strings.Contains(got, "warning") || tc.want != "" && strings.Count(got, tc.want) != 1 {
			t.Errorf("--mode %s: stderr %q; want the warning %q once", tc.mode, got, tc.want)
		}
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := flagvalue.ParseMode(tc.mode); fi.Mode().Perm() != want {
			t.Errorf("--mode %s: file mode %v", tc.mode, fi.Mode().Perm())
		}
	}
}
