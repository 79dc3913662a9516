/* PID 1 of a user-mode Linux guest that then becomes systemd.
 *
 * The guest's root is the host's /, read-only (hostfs). systemd needs a
 * writable /etc, /var and /run, and nothing the guest does may reach the
 * host's files, so this makes a new root and execs /lib/systemd/systemd in
 * it:
 *
 *   /run (tmpfs)                     scratch, under the old root
 *   /run/seed   hostfs, read-only    the test's files (MEMDIAG_SEED)
 *   /run/ovl/root  overlay           lowerdir=/run/seed:/  upperdir=tmpfs
 *   new root's /etc/systemd/system   overlay, lowerdir the seed's only
 *   new root's /run, /tmp  tmpfs     fresh, as on a booted host
 *   new root's /run/out    hostfs    MEMDIAG_OUT, the only host directory
 *                                    the guest can write
 *
 * then pivot_root into the overlay and detach the old root: every write
 * lands in the overlay's tmpfs upper layer and is gone when the guest
 * halts. Overlayfs is a module in Debian's UML kernel; it is loaded from
 * /usr/lib/uml/modules with finit_module (no kmod needed).
 *
 * Environment (from the kernel command line): MEMDIAG_SEED, MEMDIAG_OUT,
 * MEMDIAG_OVERLAY_KO. Any failure is written to the console and the guest
 * powers off, so the test sees the message instead of a hang. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what) {
	fprintf(stderr, "memdiag sysdinit: %s: %s\n", what, strerror(errno));
	sync();
	reboot(RB_POWER_OFF);
	_exit(1);
}

static void must_mount(const char *src, const char *dst, const char *type, unsigned long flags, const char *data) {
	if (mount(src, dst, type, flags, data) != 0) {
		char msg[512];
		snprintf(msg, sizeof msg, "mount %s on %s (%s, %s)", src, dst, type, data ? data : "");
		die(msg);
	}
}

static void must_mkdir(const char *p) {
	if (mkdir(p, 0755) != 0 && errno != EEXIST) die(p);
}

static const char *env(const char *name) {
	const char *v = getenv(name);
	if (!v || !*v) {
		errno = EINVAL;
		die(name);
	}
	return v;
}

int main(int argc, char **argv) {
	(void)argc;
	const char *seed = env("MEMDIAG_SEED"), *out = env("MEMDIAG_OUT"), *ko = env("MEMDIAG_OVERLAY_KO");
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0) die(ko);
	if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST) die("finit_module overlay.ko");
	close(fd);

	must_mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL);
	must_mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	must_mkdir("/run/seed");
	must_mount("none", "/run/seed", "hostfs", MS_RDONLY, seed);
	must_mkdir("/run/ovl");
	must_mount("tmpfs", "/run/ovl", "tmpfs", 0, "mode=0755");
	must_mkdir("/run/ovl/upper");
	must_mkdir("/run/ovl/work");
	must_mkdir("/run/ovl/root");
	must_mount("overlay", "/run/ovl/root", "overlay", 0,
		"lowerdir=/run/seed:/,upperdir=/run/ovl/upper,workdir=/run/ovl/work");

	/* /etc/systemd/system is the seed's alone (a copy of the host's made
	 * at boot, with the test's units; uml_systemd.go): the host's would
	 * show through live, and other tests write and enable units there
	 * while the guest runs (the verdict lanes' timers), which the
	 * guest's systemd would then start. Writable through a tmpfs upper. */
	must_mkdir("/run/ovl/sdsys-upper");
	must_mkdir("/run/ovl/sdsys-work");
	must_mount("overlay", "/run/ovl/root/etc/systemd/system", "overlay", 0,
		"lowerdir=/run/seed/etc/systemd/system,upperdir=/run/ovl/sdsys-upper,workdir=/run/ovl/sdsys-work");

	/* The host's /run and /tmp would show through the lower layer: cover
	 * them (systemd-tmpfiles would empty /tmp at boot anyway). The test's
	 * files, binaries included, come through the seed layer. */
	must_mount("tmpfs", "/run/ovl/root/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	must_mount("tmpfs", "/run/ovl/root/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	must_mkdir("/run/ovl/root/run/out");
	must_mount("none", "/run/ovl/root/run/out", "hostfs", 0, out);
	must_mkdir("/run/ovl/root/run/ovl-old-root");

	if (chdir("/run/ovl/root") != 0) die("chdir new root");
	if (syscall(SYS_pivot_root, ".", "run/ovl-old-root") != 0) die("pivot_root");
	if (chdir("/") != 0) die("chdir /");
	if (umount2("/run/ovl-old-root", MNT_DETACH) != 0) die("umount old root");
	rmdir("/run/ovl-old-root");
	/* The host's /.dockerenv would make systemd take the guest for a
	 * container (it would then ignore the kernel command line); the
	 * guest is a virtual machine, "uml" to systemd-detect-virt. The
	 * unlink only writes a whiteout into the overlay's upper layer. */
	if (unlink("/.dockerenv") != 0 && errno != ENOENT) die("unlink /.dockerenv");

	unsetenv("MEMDIAG_SEED");
	unsetenv("MEMDIAG_OUT");
	unsetenv("MEMDIAG_OVERLAY_KO");
	argv[0] = "/lib/systemd/systemd";
	execv("/lib/systemd/systemd", argv);
	die("exec /lib/systemd/systemd");
	return 1;
}
