// Package packaging tests the .deb's maintainer scripts (packaging/deb),
// which packaging/dist.sh puts in the package.
package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
)

// stubs makes a directory of stand-ins for systemctl, deb-systemd-helper
// and deb-systemd-invoke that append their arguments to log (was-enabled
// answers "yes": a new installation) and returns it.
func stubs(t *testing.T) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "calls.log")
	for _, name := range []string{"systemctl", "deb-systemd-helper", "deb-systemd-invoke"} {
		script := "#!/bin/sh\necho \"" + name + " $*\" >>" + log + "\nexit 0\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, log
}

// run runs the maintainer script with args, in a shell whose PATH finds
// the stubs first (wrap, when set, runs the whole command inside it),
// and returns the calls it made, one a line.
func run(t *testing.T, wrap []string, script string, env []string, args ...string) string {
	t.Helper()
	dir, log := stubs(t)
	abs, err := filepath.Abs(filepath.Join("deb", script))
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append(append([]string{}, wrap...), "/bin/sh", abs), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + dir + ":/usr/sbin:/usr/bin:/sbin:/bin"}, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

const enable = "deb-systemd-helper unmask memdiag.service\ndeb-systemd-helper --quiet was-enabled memdiag.service\ndeb-systemd-helper enable memdiag.service"

// TestMaintainerScriptsWithoutSystemd: on a host where systemd is not
// running (this one: PID 1 is not systemd, no /run/systemd/system), the
// package enables the unit for the day systemd runs, and never starts or
// stops it.
func TestMaintainerScriptsWithoutSystemd(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd runs here: TestMaintainerScriptsWithSystemd covers this host")
	}
	if got := run(t, nil, "postinst", nil, "configure", ""); got != enable {
		t.Errorf("postinst configure (install):\n%s\nwant\n%s", got, enable)
	}
	if got := run(t, nil, "postinst", nil, "configure", "0.0.0~git1"); got != enable {
		t.Errorf("postinst configure (upgrade):\n%s\nwant\n%s", got, enable)
	}
	if got := run(t, nil, "prerm", nil, "remove"); got != "" {
		t.Errorf("prerm remove: %s, want nothing", got)
	}
	if got := run(t, nil, "postrm", nil, "remove"); got != "" {
		t.Errorf("postrm remove: %s, want nothing", got)
	}
	want := ""
	if _, err := os.Stat("/usr/bin/deb-systemd-helper"); err == nil {
		want = "deb-systemd-helper purge memdiag.service"
	}
	if got := run(t, nil, "postrm", nil, "purge"); got != want {
		t.Errorf("postrm purge: %q, want %q", got, want)
	}
}

// TestMaintainerScriptsWithSystemd runs the scripts as on a host where
// systemd runs: in a mount namespace of their own whose /run is a fresh
// tmpfs holding /run/systemd/system (the host's /run is not touched).
// Install starts the unit, an upgrade restarts it, removal stops it, an
// upgrade's prerm leaves it running, and nothing starts under DPKG_ROOT.
func TestMaintainerScriptsWithSystemd(t *testing.T) {
	testenv.RequireRoot(t, "a mount namespace with a tmpfs on /run")
	if _, err := exec.LookPath("unshare"); err != nil {
		testenv.Unmet(t, "unshare (util-linux) is not installed")
	}
	wrap := []string{"unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
		`mount -t tmpfs memdiag-test /run && mkdir -p /run/systemd/system && exec "$@"`, "sh"}
	for _, c := range []struct {
		script string
		args   []string
		env    []string
		want   string
	}{
		{"postinst", []string{"configure", ""}, nil, enable + "\nsystemctl --system daemon-reload\ndeb-systemd-invoke start memdiag.service"},
		{"postinst", []string{"configure", "0.0.0~git1"}, nil, enable + "\nsystemctl --system daemon-reload\ndeb-systemd-invoke restart memdiag.service"},
		{"postinst", []string{"configure", ""}, []string{"DPKG_ROOT=/srv/chroot"}, enable},
		{"prerm", []string{"remove"}, nil, "deb-systemd-invoke stop memdiag.service"},
		{"prerm", []string{"upgrade", "0.0.0~git2"}, nil, ""},
		{"postrm", []string{"remove"}, nil, "systemctl --system daemon-reload"},
	} {
		if got := run(t, wrap, c.script, c.env, c.args...); got != c.want {
			t.Errorf("%s %v %v:\n%s\nwant\n%s", c.script, c.args, c.env, got, c.want)
		}
	}
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Log("note: this host runs systemd; its /run was not changed (private mount namespace)")
	}
}
