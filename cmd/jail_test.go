package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTimersRootJail runs `memdiag timers --root ROOT --strict` on roots
// that each hold one hostile entry: a timer unit linked to /dev/zero, a
// FIFO as a crontab, a drop-in linked to a host file outside the root,
// and an anacron job id climbing out with "..". Each run ends with an
// error naming the file (exit 1 under --strict), never quotes the host
// file, and reads no more than a few MiB (the Go heap grows by less than
// 64 MiB: /dev/zero was read without bound before). Its time is logged;
// it is logged, not asserted (12-73 ms each with the machine at load 20).
func TestTimersRootJail(t *testing.T) {
	top := t.TempDir()
	host := filepath.Join(top, "shadow")
	const secret = "root:$6$hostsecret:19000:0:99999:7:::"
	if err := os.WriteFile(host, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := func(t *testing.T, name string) string {
		root := filepath.Join(top, name)
		for _, d := range []string{"etc/cron.d", "etc/systemd/system/good.timer.d", "lib/systemd/system"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, "lib/systemd/system/good.timer"), []byte("[Timer]\nOnCalendar=daily\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, root string) error
		want  string
	}{
		{"dev-zero", func(t *testing.T, root string) error {
			return os.Symlink("/dev/zero", filepath.Join(root, "etc/systemd/system/zero.timer"))
		}, "etc/systemd/system/zero.timer: no such file or directory"},
		{"fifo", func(t *testing.T, root string) error {
			return syscall.Mkfifo(filepath.Join(root, "etc/cron.d/fifo"), 0o600)
		}, "etc/cron.d/fifo: not a regular file (a FIFO)"},
		{"outside-link", func(t *testing.T, root string) error {
			return os.Symlink(host, filepath.Join(root, "etc/systemd/system/good.timer.d/host.conf"))
		}, "etc/systemd/system/good.timer.d/host.conf: no such file or directory"},
		{"anacron-dotdot", func(t *testing.T, root string) error {
			return os.WriteFile(filepath.Join(root, "etc/anacrontab"), []byte("1 5 ../../../../shadow run-parts /etc/cron.daily\n"), 0o644)
		}, `job id "../../../../shadow" may not contain '/'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := base(t, tc.name)
			if err := tc.plant(t, root); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			code, stdout, stderr := runCLI(t, root, "timers", "--strict")
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			t.Logf("%s: exit %d in %v, heap allocated %d KiB", tc.name, code, took, (after.TotalAlloc-before.TotalAlloc)>>10)
			if code != exitError {
				t.Errorf("exit %d, want %d (a malformed file under --strict)\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", tc.want, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "hostsecret") {
				t.Errorf("the host file outside the root is quoted:\n%s\n%s", stdout, stderr)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MiB: a device or file was read without bound", grew>>20)
			}
		})
	}
}
