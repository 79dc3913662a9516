package memstate

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/redact"
	"github.com/prometheus/procfs"
)

// Proc is one process's memory as the kernel accounts it, in bytes.
// Sources: /proc/PID/status (VmRSS, RssAnon, RssFile, RssShmem, VmSwap),
// /proc/PID/smaps_rollup (Pss, Swap; since 4.14), /proc/PID/cgroup;
// https://docs.kernel.org/filesystems/proc.html
type Proc struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`              // status Name (15 characters at most)
	Cmdline string `json:"cmdline,omitempty"` // arguments joined by spaces, likely secrets redacted (redact.Cmdline)

	RSSBytes      uint64 `json:"rss_bytes"`       // VmRSS = RssAnon + RssFile + RssShmem
	RSSAnonBytes  uint64 `json:"rss_anon_bytes"`  // RssAnon: heap, stacks, private mappings — what a leak grows
	RSSFileBytes  uint64 `json:"rss_file_bytes"`  // RssFile: mapped files (binaries, libraries, mmap'd data)
	RSSShmemBytes uint64 `json:"rss_shmem_bytes"` // RssShmem: shared memory, tmpfs mappings
	SwapBytes     uint64 `json:"swap_bytes"`      // VmSwap: anon pages of this process in swap

	// PSSBytes is the proportional set size (shared pages divided among
	// their users), from smaps_rollup; nil when it is unreadable (another
	// user's process without root, or kernel < 4.14).
	PSSBytes *uint64 `json:"pss_bytes,omitempty"`

	// Cgroup is the process's memory cgroup: the v1 memory controller's
	// path when there is one, else the v2 path ("0::").
	Cgroup string `json:"cgroup,omitempty"`
	// Unit is the systemd unit or container the cgroup belongs to, "" if
	// none can be told from the path.
	Unit string `json:"unit,omitempty"`

	// Retention is the host's evidence on whether anon memory is held by
	// the program or kept by its allocator; nil when /proc/PID/stat was
	// unreadable.
	Retention *Retention `json:"retention,omitempty"`
}

// ProcScan counts what one scan of /proc saw, so permission problems and
// races are reported rather than hidden.
type ProcScan struct {
	Processes int `json:"processes"`          // PIDs listed
	Vanished  int `json:"vanished,omitempty"` // exited between listing and reading
	NoPSS     int `json:"no_pss,omitempty"`   // top processes whose smaps_rollup was unreadable
}

// Procs returns the n processes with the largest RSS (all if n ≤ 0),
// largest first, ties by PID. Kernel threads (no VmRSS) are left out.
func (c *Collector) Procs(n int) ([]Proc, ProcScan, error) {
	cands, st, err := c.topByRSS(n)
	if err != nil {
		return nil, st, err
	}
	out := make([]Proc, 0, len(cands))
	col := c
	for _, c := range cands {
		s := c.ps
		pr := Proc{
			PID: c.p.PID, Comm: s.Name,
			RSSBytes: s.VmRSS, RSSAnonBytes: s.RssAnon, RSSFileBytes: s.RssFile, RSSShmemBytes: s.RssShmem,
			SwapBytes: s.VmSwap,
		}
		if args, err := c.p.CmdLine(); err == nil {
			pr.Cmdline = redact.Cmdline(args)
		}
		if r, err := c.p.ProcSMapsRollup(); err == nil {
			pss := r.Pss
			pr.PSSBytes = &pss
		} else {
			st.NoPSS++
		}
		cpuPath, v2 := "", true
		if cgs, err := c.p.Cgroups(); err == nil {
			pr.Cgroup = memoryCgroup(cgs)
			pr.Unit = process.UnitFromCgroup(pr.Cgroup)
			cpuPath, v2 = cpuCgroup(cgs)
		}
		if st, err := c.p.Stat(); err == nil {
			pr.Retention = col.retention(c.p, st.NumThreads, cpuPath, v2)
		}
		out = append(out, pr)
	}
	return out, st, nil
}

type cand struct {
	p  procfs.Proc
	ps procfs.ProcStatus
}

// topByRSS reads /proc/PID/status of every process and returns the n with
// the largest VmRSS (all if n ≤ 0), largest first, ties by PID.
func (c *Collector) topByRSS(n int) ([]cand, ProcScan, error) {
	all, err := c.fs.AllProcs()
	if err != nil {
		return nil, ProcScan{}, err
	}
	var st ProcScan
	st.Processes = len(all)
	var cands []cand
	for _, p := range all {
		path := filepath.Join(c.root, "proc", strconv.Itoa(p.PID), "status")
		s, err := readStatus(path)
		if err != nil {
			if gone(err) {
				st.Vanished++
				continue
			}
			return nil, st, fmt.Errorf("%s: %w", path, err)
		}
		if s.VmRSS == 0 && s.RssAnon == 0 && s.RssFile == 0 {
			continue // kernel thread, or a zombie
		}
		cands = append(cands, cand{p, s})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].ps.VmRSS != cands[j].ps.VmRSS {
			return cands[i].ps.VmRSS > cands[j].ps.VmRSS
		}
		return cands[i].p.PID < cands[j].p.PID
	})
	if n > 0 && len(cands) > n {
		cands = cands[:n]
	}
	return cands, st, nil
}

// gone reports whether err means the process exited while being read.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// memoryCgroup picks the path that governs a process's memory: the v1
// memory controller's hierarchy when present, else the v2 one.
func memoryCgroup(cgs []procfs.Cgroup) string {
	v2 := ""
	for _, cg := range cgs {
		if cg.HierarchyID == 0 {
			v2 = cg.Path
		}
		for _, ctl := range cg.Controllers {
			if ctl == "memory" {
				return cg.Path
			}
		}
	}
	return v2
}

// cpuCgroup picks the path that governs a process's CPU quota: the v1
// cpu controller's hierarchy when present (v2 false), else the v2 one.
func cpuCgroup(cgs []procfs.Cgroup) (path string, v2 bool) {
	v2p := ""
	for _, cg := range cgs {
		if cg.HierarchyID == 0 {
			v2p = cg.Path
		}
		for _, ctl := range cg.Controllers {
			if ctl == "cpu" {
				return cg.Path, false
			}
		}
	}
	return v2p, true
}
