package testenv

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

//go:embed umlshim/sysdinit.c
var sysdInit []byte

// SystemdBinary is the init a SystemdGuest runs as PID 1 (Debian's
// systemd package, installed by .ci/run).
const SystemdBinary = "/lib/systemd/systemd"

// SystemdGuest is a user-mode Linux guest whose PID 1 is the host's
// systemd. Its root is an overlay: Seed (a host directory of the test's
// files: Seed/etc/systemd/system/x.service is /etc/systemd/system/x.service
// in the guest) over the host's / (read-only, hostfs), with a tmpfs upper
// layer, so /etc, /var and every other directory are writable in the
// guest and nothing it writes reaches the host; /run and /tmp are fresh
// tmpfs (put the test's binaries in Seed with Install) and Out is /run/out, the one host directory the guest writes. The guest
// sees the host's installed packages, units and their enable links as
// they are. umlshim/sysdinit.c builds that root and execs systemd.
type SystemdGuest struct {
	*UML
	Seed string // host directory laid over the guest's /
	init string // the compiled sysdinit
	ko   string // overlay.ko of the UML kernel
}

// NewSystemdGuest checks that user-mode-linux, systemd and the UML
// kernel's overlayfs module are installed (else the test is unmet), builds
// sysdinit with gcc and makes an empty Seed. The guest gets 512 MiB of RAM:
// systemd, journald, D-Bus, pmcd and pmlogger use about 150 MiB.
func NewSystemdGuest(t testing.TB) *SystemdGuest {
	t.Helper()
	u := NewUML(t)
	u.MemSize = "512M"
	if _, err := os.Stat(SystemdBinary); err != nil {
		Unmet(t, SystemdBinary+" missing: apt-get install systemd")
	}
	kos, _ := filepath.Glob("/usr/lib/uml/modules/*/kernel/fs/overlayfs/overlay.ko")
	if len(kos) != 1 {
		Unmet(t, fmt.Sprintf("want one overlay.ko of the user-mode-linux kernel under /usr/lib/uml/modules, found %q", kos))
	}
	dir := filepath.Dir(u.Out)
	src := filepath.Join(dir, "sysdinit.c")
	if err := os.WriteFile(src, sysdInit, 0o644); err != nil {
		t.Fatal(err)
	}
	init := filepath.Join(dir, "sysdinit")
	if b, err := exec.Command("gcc", "-O2", "-o", init, src).CombinedOutput(); err != nil {
		Unmet(t, fmt.Sprintf("cannot build sysdinit (apt-get install gcc libc6-dev): %v\n%s", err, b))
	}
	seed := filepath.Join(dir, "seed")
	if err := os.Mkdir(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	return &SystemdGuest{UML: u, Seed: seed, init: init, ko: kos[0]}
}

// WriteFile writes body to the guest's path (absolute, as the guest
// sees it) through Seed, making the directories it needs. mode 0o755
// makes a script.
func (g *SystemdGuest) WriteFile(t testing.TB, path, body string, mode os.FileMode) {
	t.Helper()
	writeSeed(t, g.Seed, path, body, mode)
}

// writeSeed writes body to seed/path, path being absolute as the guest
// or container sees it, making the directories it needs.
func writeSeed(t testing.TB, seed, path, body string, mode os.FileMode) {
	t.Helper()
	if !filepath.IsAbs(path) {
		t.Fatalf("guest path %q is not absolute", path)
	}
	p := filepath.Join(seed, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// Install puts the host file src (a binary the test built) at the
// guest's path through Seed: a hard link, or a copy across file systems.
// The guest's /tmp is its own, so the test's temp dirs are not there.
func (g *SystemdGuest) Install(t testing.TB, src, path string) {
	t.Helper()
	p := filepath.Join(g.Seed, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(src, p) == nil {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Boot starts systemd as the guest's PID 1 with unit as its boot target
// (systemd.unit=) and waits until the guest halts or timeout passes. The
// guest ends itself: a unit of the test writes its results to /run/out
// and powers off (`sync; echo o >/proc/sysrq-trigger` ends it at once).
// systemd's console output is in <Out>/console.log.
func (g *SystemdGuest) Boot(t testing.TB, unit string, timeout time.Duration) error {
	t.Helper()
	if strings.ContainsAny(unit+g.Seed+g.Out, " \t\n") {
		t.Fatalf("unit and paths must not contain blanks: %q %q %q", unit, g.Seed, g.Out)
	}
	// Words with '=' and no '.' the kernel does not know are passed to
	// init's environment, which sysdinit reads; systemd reads its own
	// systemd.* options from /proc/cmdline.
	copyUnits(t, "/etc/systemd/system", filepath.Join(g.Seed, "etc/systemd/system"))
	return g.run(t, g.init, []string{
		"MEMDIAG_SEED=" + g.Seed, "MEMDIAG_OUT=" + g.Out, "MEMDIAG_OVERLAY_KO=" + g.ko,
		"systemd.unit=" + unit,
	}, timeout)
}

// copyUnits copies the host's unit directory src (files, symlinks as
// links, directories) into the seed's dst, the guest's whole
// /etc/systemd/system (sysdinit.c): what the host had at boot, as a
// booted host's systemd would see it, but for what the seed already holds
// (the test's own units and drop-ins win) and names starting with
// "memdiag-e2e-" (other end-to-end tests' units, such as the verdict
// lanes', made and removed while the guest runs beside them).
func copyUnits(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while being read
			}
			return err
		}
		if strings.HasPrefix(d.Name(), "memdiag-e2e-") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if _, err := os.Lstat(to); err == nil && !d.IsDir() {
			return nil // the seed's own
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return ignoreGone(err)
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return ignoreGone(err)
			}
			info, err := d.Info()
			if err != nil {
				return ignoreGone(err)
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copying the host's units for the guest: %v", err)
	}
}

// ignoreGone is nil for a file removed between the listing and the read.
func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
