// Package victim finds whose latency memdiag explains: the service behind
// a local probe URL (the process holding its listening socket) or the one
// named with --victim PID|UNIT|CGROUP, with the cgroup v2 group whose
// *.pressure is its own stall and the memory cgroup whose counters are
// its own memory.
//
// Sources: /proc/net/tcp and /proc/net/tcp6 (listening sockets and their
// inodes, parsed by prometheus/procfs NetTCP; proc_net_tcp(5)),
// /proc/PID/fd ("socket:[inode]" links; proc(5)), /proc/PID/stat (parent),
// /proc/PID/cgroup (cgroups(7); parsed by package process), the cgroup
// mounts (package cgroupfs).
package victim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/record"
)

// Options say where a Finder reads.
type Options struct {
	// ProcRoot is the proc mount (<root>/proc).
	ProcRoot string
	// Mounts are the cgroup mount points (cgroupfs.ReadMounts), read
	// under Mounts.Root.
	Mounts cgroupfs.Mounts
	// LocalAddrs lists this host's addresses, to tell a local probe host
	// from a remote one; nil: net.InterfaceAddrs (the live host's).
	LocalAddrs func() ([]net.Addr, error)
	// LookupHost resolves a probe URL's host name; nil:
	// net.DefaultResolver with a 2 s timeout.
	LookupHost func(ctx context.Context, host string) ([]net.IP, error)
}

// Finder finds a victim on one host.
type Finder struct {
	fs procfs.FS
	o  Options
}

// New returns a Finder reading o.ProcRoot. It fails only if ProcRoot is
// not a readable directory.
func New(o Options) (*Finder, error) {
	fs, err := procfs.NewFS(o.ProcRoot)
	if err != nil {
		return nil, err
	}
	if o.LocalAddrs == nil {
		o.LocalAddrs = net.InterfaceAddrs
	}
	if o.LookupHost == nil {
		o.LookupHost = func(ctx context.Context, host string) ([]net.IP, error) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return net.DefaultResolver.LookupIP(ctx, "ip", host)
		}
	}
	if o.Mounts.Root == "" {
		o.Mounts.Root = "/"
	}
	return &Finder{fs: fs, o: o}, nil
}

// ErrNotFound is wrapped by every error saying the victim was not found.
var ErrNotFound = errors.New("victim not found")

// ErrBadFlag is wrapped by the errors of a --victim value that names
// nothing on this host (bad input, not a missing kernel feature).
var ErrBadFlag = errors.New("bad --victim")

// NotLocalError says a probe URL's host is not this host, so its
// service's process cannot be looked up here.
type NotLocalError struct {
	URL  string
	Host string
}

func (e *NotLocalError) Error() string {
	return fmt.Sprintf("%s is not an address of this host: the service behind %s cannot be found here; pass --victim PID|UNIT|CGROUP", e.Host, e.URL)
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotLocalError) Unwrap() error { return ErrNotFound }

// NotFoundError says why a local victim was not found: no listening
// socket on the port, no process holding it (another user's, seen only
// by root), a unit with no cgroup.
type NotFoundError struct {
	What string // "127.0.0.1:8080", "web.service"
	Why  string
	Hint string
}

func (e *NotFoundError) Error() string {
	s := e.What + ": " + e.Why
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// AmbiguousError says a --victim unit name matches more than one cgroup
// directory of a hierarchy.
type AmbiguousError struct {
	Name    string
	Matches []string // directories
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("--victim %s matches %d cgroups: %v; give the cgroup path instead", e.Name, len(e.Matches), e.Matches)
}

// Unwrap makes errors.Is(err, ErrBadFlag) true.
func (e *AmbiguousError) Unwrap() error { return ErrBadFlag }

// hierarchyDirs fills v's CgroupDir and MemcgDir (and MemcgVersion) from
// its group paths, keeping only directories that exist.
func (f *Finder) hierarchyDirs(v *record.Victim, memV1 bool) {
	m := f.o.Mounts
	if v.Cgroup != "" {
		if d := m.UnifiedDir(v.Cgroup); d != "" && isDir(d) {
			v.CgroupDir = d
		}
	}
	if v.Memcg == "" {
		return
	}
	d := m.UnifiedDir(v.Memcg)
	version := 2
	if memV1 {
		d, version = m.MemoryDir(v.Memcg), 1
	}
	if d != "" && isDir(d) {
		v.MemcgDir, v.MemcgVersion = d, version
		v.Limit, v.LimitBytes = memoryLimit(d, v.Memcg, version)
	}
}

// noLimit is at or above what the kernel reports for an unlimited v1
// memory group (PAGE_COUNTER_MAX pages: 9223372036854771712 with 4 KiB
// pages).
const noLimit = 1 << 62

// memoryLimit walks from the memory cgroup directory dir (whose path is
// memcg, "/a/b") up to its hierarchy's root and returns the first group
// with a memory limit and that limit in bytes: v1 memory.limit_in_bytes
// below noLimit, v2 memory.max other than "max"
// (https://docs.kernel.org/admin-guide/cgroup-v1/memory.html,
// https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files).
// "" when no group up to the root has one.
//
// The root counts too. A host's root has no limit (v1 reports it
// unlimited, v2 has no memory.max there), but in a cgroup namespace — a
// container of nspawn, Docker or Kubernetes — the hierarchy's root is
// the container's own group, and its limit the container's ("/"): every
// group the container sees then competes under it.
func memoryLimit(dir, memcg string, version int) (string, uint64) {
	file := "memory.max"
	if version == 1 {
		file = "memory.limit_in_bytes"
	}
	p := filepath.Clean("/" + memcg)
	for {
		b, err := rootfs.ReadPath(context.Background(), filepath.Join(dir, file), rootfs.ProcLimit)
		if err != nil {
			return "", 0
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < noLimit {
			return p, v
		}
		if p == "/" {
			return "", 0
		}
		dir, p = filepath.Dir(dir), filepath.Dir(p)
	}
}

// GroupLimit is the memory limit that bounds the cgroup v2 directory
// dir (a --cgroup scope, under m.Root): the group path of the nearest
// memory cgroup with a limit, its own or an ancestor's, and that limit
// in bytes (see memoryLimit). On a hybrid host the same path is read in
// the v1 memory hierarchy. ok is false when dir is not a group under
// the cgroup2 mount or its memory group's directory does not exist;
// limit "" with ok true means no group up to the root has a limit.
func GroupLimit(m cgroupfs.Mounts, dir string) (limit string, bytes uint64, ok bool) {
	root := m.Root
	if root == "" {
		root = "/"
	}
	rel, ok := cgroupfs.Rel(root, m.Unified, dir)
	if !ok {
		return "", 0, false
	}
	d, version := filepath.Join(root, m.Unified, rel), 2
	if m.Memory != "" {
		d, version = filepath.Join(root, m.Memory, rel), 1
	}
	if !isDir(d) {
		return "", 0, false
	}
	limit, bytes = memoryLimit(d, rel, version)
	return limit, bytes, true
}

// IsHostRoot reports whether v's cgroup v2 group is the hierarchy's root
// ("/"): its *.pressure are the host's, so its own stall cannot be told
// apart from the host's.
func IsHostRoot(v *record.Victim) bool { return v != nil && filepath.Clean(v.Cgroup) == "/" }
