package lru

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/internal/hostenv"
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
	return fromProcfs(&m), nil
}

// fromProcfs keeps the fields of procfs's Meminfo that memdiag records.
// procfs allocates a new value for every line it parses, so the pointers
// can be shared rather than copied.
func fromProcfs(m *procfs.Meminfo) *Meminfo {
	return &Meminfo{
		MemTotal:     m.MemTotalBytes,
		MemFree:      m.MemFreeBytes,
		MemAvailable: m.MemAvailableBytes,
		Buffers:      m.BuffersBytes,
		Cached:       m.CachedBytes,
		SwapCached:   m.SwapCachedBytes,
		ActiveAnon:   m.ActiveAnonBytes,
		InactiveAnon: m.InactiveAnonBytes,
		ActiveFile:   m.ActiveFileBytes,
		InactiveFile: m.InactiveFileBytes,
		Unevictable:  m.UnevictableBytes,
		Dirty:        m.DirtyBytes,
		Writeback:    m.WritebackBytes,
		Shmem:        m.ShmemBytes,
		SwapTotal:    m.SwapTotalBytes,
		SwapFree:     m.SwapFreeBytes,
	}
}
