package rootfs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FuzzResolve checks path resolution inside a root against any path and
// any symbolic link target: the root of jail (links to /dev/zero, to a
// host file, climbing out with "..", a FIFO) plus a link "fz" whose
// target is fuzzed. Nothing may panic or block (a FIFO, /dev/zero), the
// host file outside the root is never read, Resolve's result is a path
// inside the root that is no link, and the checked walk (kernels without
// openat2) reads exactly what openat2 RESOLVE_IN_ROOT reads.
func FuzzResolve(f *testing.F) {
	for _, s := range [][2]string{
		{"etc/cron.d/escape", "x"}, {"etc/systemd/system/x.timer.d/host.conf", "x"},
		{"/etc/systemd/system/alias.timer", "x"}, {"etc/cron.d/fifo", "x"},
		{"etc/systemd/system/zero.timer", "x"}, {"fz", "../../../../shadow"},
		{"fz/x.timer", "/lib/systemd/system"}, {"fz/../x.timer", "lib/systemd/system"},
		{"var/spool/anacron/../../../../dev/zero", "x"}, {"fz", "fz"}, {"etc/../fz/..", "etc/cron.d"},
	} {
		f.Add(s[0], s[1])
	}
	root, outside := jail(f)
	secret, err := os.ReadFile(outside)
	if err != nil {
		f.Fatal(err)
	}
	fz := filepath.Join(root, "fz")
	f.Fuzz(func(t *testing.T, rel, target string) {
		if strings.ContainsRune(target, 0) || target == "" {
			return
		}
		os.Remove(fz)
		if err := os.Symlink(target, fz); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		read := func(walk bool) ([]byte, error) {
			noOpenat2.Store(walk)
			defer noOpenat2.Store(false)
			return ReadFile(ctx, root, rel, 1<<20)
		}
		viaOpenat2, err2 := read(false)
		viaWalk, errW := read(true)
		if ctx.Err() != nil {
			t.Fatalf("reading %q (fz -> %q) took over 5 s", rel, target)
		}
		if bytes.Contains(viaOpenat2, secret) || bytes.Contains(viaWalk, secret) {
			t.Fatalf("%q (fz -> %q) read the host file outside the root", rel, target)
		}
		if (err2 == nil) != (errW == nil) || !bytes.Equal(viaOpenat2, viaWalk) {
			t.Fatalf("%q (fz -> %q): openat2 read %q (%v), the walk %q (%v)", rel, target, viaOpenat2, err2, viaWalk, errW)
		}
		res, err := Resolve(root, rel)
		if err != nil {
			return
		}
		if res != "" && (res != filepath.Clean(res) || strings.HasPrefix(res, "/") || res == ".." || strings.HasPrefix(res, "../")) {
			t.Fatalf("Resolve(%q) = %q (fz -> %q), not a clean path inside the root", rel, res, target)
		}
		if fi, err := os.Lstat(filepath.Join(root, res)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t.Fatalf("Resolve(%q) = %q (fz -> %q) is a link", rel, res, target)
		}
		// What the kernel resolved (openat2 RESOLVE_IN_ROOT, O_PATH opens
		// even a FIFO or a folder) is what Resolve says.
		k, err := open(root, rel, unix.O_PATH)
		if err != nil {
			t.Fatalf("Resolve(%q) = %q (fz -> %q), openat2: %v", rel, res, target, err)
		}
		defer k.Close()
		got, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", k.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(root, res); got != want {
			t.Fatalf("Resolve(%q) = %q (fz -> %q), openat2 resolved %q", rel, want, target, got)
		}
	})
}

// TestResolveFuzzFindings: what FuzzResolve found. The checked walk
// cleaned the path before resolving links, so "link/.." was the folder
// holding the link, not the folder holding its target, and read another
// file than openat2 does.
func TestResolveFuzzFindings(t *testing.T) {
	root, _ := jail(t)
	if err := os.Symlink("lib/systemd/system", filepath.Join(root, "fz")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "system"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "system/x.timer"), []byte("wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := Resolve(root, "fz/../system/x.timer"); err != nil || res != "lib/systemd/system/x.timer" {
		t.Errorf("Resolve(fz/../system/x.timer) = %q, %v; want lib/systemd/system/x.timer", res, err)
	}
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	if b, err := ReadFile(context.Background(), root, "fz/../system/x.timer", 0); err != nil || string(b) != "[Timer]\nOnCalendar=daily\n" {
		t.Errorf("the walk read %q, %v", b, err)
	}
	// ".." of a file is an error, as for the kernel.
	if res, err := Resolve(root, "lib/systemd/system/x.timer/../x.timer"); err == nil {
		t.Errorf("Resolve(x.timer/../x.timer) = %q, want ENOTDIR", res)
	}
}
