package memstate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/lru"
)

// Host is the host-wide memory picture of /proc/meminfo, in bytes.
// Fields the kernel that produced the file lacks are zero and their
// /proc/meminfo names are listed in Missing, so absent and zero stay
// distinct. Source: /proc/meminfo,
// https://docs.kernel.org/filesystems/proc.html#meminfo
type Host struct {
	TotalBytes     uint64 `json:"total_bytes"`     // MemTotal
	FreeBytes      uint64 `json:"free_bytes"`      // MemFree
	AvailableBytes uint64 `json:"available_bytes"` // MemAvailable (since 3.14): the kernel's estimate of what can be allocated without swapping

	BuffersBytes uint64 `json:"buffers_bytes"` // Buffers
	CachedBytes  uint64 `json:"cached_bytes"`  // Cached: page cache including shmem/tmpfs, excluding swap cache

	ActiveAnonBytes   uint64 `json:"active_anon_bytes"`   // Active(anon)
	InactiveAnonBytes uint64 `json:"inactive_anon_bytes"` // Inactive(anon)
	ActiveFileBytes   uint64 `json:"active_file_bytes"`   // Active(file)
	InactiveFileBytes uint64 `json:"inactive_file_bytes"` // Inactive(file)
	UnevictableBytes  uint64 `json:"unevictable_bytes"`   // Unevictable

	DirtyBytes     uint64 `json:"dirty_bytes"`     // Dirty: waiting to be written back
	WritebackBytes uint64 `json:"writeback_bytes"` // Writeback: being written back now
	ShmemBytes     uint64 `json:"shmem_bytes"`     // Shmem: tmpfs, shared anonymous mappings, SysV shm; on the anon LRU, reclaimable only to swap

	SlabReclaimableBytes   uint64 `json:"slab_reclaimable_bytes"`   // SReclaimable (dentries, inodes)
	SlabUnreclaimableBytes uint64 `json:"slab_unreclaimable_bytes"` // SUnreclaim
	KernelStackBytes       uint64 `json:"kernel_stack_bytes"`       // KernelStack
	PageTablesBytes        uint64 `json:"page_tables_bytes"`        // PageTables

	SwapTotalBytes  uint64 `json:"swap_total_bytes"`  // SwapTotal
	SwapFreeBytes   uint64 `json:"swap_free_bytes"`   // SwapFree
	SwapUsedBytes   uint64 `json:"swap_used_bytes"`   // SwapTotal − SwapFree
	SwapCachedBytes uint64 `json:"swap_cached_bytes"` // SwapCached: swapped-out pages also still in RAM

	Tmpfs   []TmpfsMount `json:"tmpfs,omitempty"`
	Missing []string     `json:"missing,omitempty"` // /proc/meminfo fields absent on this kernel
}

// TmpfsMount is one tmpfs mount and its use from statfs(2). Its pages are
// Shmem in /proc/meminfo: they look like cache but only swap can free them.
type TmpfsMount struct {
	MountPoint string `json:"mount_point"` // as in /proc/self/mountinfo (relative to the host root)
	SizeBytes  uint64 `json:"size_bytes"`  // f_blocks × f_bsize: the size= limit
	UsedBytes  uint64 `json:"used_bytes"`  // (f_blocks − f_bfree) × f_bsize
}

// Statfs returns the total and free bytes of the filesystem at path. It is
// a field of [Collector] so tests can stand in for statfs(2) on a fixture.
type Statfs func(path string) (sizeBytes, freeBytes uint64, err error)

// errNotTmpfs says a mount point of mountinfo is, under this root, not a
// tmpfs: the root is a fixture tree or the mount is gone.
var errNotTmpfs = fmt.Errorf("not a tmpfs: %w", os.ErrNotExist)

