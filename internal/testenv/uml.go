package testenv

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

//go:embed umlshim/shim.c
var umlShim []byte

// UMLBinary is Debian's user-mode-linux kernel (package user-mode-linux,
// Linux 6.1 on bookworm): a real Linux kernel that runs as a process.
const UMLBinary = "/usr/bin/linux.uml"

// UML is one boot of a user-mode Linux kernel whose PID 1 is a shell
// script. Its root file system is the host's, read-only (hostfs), so the
// test's binaries run inside it as they are; Out is a host directory the
// guest sees read-write at /run/out.
type UML struct {
	Out     string   // host directory, /run/out in the guest
	Disks   []string // host files attached as /dev/ubda, /dev/ubdb, …
	MemSize string   // guest RAM ("192M")
	shim    string
}

// NewSharedUML is NewUML for a test that may run beside the other Shared
// tests (see Shared), which it becomes: it waits for the UML lock first,
// then holds the e2e lock shared.
func NewSharedUML(t testing.TB) *UML {
	t.Helper()
	mark(t, sharedTests)
	return NewUML(t)
}

// NewUML checks that user-mode-linux is installed (else the test is
// unmet: apt-get install user-mode-linux) and builds the LD_PRELOAD shim
// with gcc. The shim lets UML 6.1 run on hosts whose x86 xstate is larger
// than UML's buffer (CPUs with AMX), which otherwise refuse its
// PTRACE_SETREGSET with EFAULT and the guest's init dies; elsewhere it
// passes every call through.
func NewUML(t testing.TB) *UML {
	t.Helper()
	if _, err := os.Stat(UMLBinary); err != nil {
		Unmet(t, UMLBinary+" missing: apt-get install user-mode-linux")
	}
	lockMu.Lock()
	holding := lockFor[t] != nil
	lockMu.Unlock()
	if holding {
		// It would hold the e2e lock while it waits for another guest,
		// minutes in which no exclusive test can run.
		t.Fatal("NewUML: the test already holds the e2e lock; call NewSharedUML instead of Shared then NewUML")
	}
	// One guest at a time, even among Shared tests: a guest's every
	// system call is a ptrace stop on the host, and two guests beside
	// other tests on a 2-core runner took the systemd guest past its
	// 12 minutes (pmlogger.service alone 3 min to start). Taken before
	// the e2e lock, so the wait holds up no other test.
	oneGuest(t)
	// The guest's disks are host files and its root the host's through
	// hostfs: host page cache and disk I/O that would disturb other e2e
	// tests measuring the host's file LRU or disk, so run alone like
	// them (or, in a Shared test, beside tests that read only their own
	// cgroups; in an Aside test, beside all). Its RAM is a file in
	// /dev/shm (guestRAMDir): shmem, not the file LRU, and never written
	// back to disk.
	Exclusive(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "umlshim.c")
	if err := os.WriteFile(src, umlShim, 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "umlshim.so")
	if b, err := exec.Command("gcc", "-shared", "-fPIC", "-O2", "-o", so, src).CombinedOutput(); err != nil {
		Unmet(t, fmt.Sprintf("cannot build the UML ptrace shim (apt-get install gcc libc6-dev): %v\n%s", err, b))
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return &UML{Out: out, MemSize: "192M", shim: so}
}

// Boot runs the guest with script (a /bin/sh script, written to a temp
// file) as its init, until the guest halts or timeout passes. The script
// starts with proc, sys, a tmpfs at /run and the hostfs mount of Out at
// /run/out in place, its output in /run/out/init.log, and ends with a
// sync and a power-off (sysrq o) appended. The console goes to
// <Out>/console.log. An error says the guest did not halt in time or the
// kernel failed to run.
func (u *UML) Boot(t testing.TB, script string, timeout time.Duration) error {
	t.Helper()
	init := filepath.Join(filepath.Dir(u.Out), "init.sh")
	body := "#!/bin/sh\nexport PATH=/usr/sbin:/usr/bin:/sbin:/bin\n" +
		"mount -t proc proc /proc\nmount -t sysfs sysfs /sys\nmount -t tmpfs tmpfs /run\n" +
		"mkdir /run/out && mount -t hostfs none /run/out -o " + u.Out + "\n" +
		"exec >/run/out/init.log 2>&1\nset -x\n" + script +
		// sysrq's power-off ends the guest at once; halt -f (systemd's
		// halt here) took about 3 s.
		"\nsync\necho o >/proc/sysrq-trigger\nsleep 60\n"
	if err := os.WriteFile(init, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return u.run(t, init, nil, timeout)
}

// run boots the kernel with init as PID 1 and extra appended to the
// kernel command line, until the guest halts or timeout passes.
func (u *UML) run(t testing.TB, init string, extra []string, timeout time.Duration) error {
	t.Helper()
	args := []string{"mem=" + u.MemSize, "uml_dir=" + filepath.Dir(u.Out)} // its mconsole socket dir, removed with the temp dir
	for i, d := range u.Disks {
		args = append(args, fmt.Sprintf("ubd%d=%s", i, d))
	}
	// Only the tty devices the guest uses: registering one is slow under
	// ptrace (sysfs, devtmpfs, a uevent for Debian's
	// CONFIG_UEVENT_HELPER_PATH=/sbin/hotplug). The 512 legacy ptys, 63
	// unused consoles and the serial lines took most of a 35 s boot
	// (initcall_debug: pty_init 16.6 s, ssl_init 2.9 s); without them
	// init ran 2.4–2.9 s after start on the same loaded host.
	args = append(args, "root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
		"init="+init, "con=none", "con0=null,fd:1", "ssl=none", "pty.legacy_count=0")
	args = append(args, extra...)
	console, err := os.Create(filepath.Join(u.Out, "console.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer console.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	lockMu.Lock()
	aside := under(asideTests, t.Name())
	lockMu.Unlock()
	c := exec.CommandContext(ctx, UMLBinary, args...)
	if aside {
		// Little of the CPU the other tests want, and only the disk time
		// they leave (Aside). Nice 19, not SCHED_IDLE: at SCHED_IDLE the
		// guest shared the idle CPU evenly with CI's idle-class builds
		// (the fresh clone as nobody, go vet, the release build, the
		// fuzzing) and, with cmd's two UML tests waiting for its lock,
		// became the suite's tail (R48, docs/ci.md); at nice 19 it
		// outweighs them five to one and still weighs 1/68 of a test.
		c = exec.CommandContext(ctx, "nice", append([]string{"-n", "19", UMLBinary}, args...)...)
		if ionice, err := exec.LookPath("ionice"); err == nil {
			c = exec.CommandContext(ctx, ionice, append([]string{"-c", "3"}, c.Args...)...)
		}
	}
	c.Env = append(os.Environ(), "LD_PRELOAD="+u.shim, "TMPDIR="+guestRAMDir(filepath.Dir(u.Out)))
	c.Stdout, c.Stderr = console, console
	// The kernel's helper processes share its process group; end them all.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	began := time.Now()
	err = c.Run()
	t.Logf("user-mode Linux guest ran %s", time.Since(began).Round(100*time.Millisecond))
	if ctx.Err() != nil {
		return fmt.Errorf("UML guest did not halt within %s (console: %s)", timeout, filepath.Join(u.Out, "console.log"))
	}
	if err != nil {
		return fmt.Errorf("linux.uml: %w (console: %s)", err, filepath.Join(u.Out, "console.log"))
	}
	return nil
}

// Read returns the file name of Out (what the guest wrote to
// /run/out/NAME), failing the test with the guest's log if it is missing.
func (u *UML) Read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(u.Out, name))
	if err != nil {
		t.Fatalf("%v\n%s", err, u.Log())
	}
	return string(b)
}

// Log returns the guest's init.log and the console's last lines, for a
// failure message.
func (u *UML) Log() string {
	var b strings.Builder
	if s, err := os.ReadFile(filepath.Join(u.Out, "init.log")); err == nil {
		fmt.Fprintf(&b, "--- init.log\n%s", s)
	} else if !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(&b, "init.log: %v\n", err)
	}
	if s, err := os.ReadFile(filepath.Join(u.Out, "console.log")); err == nil {
		lines := strings.Split(string(s), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(&b, "--- console.log (end)\n%s", strings.Join(lines, "\n"))
	}
	return b.String()
}

// guestRAMDir is where UML makes (and unlinks) the file that is the
// guest's RAM, its TMPDIR: /dev/shm when it is a tmpfs mounted without
// noexec, so the guest's hundreds of MiB are shmem rather than host page
// cache written back to disk beside other tests; else fallback.
func guestRAMDir(fallback string) string {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994 // TMPFS_MAGIC, linux/magic.h
	const noexec = 0x8            // ST_NOEXEC, statfs(2): UML maps its RAM executable
	if syscall.Statfs("/dev/shm", &st) == nil && st.Type == tmpfsMagic && st.Flags&noexec == 0 && syscall.Access("/dev/shm", 2) == nil {
		return "/dev/shm"
	}
	return fallback
}
