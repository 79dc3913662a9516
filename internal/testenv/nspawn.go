package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NspawnBinary is systemd-nspawn (Debian's systemd-container, installed
// by .ci/run).
const NspawnBinary = "/usr/bin/systemd-nspawn"

// ContainerData is where a Container sees its Data directory.
const ContainerData = "/var/lib/memdiag-e2e"

// v1Systemd is the hybrid host's name=systemd hierarchy, which nspawn's
// --keep-unit and the container's systemd use beside the v2 one.
var v1Systemd = "/sys/fs/cgroup/systemd"

// Container is a systemd-nspawn container whose PID 1 is the host's
// systemd, on the host's kernel. Its root is an overlay of Seed over the
// host's / (the host's installed packages, units and their enable links
// as they are), whose upper layer is a tmpfs: /etc and /var are writable
// and nothing written there reaches the host. Data (on the host's disk,
// not the tmpfs) is bound at ContainerData: the one host directory the
// container writes, for the test's data files and results.
//
// nspawn and everything it starts run in the test's cgroup Group
// (v1 memory with the container's limit, the v2 group and name=systemd),
// nspawn's --keep-unit making that group the container's: the
// container's systemd makes its slices and services below it, so every
// process of the container, the services systemd starts included, is
// charged to the one memory limit. A killed nspawn leaves the container's
// systemd running (reparented to the host's PID 1), so cleanup kills
// every process in those groups, not nspawn's process group: at the end
// of the test, and at the start of the next one after a run whose cleanup
// never ran (a timeout's panic).
type Container struct {
	Name  string // machine and cgroup name, fixed: leftovers are found by it
	Seed  string // host directory laid over the container's /
	Root  string // the overlay nspawn boots
	Data  string // host directory bound at ContainerData
	Group *Cgroup
	base  string // /var/tmp/<Name>: tmpfs, overlay and data under it
	sysd  string // the group's name=systemd directory
	Log   string // nspawn's output (systemd's console)
}

// NewContainer checks that systemd-nspawn and systemd are installed
// (else the test is unmet), removes what a killed earlier run of name
// left (its processes, mounts and groups), and mounts the overlay: a
// tmpfs of up to 512 MiB at /var/tmp/<name>/t holds the upper layer and
// Seed, the overlay is at /var/tmp/<name>/root. limit is the memory limit
// (bytes) of every process of the container. Everything is unmounted and
// removed when the test ends.
func NewContainer(t testing.TB, name string, limit int64) *Container {
	t.Helper()
	RequireRoot(t, "a systemd-nspawn container booting the host's systemd over an overlay of its root")
	for _, p := range []string{NspawnBinary, SystemdBinary} {
		if _, err := os.Stat(p); err != nil {
			Unmet(t, p+" missing: apt-get install systemd systemd-container")
		}
	}
	if _, err := os.Stat(filepath.Join(v1Systemd, "cgroup.procs")); err != nil {
		Unmet(t, "no name=systemd hierarchy at "+v1Systemd+": the container's cgroups are made for a hybrid host")
	}
	base := filepath.Join("/var/tmp", name)
	c := &Container{Name: name, base: base, Seed: filepath.Join(base, "t", "seed"), Root: filepath.Join(base, "root"),
		Data: filepath.Join(base, "data"), sysd: filepath.Join(v1Systemd, name), Log: filepath.Join(base, "nspawn.log")}
	c.clean(t) // a killed run's leftovers
	c.Group = NewCgroup(t, name, limit)
	mkdir(t, c.sysd)
	t.Cleanup(func() { c.clean(t) }) // runs before the Cgroup's removal
	for _, d := range []string{filepath.Join(base, "t"), c.Root, c.Data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount("memdiag-nsp", filepath.Join(base, "t"), "tmpfs", 0, "size=512m,mode=0755"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	for _, d := range []string{c.Seed, filepath.Join(base, "t", "up"), filepath.Join(base, "t", "work")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Seed is on the tmpfs, not under /: overlayfs refuses a lower layer
	// inside another (ELOOP).
	opts := fmt.Sprintf("lowerdir=%s:/,upperdir=%s/t/up,workdir=%s/t/work", c.Seed, base, base)
	if err := syscall.Mount("memdiag-nsp", c.Root, "overlay", 0, opts); err != nil {
		t.Fatalf("mount overlay %s: %v", opts, err)
	}
	return c
}

// WriteFile writes body to the container's path (absolute, as the
// container sees it) through Seed, making the directories it needs.
func (c *Container) WriteFile(t testing.TB, path, body string, mode os.FileMode) {
	t.Helper()
	writeSeed(t, c.Seed, path, body, mode)
}

// Install copies the host file src (a binary the test built) to the
// container's path.
func (c *Container) Install(t testing.TB, src, path string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteFile(t, path, string(b), 0o755)
}

// Hide makes the container's directory dir (absolute) empty whatever the
// host's holds, now or later: an opaque directory in Seed. For
// /etc/systemd/system/timers.target.wants, so the timers that other
// tests enable on the host do not fire in the container.
func (c *Container) Hide(t testing.TB, dir string) {
	t.Helper()
	p := filepath.Join(c.Seed, dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setxattr(p, "trusted.overlay.opaque", []byte("y"), 0); err != nil {
		t.Fatalf("make %s opaque: %v", dir, err)
	}
}

// Boot starts systemd-nspawn booting the host's systemd with unit as
// its target (systemd.unit=), in Group, and returns at once; wait
// returns nspawn's exit once the container has powered off, or an error
// after timeout (the container is then killed). The test's units end
// the container themselves (systemctl poweroff).
func (c *Container) Boot(t testing.TB, unit string, timeout time.Duration) (wait func() error) {
	t.Helper()
	log, err := os.Create(c.Log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{c.sysd, NspawnBinary, "--quiet", "-D", c.Root, "-M", c.Name, "--boot",
		// No machined and no host systemd to make a scope: the
		// container's cgroup is the one nspawn runs in (Group).
		"--register=no", "--keep-unit",
		"--bind=" + c.Data + ":" + ContainerData, "--tmpfs=/tmp",
		"systemd.unit=" + unit}
	var b strings.Builder
	for _, d := range append(c.Group.Dirs(), c.sysd) {
		fmt.Fprintf(&b, "echo $$ > %q/cgroup.procs || exit 97; ", d)
	}
	b.WriteString(`shift; exec "$@"`)
	cmd := exec.Command("/bin/sh", append([]string{"-c", b.String(), "sh"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); log.Close() }()
	return func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(timeout):
			c.kill()
			<-done
			return fmt.Errorf("the container did not power off within %s; killed", timeout)
		}
	}
}

// ConsoleLog is systemd's console output, for a failure's message.
func (c *Container) ConsoleLog() string {
	b, _ := os.ReadFile(c.Log)
	return string(b)
}

// groupDirs are the container's cgroup directories in every hierarchy
// it uses, by name (so a killed run's are found too).
func (c *Container) groupDirs() []string {
	return []string{filepath.Join(v1Memory, c.Name), filepath.Join(v2Unified, c.Name), c.sysd}
}

// kill sends SIGKILL to every process in the container's groups (every
// hierarchy, every subgroup) until none is left, for up to 10 s.
func (c *Container) kill() {
	for range 100 {
		n := 0
		for _, d := range c.groupDirs() {
			eachGroup(d, func(g string) {
				b, _ := os.ReadFile(filepath.Join(g, "cgroup.procs"))
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
						syscall.Kill(pid, syscall.SIGKILL)
						n++
					}
				}
			})
		}
		if n == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clean kills the container's processes, unmounts its overlay and tmpfs,
// removes the subgroups its systemd made (the test's own groups are
// removed by Cgroup) and its directory.
func (c *Container) clean(t testing.TB) {
	c.kill()
	for _, m := range []string{c.Root, filepath.Join(c.base, "t")} {
		if err := syscall.Unmount(m, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	for _, d := range c.groupDirs() {
		removeSubgroups(d)
	}
	os.Remove(c.sysd)
	// nspawn leaves its mount-propagation directory when /run is not a tmpfs.
	os.RemoveAll(filepath.Join("/run/systemd/nspawn/propagate", c.Name))
	if err := os.RemoveAll(c.base); err != nil {
		t.Errorf("remove %s: %v", c.base, err)
	}
}

// eachGroup calls fn for dir's cgroup directories below it, deepest
// first, then for dir itself; a directory that is gone is skipped.
func eachGroup(dir string, fn func(string)) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if e.IsDir() {
			eachGroup(filepath.Join(dir, e.Name()), fn)
		}
	}
	fn(dir)
}

// removeSubgroups removes the cgroup directories below dir, deepest
// first (a cgroup directory is removed with rmdir, its files with it).
func removeSubgroups(dir string) {
	eachGroup(dir, func(g string) {
		if g != dir {
			os.Remove(g)
		}
	})
}
