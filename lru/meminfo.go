package lru

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/internal/rootfs"
)

// Collector reads /proc/meminfo and /proc/vmstat under one proc root.
// It keeps a read buffer between calls to stay cheap when called every
// second, so one Collector must not be used by several goroutines at once.
type Collector struct {
	procRoot string
	fs       procfs.FS
	vmstat   vmstatReader
}

// NewCollector returns a Collector reading <procRoot>/meminfo and
// <procRoot>/vmstat (procRoot is "/proc" on a live host, or a fixture's
// proc directory). It fails only if procRoot is not a directory.
func NewCollector(procRoot string) (*Collector, error) {
	if err := hostenv.CheckProc(procRoot); err != nil {
		return nil, err
	}
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	return &Collector{procRoot: procRoot, fs: pfs}, nil
}

// Meminfo reads <procRoot>/meminfo once, with prometheus/procfs, and keeps
// the fields memdiag records, in bytes. procfs already multiplies the
// file's "kB" (KiB) by 1024 in its *Bytes fields, so this is the unit
// boundary; a line the kernel does not print stays nil.
//
// Source: /proc/meminfo, https://docs.kernel.org/filesystems/proc.html
// ("meminfo").
func (c *Collector) Meminfo() (*Meminfo, error) {
	// procfs opens without O_NONBLOCK and follows links: vet the file in
	// the jail first (a FIFO, a device or a link out of the root).
	if err := rootfs.Check(c.procRoot, "meminfo"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	m, err := c.fs.Meminfo()
	if err != nil {
		path := filepath.Join(c.procRoot, "meminfo")
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err // already names the file
		}
		// procfs's parse errors name neither file nor line.
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := fromProcfs(&m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(c.procRoot, "meminfo"), err)
	}
	return out, nil
}

// fromProcfs keeps the fields of procfs's Meminfo that memdiag records.
// procfs allocates a new value for every line it parses, so the pointers
// can be shared rather than copied. procfs multiplies a "kB" value by 1024
// without checking it fits: a value past 2^64 bytes (never written by a
// kernel, but possible in a file under --root) is refused, not wrapped.
func fromProcfs(m *procfs.Meminfo) (*Meminfo, error) {
	out := &Meminfo{}
	for _, f := range []struct {
		name       string
		val, bytes *uint64
		dst        **uint64
	}{
		{"MemTotal", m.MemTotal, m.MemTotalBytes, &out.MemTotal},
		{"MemFree", m.MemFree, m.MemFreeBytes, &out.MemFree},
		{"MemAvailable", m.MemAvailable, m.MemAvailableBytes, &out.MemAvailable},
		{"Buffers", m.Buffers, m.BuffersBytes, &out.Buffers},
		{"Cached", m.Cached, m.CachedBytes, &out.Cached},
		{"SwapCached", m.SwapCached, m.SwapCachedBytes, &out.SwapCached},
		{"Active(anon)", m.ActiveAnon, m.ActiveAnonBytes, &out.ActiveAnon},
		{"Inactive(anon)", m.InactiveAnon, m.InactiveAnonBytes, &out.InactiveAnon},
		{"Active(file)", m.ActiveFile, m.ActiveFileBytes, &out.ActiveFile},
		{"Inactive(file)", m.InactiveFile, m.InactiveFileBytes, &out.InactiveFile},
		{"Unevictable", m.Unevictable, m.UnevictableBytes, &out.Unevictable},
		{"Dirty", m.Dirty, m.DirtyBytes, &out.Dirty},
		{"Writeback", m.Writeback, m.WritebackBytes, &out.Writeback},
		{"Shmem", m.Shmem, m.ShmemBytes, &out.Shmem},
		{"SwapTotal", m.SwapTotal, m.SwapTotalBytes, &out.SwapTotal},
		{"SwapFree", m.SwapFree, m.SwapFreeBytes, &out.SwapFree},
	} {
		if err := KBOverflow(f.name, f.val, f.bytes); err != nil {
			return nil, err
		}
		*f.dst = f.bytes
	}
	return out, nil
}

// KBOverflow returns an error if procfs's bytes value for a meminfo field
// wrapped: val is the number written, bytes procfs's val*1024 for a "kB"
// line or val itself for a line without unit. val*1024 mod 2^64 equals
// val only for 0, so bytes != val means a "kB" line.
func KBOverflow(name string, val, bytes *uint64) error {
	if val == nil || bytes == nil || *bytes == *val || *val <= math.MaxUint64/1024 {
		return nil
	}
	return fmt.Errorf("%s: %d kB is past 2^64 bytes", name, *val)
}
