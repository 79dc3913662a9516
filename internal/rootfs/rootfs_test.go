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

// jail builds a root with hostile entries next to a secret outside it.
func jail(t testing.TB) (root, outside string) {
	t.Helper()
	top := t.TempDir()
	root = filepath.Join(top, "root")
	outside = filepath.Join(top, "shadow")
	if err := os.WriteFile(outside, []byte("root:$6$secret:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"etc/cron.d", "etc/systemd/system/x.timer.d", "lib/systemd/system", "var/spool/anacron"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/systemd/system/x.timer", "[Timer]\nOnCalendar=daily\n")
	write("etc/timezone", "Europe/Berlin\n")
	link("/lib/systemd/system/x.timer", "etc/systemd/system/alias.timer") // absolute, inside root
	link("/dev/zero", "etc/systemd/system/zero.timer")
	link(outside, "etc/systemd/system/x.timer.d/host.conf")       // absolute, to the host
	link("../../../../../../../../"+outside, "etc/cron.d/escape") // relative, climbing out
	link("../../../shadow", "etc/cron.d/up")                      // relative, one level out
	if err := syscall.Mkfifo(filepath.Join(root, "etc/cron.d/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func TestReadFileJail(t *testing.T) {
	for _, walk := range []bool{false, true} {
		name := "openat2"
		if walk {
			name = "checked walk"
		}
		t.Run(name, func(t *testing.T) {
			old := noOpenat2.Load()
			noOpenat2.Store(walk)
			defer noOpenat2.Store(old)
			root, _ := jail(t)
			ctx := context.Background()
			b, err := ReadFile(ctx, root, "etc/systemd/system/alias.timer", 0)
			if err != nil || string(b) != "[Timer]\nOnCalendar=daily\n" {
				t.Errorf("absolute link inside the root: %q, %v", b, err)
			}
			tests := []struct {
				rel  string
				want error
				say  string
			}{
				{"etc/systemd/system/zero.timer", fs.ErrNotExist, ""},          // /dev/zero of the root: absent
				{"etc/systemd/system/x.timer.d/host.conf", fs.ErrNotExist, ""}, // the host's file is not in the root
				{"etc/cron.d/escape", fs.ErrNotExist, ""},                      // ".." stops at the root
				{"etc/cron.d/up", fs.ErrNotExist, ""},                          // ditto
				{"var/spool/anacron/../../../../shadow", fs.ErrNotExist, ""},   // a ".." job id
				{"etc/cron.d/fifo", ErrNotRegular, "a FIFO"},                   // does not block
				{"etc/cron.d", ErrNotRegular, "a folder"},
			}
			for _, tt := range tests {
				b, err := ReadFile(ctx, root, tt.rel, 0)
				if !errors.Is(err, tt.want) {
					t.Errorf("%s: %q, %v; want %v", tt.rel, b, err, tt.want)
					continue
				}
				msg := err.Error()
				if !strings.Contains(msg, filepath.Join(root, tt.rel)) || !strings.Contains(msg, tt.say) {
					t.Errorf("%s: error %q should name the path and say %q", tt.rel, msg, tt.say)
				}
				if strings.Contains(msg, "secret") {
					t.Errorf("%s: error quotes the file outside the root: %q", tt.rel, msg)
				}
			}
		})
	}
}

// TestReadFileLiveDevices: under the live root "/", /dev/zero and a FIFO
// are refused at once (no read without bound, no blocking).
func TestReadFileLiveDevices(t *testing.T) {
	if _, err := ReadFile(context.Background(), "/", "dev/zero", 0); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "character device") {
		t.Errorf("/dev/zero: %v", err)
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(context.Background(), dir, "fifo", 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo: %v", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(context.Background(), dir, "big", 999); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "over 999 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	if b, err := ReadFile(context.Background(), dir, "big", 1000); err != nil || len(b) != 1000 {
		t.Errorf("at the limit: %d, %v", len(b), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFile(ctx, dir, "big", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestReadDirInRoot(t *testing.T) {
	root, _ := jail(t)
	if err := os.Symlink("/etc/cron.d", filepath.Join(root, "etc/crondir")); err != nil {
		t.Fatal(err)
	}
	des, err := ReadDir(root, "etc/crondir")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "escape") || !strings.Contains(got, "fifo") {
		t.Errorf("etc/crondir lists %s, want the root's etc/cron.d", got)
	}
}
