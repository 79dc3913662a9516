// Package cgroupfs finds where the cgroup hierarchies are mounted and
// turns a --cgroup value into a directory, one way for every command.
//
// The mounts come from <proc>/self/mountinfo (proc(5), "mountinfo";
// parsed by prometheus/procfs): the cgroup2 mount (/sys/fs/cgroup on a
// pure v2 host, /sys/fs/cgroup/unified on a hybrid one) and the v1
// mount that holds the memory controller (/sys/fs/cgroup/memory on a
// hybrid or legacy host, none on pure v2). Real lines of this project's
// CI host (kernel 6.18, hybrid):
//
//	35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
//	41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
//
// Source: https://docs.kernel.org/admin-guide/cgroup-v2.html,
// https://docs.kernel.org/admin-guide/cgroup-v1/cgroups.html.
package cgroupfs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/prometheus/procfs"
)

// DefaultMount is where a cgroup hierarchy is looked for when the mount
// table cannot be read: systemd's mount point, the v2 hierarchy on a
// pure v2 host.
const DefaultMount = "/sys/fs/cgroup"

// Mounts are the cgroup mount points a host uses, as the mount table
// gives them (not under Root); "" for a hierarchy that is not mounted.
type Mounts struct {
	// Root is the filesystem root the mount points are read under
	// ("/" normally; the --root of a fixture or a container's view).
	Root string
	// Unified is the cgroup2 mount point: /sys/fs/cgroup (pure v2) or
	// /sys/fs/cgroup/unified (hybrid).
	Unified string
	// Memory is the cgroup v1 mount point of the memory controller
	// (/sys/fs/cgroup/memory); "" on a pure v2 host.
	Memory string
}

// ReadMounts reads <procRoot>/self/mountinfo and returns the cgroup mount
// points in it, to be read under root. An unreadable or malformed mount
// table is an error; a table without cgroup mounts is not (the Mounts are
// then empty).
func ReadMounts(procRoot, root string) (Mounts, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return Mounts{}, err
	}
	if err := rootfs.Check(procRoot, "self/mountinfo"); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return Mounts{}, fmt.Errorf("cgroup mounts: %w", err)
	}
	self, err := fs.Self()
	if err != nil {
		return Mounts{}, fmt.Errorf("cgroup mounts: %w", err)
	}
	mis, err := self.MountInfo()
	if err != nil {
		return Mounts{}, fmt.Errorf("cgroup mounts: %s: %w", filepath.Join(procRoot, "self/mountinfo"), err)
	}
	return mountsOf(mis, root), nil
}

// mountsOf picks the cgroup mounts out of a parsed mount table; the first
// of each kind wins (a later one is a bind mount into a container).
func mountsOf(mis []*procfs.MountInfo, root string) Mounts {
	m := Mounts{Root: root}
	for _, mi := range mis {
		switch mi.FSType {
		case "cgroup2":
			if m.Unified == "" {
				m.Unified = mi.MountPoint
			}
		case "cgroup":
			_, mem := mi.SuperOptions["memory"]
			if mem && m.Memory == "" {
				m.Memory = mi.MountPoint
			}
		}
	}
	return m
}

// Hybrid reports whether the memory controller is in cgroup v1 while a
// cgroup2 hierarchy is mounted too.
func (m Mounts) Hybrid() bool { return m.Memory != "" && m.Unified != "" }

// UnifiedDir is the directory of the v2 group path ("/a/b.service", as
// /proc/PID/cgroup gives it) under Root; "" without a cgroup2 mount.
func (m Mounts) UnifiedDir(path string) string {
	if m.Unified == "" {
		return ""
	}
	return filepath.Join(m.Root, m.Unified, path)
}

// MemoryDir is the directory of the v1 memory group path under Root; ""
// without a v1 memory mount.
func (m Mounts) MemoryDir(path string) string {
	if m.Memory == "" {
		return ""
	}
	return filepath.Join(m.Root, m.Memory, path)
}

// Resolve turns a --cgroup value into a directory under root: an
// absolute path is the directory itself (under root), a relative one is
// a group path below the cgroup2 mount (/sys/fs/cgroup when the mounts
// are unknown, as `gate --cgroup` always took it). It does not check that
// the directory exists; psi.CheckCgroup says what is wrong with it.
func Resolve(root string, m Mounts, value string) string {
	if root == "" {
		root = "/"
	}
	// Cleaned as a rooted path first, so "/.." or "a/../../.." stays
	// under root (an absolute value) or under the mount (a group path).
	jailed := filepath.Clean("/" + value)
	if filepath.IsAbs(value) {
		return filepath.Join(root, jailed)
	}
	base := m.Unified
	if base == "" {
		base = DefaultMount
	}
	return filepath.Join(root, base, jailed)
}

// Rel is the group path of dir in the hierarchy mounted at mount under
// root ("/" for the mount itself), ok false when dir is not under it.
func Rel(root, mount, dir string) (path string, ok bool) {
	if mount == "" {
		return "", false
	}
	base := filepath.Join(root, mount)
	r, err := filepath.Rel(base, filepath.Clean(dir))
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	if r == "." {
		return "/", true
	}
	return "/" + r, true
}

// Mounted lists the mount points of m that are set, v2 first.
func (m Mounts) Mounted() []string {
	return slices.DeleteFunc([]string{m.Unified, m.Memory}, func(s string) bool { return s == "" })
}
