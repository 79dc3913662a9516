package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// The guest's /etc/systemd/system: the host's files, links and
// directories, but not other e2e tests' memdiag-e2e-* units (nor links
// to them), and the seed's own files kept over the host's.
func TestCopyUnits(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(src, "a.service"), []byte("[Service]\n"), 0o644))
	must(os.WriteFile(filepath.Join(src, "own.timer"), []byte("host's\n"), 0o644))
	must(os.WriteFile(filepath.Join(src, "memdiag-e2e-v-heavy.timer"), []byte("lane's\n"), 0o644))
	must(os.MkdirAll(filepath.Join(src, "timers.target.wants"), 0o755))
	must(os.Symlink("/lib/systemd/system/b.timer", filepath.Join(src, "timers.target.wants/b.timer")))
	must(os.Symlink("/etc/systemd/system/memdiag-e2e-v-heavy.timer", filepath.Join(src, "timers.target.wants/memdiag-e2e-v-heavy.timer")))
	must(os.MkdirAll(filepath.Join(src, "memdiag-e2e-w-x.service.d"), 0o755))
	must(os.WriteFile(filepath.Join(src, "memdiag-e2e-w-x.service.d/a.conf"), []byte("x\n"), 0o644))
	must(os.WriteFile(filepath.Join(dst, "own.timer"), []byte("seed's\n"), 0o644))

	copyUnits(t, src, dst)

	if b, err := os.ReadFile(filepath.Join(dst, "a.service")); err != nil || string(b) != "[Service]\n" {
		t.Errorf("a.service: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "own.timer")); err != nil || string(b) != "seed's\n" {
		t.Errorf("own.timer: %q, %v; want the seed's kept", b, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "timers.target.wants/b.timer")); err != nil || l != "/lib/systemd/system/b.timer" {
		t.Errorf("b.timer link: %q, %v", l, err)
	}
	for _, gone := range []string{"memdiag-e2e-v-heavy.timer", "timers.target.wants/memdiag-e2e-v-heavy.timer", "memdiag-e2e-w-x.service.d"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); err == nil {
			t.Errorf("%s copied: another test's unit", gone)
		}
	}
}
