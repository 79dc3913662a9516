package process

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadFile(t *testing.T) {
	// A real /proc file: this process's stat, one line generated whole.
	fd, err := unix.Open("/proc/self/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skip("no /proc:", err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := ReadFile(fd, buf, true)
	if err != nil || n == 0 || buf[n-1] != '\n' {
		t.Fatalf("stat: %d bytes, %v: %q", n, err, buf[:n])
	}
	// A regular file of two lines with a buffer smaller than it: full
	// buffer, and with the newline stop off, every byte up to EOF.
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("a 1\nb 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(f)
	if n, err := ReadFile(f, make([]byte, 5), false); n != 5 || err != nil {
		t.Errorf("small buffer: %d, %v; want 5", n, err)
	}
	b := make([]byte, 64)
	if n, err := ReadFile(f, b, false); n != 8 || err != nil || string(b[:n]) != "a 1\nb 2\n" {
		t.Errorf("whole file: %d, %v, %q", n, err, b[:n])
	}
	// Read again from offset 0: the same bytes (pread, no file position).
	if n, _ := ReadFile(f, b, false); n != 8 {
		t.Errorf("second read: %d bytes, want 8", n)
	}
}
