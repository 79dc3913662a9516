package rootfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// procRoot builds a proc folder with a good meminfo and, beside it, a
// FIFO, a link to /dev/zero, a link to a host file and a folder.
func procRoot(t *testing.T) (proc, host string) {
	t.Helper()
	top := t.TempDir()
	proc = filepath.Join(top, "root/proc")
	host = filepath.Join(top, "host-meminfo")
	if err := os.MkdirAll(filepath.Join(proc, "pressure"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{filepath.Join(proc, "meminfo"): "MemTotal: 1 kB\n", host: "MemTotal: 2 kB\n"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(proc, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"zero": "/dev/zero", "hostlink": host} {
		if err := os.Symlink(target, filepath.Join(proc, name)); err != nil {
			t.Fatal(err)
		}
	}
	return proc, host
}

// TestProcReads checks ReadPath, ReadIn and Check on each entry: the
// regular file is read, the FIFO and the folder are refused as not
// regular, and both links (to /dev/zero and to a host file) are refused
// (Check says the link leads out; ReadPath finds nothing in the jail).
func TestProcReads(t *testing.T) {
	proc, _ := procRoot(t)
	ctx := context.Background()
	if b, err := ReadPath(ctx, filepath.Join(proc, "meminfo"), ProcLimit); err != nil || string(b) != "MemTotal: 1 kB\n" {
		t.Errorf("ReadPath(meminfo) = %q, %v", b, err)
	}
	if b, err := ReadIn(ctx, proc, filepath.Join(proc, "meminfo"), ProcLimit); err != nil || string(b) != "MemTotal: 1 kB\n" {
		t.Errorf("ReadIn(meminfo) = %q, %v", b, err)
	}
	if _, err := ReadIn(ctx, proc, filepath.Join(proc, "../../host-meminfo"), ProcLimit); !errors.Is(err, ErrOutside) {
		t.Errorf("ReadIn(outside) err = %v, want ErrOutside", err)
	}
	if err := Check(proc, "meminfo"); err != nil {
		t.Errorf("Check(meminfo) = %v", err)
	}
	for _, tc := range []struct {
		name           string
		readErr, check error
	}{
		{"fifo", ErrNotRegular, ErrNotRegular},
		{"pressure", ErrNotRegular, syscall.EISDIR},
		{"zero", fs.ErrNotExist, ErrOutside},
		{"hostlink", fs.ErrNotExist, ErrOutside},
	} {
		if _, err := ReadPath(ctx, filepath.Join(proc, tc.name), ProcLimit); !errors.Is(err, tc.readErr) {
			t.Errorf("ReadPath(%s) err = %v, want %v", tc.name, err, tc.readErr)
		}
		if err := Check(proc, tc.name); !errors.Is(err, tc.check) {
			t.Errorf("Check(%s) = %v, want %v", tc.name, err, tc.check)
		}
	}
	if _, err := ReadPath(ctx, filepath.Join(proc, "meminfo"), 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadPath over the limit: err = %v, want ErrTooLarge", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ReadPath(cctx, filepath.Join(proc, "meminfo"), 0); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadPath cancelled: err = %v, want context.Canceled", err)
	}
}

// TestStatLstatGlob: links and ".." are taken inside the root.
func TestStatLstatGlob(t *testing.T) {
	proc, _ := procRoot(t)
	root := filepath.Dir(proc)
	if _, err := Stat(root, "proc/hostlink"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(proc/hostlink) err = %v, want not exist", err)
	}
	if fi, err := Stat(root, "/../../proc/meminfo"); err != nil || fi.Size() != 15 {
		t.Errorf("Stat(/../../proc/meminfo) = %v, %v; want the root's 15-byte file", fi, err)
	}
	if fi, err := Lstat(root, "proc/../proc/hostlink"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(proc/hostlink) = %v, %v; want the link", fi, err)
	}
	m, err := Glob(root, "/../proc/mem*")
	if err != nil || len(m) != 1 || m[0] != "proc/meminfo" {
		t.Errorf("Glob = %q, %v; want [proc/meminfo]", m, err)
	}
	if m, _ := Glob(root, "/../../host-*"); len(m) != 0 {
		t.Errorf("Glob outside = %q, want none", m)
	}
}

// TestOpenDevice: the one character device asked for is taken, any other
// (/dev/zero where /dev/kmsg is wanted) refused with ErrNotRegular, and a
// regular file taken as Open takes it.
func TestOpenDevice(t *testing.T) {
	if f, err := OpenDevice("/", "dev/null", 1, 3); err != nil {
		t.Errorf("OpenDevice(/dev/null, 1:3) = %v", err)
	} else {
		f.Close()
	}
	if f, err := OpenDevice("/", "dev/zero", 1, 11); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "/dev/zero") {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenDevice(/dev/zero, 1:11) = %v; want ErrNotRegular naming it", err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "kmsg"), []byte("6,1,2,-;x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenDevice(root, "kmsg", 1, 11); err != nil {
		t.Errorf("OpenDevice(regular file) = %v", err)
	} else {
		f.Close()
	}
}
