package session

import "github.com/memdiag/memdiag/cgroupfs"

// CgroupMounts are the cgroup mount points of the host under root, read
// from its mount table; none when it cannot be read (a fixture root
// without one), and then --cgroup resolves below /sys/fs/cgroup.
func CgroupMounts(procRoot, root string) cgroupfs.Mounts {
	m, err := cgroupfs.ReadMounts(procRoot, root)
	if err != nil {
		return cgroupfs.Mounts{Root: root}
	}
	return m
}