// statfs is the live Statfs, from statfs(2). A path that is not a tmpfs
// (f_type TMPFS_MAGIC), or not a mount point (on the same device as its
// parent directory), yields errNotTmpfs, so a fixture root's directories
// are never measured as if they were the mounts — a fixture tree under
// /dev/shm is on a tmpfs, but its sys/fs/cgroup is no mount.
func statfs(path string) (uint64, uint64, error) {
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	if s.Type != unix.TMPFS_MAGIC || !mountPoint(path) {
		return 0, 0, fmt.Errorf("%s: %w", path, errNotTmpfs)
	}
	return s.Blocks * uint64(s.Bsize), s.Bfree * uint64(s.Bsize), nil
}

// mountPoint reports whether path is "/" or on another device than its
// parent directory (a bind mount within one tmpfs is not told apart: its
// use is that tmpfs's, counted at the mount that is).
func mountPoint(path string) bool {
	path = filepath.Clean(path)
	if path == "/" {
		return true
	}
	var st, parent unix.Stat_t
	if unix.Stat(path, &st) != nil || unix.Stat(filepath.Dir(path), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// Collector reads memstate's sources from one root.
type Collector struct {
	root   string    // "/" live, a fixture tree in tests
	fs     procfs.FS // <root>/proc
	Statfs Statfs    // statfs(2) on <root>/<mount point>; replaced in tests
}

// NewCollector returns a Collector reading <root>/proc, <root>/sys and
// <root>/dev/kmsg. It fails only if <root>/proc is not a directory.
func NewCollector(root string) (*Collector, error) {
	if err := hostenv.CheckProc(filepath.Join(root, "proc")); err != nil {
		return nil, err
	}
	fs, err := procfs.NewFS(filepath.Join(root, "proc"))
	if err != nil {
		return nil, err
	}
	return &Collector{root: root, fs: fs, Statfs: statfs}, nil
}

// Host reads /proc/meminfo and the tmpfs mounts of /proc/self/mountinfo,
// each measured with statfs(2). A tmpfs that cannot be measured is left
// out and its error returned in warn; err is only a failure of meminfo.
//
// A meminfo that cannot be read (missing, a directory, no permission) or
// that has no MemTotal line (an empty file under --root) gives a
// *hostenv.Unavailable: the figures are unknown, and zeros would read as
// a calm host (issue 29.6). A file that does not parse is a plain error.
func (c *Collector) Host() (h Host, warn []error, err error) {
	path := filepath.Join(c.root, "proc/meminfo")
	// procfs opens without O_NONBLOCK and follows links: vet the file in
	// the jail first (a FIFO, a device or a link out of the root).
	err = rootfs.Check(filepath.Join(c.root, "proc"), "meminfo")
	var mi procfs.Meminfo
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		mi, err = c.fs.Meminfo()
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) {
			return Host{}, nil, meminfoUnknown(path, err)
		}
		return Host{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	if mi.MemTotal == nil {
		return Host{}, nil, meminfoUnknown(path, errNoMemTotal)
	}
	if h, err = hostFromMeminfo(mi); err != nil {
		return Host{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	h.Tmpfs, warn = c.tmpfs()
	return h, warn, nil
}

// errNoMemTotal: a meminfo without its first line, MemTotal, which every
// kernel writes; an empty or cut file.
var errNoMemTotal = errors.New("no MemTotal line (empty or cut file)")

// meminfoUnknown is the error of a meminfo that gives no figures.
func meminfoUnknown(path string, err error) error {
	return &hostenv.Unavailable{Path: path, Err: err,
		Need: fmt.Sprintf("the host's memory figures are unknown: %v", unwrapPath(err)),
		Hint: "give --root a host tree whose proc/meminfo is a copy of a kernel's, or run on the host"}
}

// unwrapPath drops the *fs.PathError's "open PATH: " from err, since the
// Unavailable names the path already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// hostFromMeminfo copies the fields memstate shows; procfs has already
// turned the file's kB (KiB) into bytes, without checking that they fit:
// a value past 2^64 bytes (never written by a kernel, but possible in a
// file under --root) is refused, not wrapped, as lru refuses it.
func hostFromMeminfo(mi procfs.Meminfo) (Host, error) {
	var h Host
	for _, f := range []struct {
		name string
		src  *uint64
		dst  *uint64
		raw  *uint64
	}{
		{"MemTotal", mi.MemTotalBytes, &h.TotalBytes, mi.MemTotal},
		{"MemFree", mi.MemFreeBytes, &h.FreeBytes, mi.MemFree},
		{"MemAvailable", mi.MemAvailableBytes, &h.AvailableBytes, mi.MemAvailable},
		{"Buffers", mi.BuffersBytes, &h.BuffersBytes, mi.Buffers},
		{"Cached", mi.CachedBytes, &h.CachedBytes, mi.Cached},
		{"Active(anon)", mi.ActiveAnonBytes, &h.ActiveAnonBytes, mi.ActiveAnon},
		{"Inactive(anon)", mi.InactiveAnonBytes, &h.InactiveAnonBytes, mi.InactiveAnon},
		{"Active(file)", mi.ActiveFileBytes, &h.ActiveFileBytes, mi.ActiveFile},
		{"Inactive(file)", mi.InactiveFileBytes, &h.InactiveFileBytes, mi.InactiveFile},
		{"Unevictable", mi.UnevictableBytes, &h.UnevictableBytes, mi.Unevictable},
		{"Dirty", mi.DirtyBytes, &h.DirtyBytes, mi.Dirty},
		{"Writeback", mi.WritebackBytes, &h.WritebackBytes, mi.Writeback},
		{"Shmem", mi.ShmemBytes, &h.ShmemBytes, mi.Shmem},
		{"SReclaimable", mi.SReclaimableBytes, &h.SlabReclaimableBytes, mi.SReclaimable},
		{"SUnreclaim", mi.SUnreclaimBytes, &h.SlabUnreclaimableBytes, mi.SUnreclaim},
		{"KernelStack", mi.KernelStackBytes, &h.KernelStackBytes, mi.KernelStack},
		{"PageTables", mi.PageTablesBytes, &h.PageTablesBytes, mi.PageTables},
		{"SwapTotal", mi.SwapTotalBytes, &h.SwapTotalBytes, mi.SwapTotal},
		{"SwapFree", mi.SwapFreeBytes, &h.SwapFreeBytes, mi.SwapFree},
		{"SwapCached", mi.SwapCachedBytes, &h.SwapCachedBytes, mi.SwapCached},
	} {
		if f.src == nil {
			h.Missing = append(h.Missing, f.name)
			continue
		}
		if err := lru.KBOverflow(f.name, f.raw, f.src); err != nil {
			return Host{}, err
		}
		*f.dst = *f.src
	}
	h.SwapUsedBytes = sub(h.SwapTotalBytes, h.SwapFreeBytes)
	return h, nil
}

// tmpfs lists the tmpfs mounts of <root>/proc/self/mountinfo, sorted by
// mount point, a mount point appearing twice (over-mounted) once.
func (c *Collector) tmpfs() ([]TmpfsMount, []error) {
	// procfs reads mountinfo line by line without a bound: vet it first.
	if err := rootfs.Check(filepath.Join(c.root, "proc"), "self/mountinfo"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, []error{err}
	}
	mounts, err := c.fs.GetMounts()
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", filepath.Join(c.root, "proc/self/mountinfo"), err)}
	}
	var out []TmpfsMount
	var warn []error
	seen := map[string]bool{}
	for _, m := range mounts {
		if m.FSType != "tmpfs" || seen[m.MountPoint] {
			continue
		}
		seen[m.MountPoint] = true
		size, free, err := c.Statfs(filepath.Join(c.root, m.MountPoint))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
				warn = append(warn, err)
			}
			continue
		}
		out = append(out, TmpfsMount{MountPoint: m.MountPoint, SizeBytes: size, UsedBytes: sub(size, free)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MountPoint < out[j].MountPoint })
	return out, warn
}

// sub is a−b, or 0 when b > a (counters read at slightly different times).
func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
