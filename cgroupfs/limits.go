package cgroupfs

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// Limit is a memory cgroup with a memory limit: its group path ("/a/b",
// as /proc/PID/cgroup gives it) and the limit in bytes.
type Limit struct {
	Group string
	Bytes uint64
}

// noLimit is at or above what the kernel reports for an unlimited v1
// memory group (PAGE_COUNTER_MAX pages: 9223372036854771712 with 4 KiB
// pages).
const noLimit = 1 << 62

// MemoryLimits walks from the memory cgroup directory dir (whose group
// path is group, "/a/b") up to its hierarchy's root and returns every
// group with a memory limit, nearest first, with that limit in bytes: v1
// memory.limit_in_bytes below noLimit (v1 true), v2 memory.max other
// than "max"
// (https://docs.kernel.org/admin-guide/cgroup-v1/memory.html,
// https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files).
// The walk stops at the first file it cannot read.
//
// The root counts too. A host's root has no limit (v1 reports it
// unlimited, v2 has no memory.max there), but in a cgroup namespace — a
// container of nspawn, Docker or Kubernetes — the hierarchy's root is
// the container's own group, and its limit the container's ("/"): every
// group the container sees then competes under it.
func MemoryLimits(dir, group string, v1 bool) []Limit {
	var ls []Limit
	p := filepath.Clean("/" + group)
	for {
		v, limited, err := MemoryLimit(dir, v1)
		if err != nil {
			break
		}
		if limited {
			ls = append(ls, Limit{Group: p, Bytes: v})
		}
		if p == "/" {
			break
		}
		dir, p = filepath.Dir(dir), filepath.Dir(p)
	}
	return ls
}

// MemoryLimit reads the memory limit of the one memory cgroup directory
// dir, in bytes (v1 memory.limit_in_bytes when v1, else v2 memory.max):
// limited is false for no limit (v1 at or above noLimit, v2 "max") and
// for a value that does not parse; err when the file cannot be read.
func MemoryLimit(dir string, v1 bool) (bytes uint64, limited bool, err error) {
	file := "memory.max"
	if v1 {
		file = "memory.limit_in_bytes"
	}
	b, err := rootfs.ReadPath(context.Background(), filepath.Join(dir, file), rootfs.ProcLimit)
	if err != nil {
		return 0, false, err
	}
	if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < noLimit {
		return v, true, nil
	}
	return 0, false, nil
}
