package memstate

import (
	"context"
	"path/filepath"
	"sort"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/redact"
	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// Proc is one process's memory as the kernel accounts it, in bytes.
// Sources: /proc/PID/status (VmRSS, RssAnon, RssFile, RssShmem, VmSwap),
// /proc/PID/smaps_rollup (Rss and Pss, one read; since 4.14),
// /proc/PID/cgroup;
// https://docs.kernel.org/filesystems/proc.html
type Proc struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`              // status Name (15 characters at most)
	Cmdline string `json:"cmdline,omitempty"` // arguments joined by spaces, likely secrets redacted (redact.Cmdline)

	// RSSBytes is smaps_rollup's Rss, read with PSSBytes (so PSS ≤ RSS);
	// status's VmRSS (RssAnon + RssFile + RssShmem, read when the
	// processes were listed) when smaps_rollup is unreadable.
	RSSBytes      uint64 `json:"rss_bytes"`
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
	// Unit is the systemd unit or container the process runs under
	// (process.ParseCgroupFile, the same as in every other list), "" if
	// none can be told.
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
	// Failed counts the per-process files that were there but unusable
	// (not a regular file, too large, malformed: package process's
	// policy): a status one leaves its process out, any other the
	// figure it holds (shown as unknown, never 0).
	Failed int `json:"failed,omitempty"`
	// Fault is the warning to say for them (a *process.FaultError
	// naming the first file and line); nil when Failed is 0.
	Fault error `json:"-"`
}

// Procs returns the n processes with the largest RSS (all if n ≤ 0),
// largest first, ties by PID. Kernel threads (no VmRSS) are left out.
//
// Per-process files follow package process's policy: a process that
// exits while read is counted in Vanished, a file that is there but
// unusable (a FIFO, a malformed status) is counted in Failed and named
// in Fault, and leaves out its process (status) or its figure; the
// error is only for /proc itself.
func (c *Collector) Procs(n int) ([]Proc, ProcScan, error) {
	var faults process.Faults
	cands, st, err := c.topByRSS(n, &faults)
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
		ctx, procRoot := context.Background(), col.procRoot()
		if args, err := process.ReadCmdline(ctx, procRoot, c.p.PID, cmdlineLimit); err == nil {
			pr.Cmdline = redact.Cmdline(args)
		} else {
			faults.Note(err)
		}
		if ro, err := process.ReadRollup(ctx, procRoot, c.p.PID); err == nil {
			// RSS and PSS from one read: status's VmRSS, read when the
			// processes were listed, is older, and a process growing
			// meanwhile (memdiag itself) showed its PSS above its RSS.
			pr.RSSBytes, pr.PSSBytes = ro.Rss, &ro.Pss
		} else if !faults.Note(err) {
			st.NoPSS++ // denied (or exited): said as needing root
		}
		cpuPath, v2 := "", true
		if b, err := process.ReadPIDFile(ctx, procRoot, c.p.PID, "cgroup", rootfs.ProcLimit); err == nil {
			pr.Cgroup, _ = process.ControllerPath(b, "memory")
			_, pr.Unit = process.ParseCgroupFile(b)
			var v1 bool
			cpuPath, v1 = process.ControllerPath(b, "cpu")
			v2 = !v1
		} else {
			faults.Note(err)
		}
		if st, err := process.ReadStat(ctx, procRoot, c.p.PID); err == nil {
			pr.Retention = col.retention(c.p.PID, st.NumThreads, cpuPath, v2, &faults)
		} else {
			faults.Note(err)
		}
		out = append(out, pr)
	}
	// Largest first by the RSS shown: smaps_rollup's, read after the
	// listing chose them by status's.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].RSSBytes != out[j].RSSBytes {
			return out[i].RSSBytes > out[j].RSSBytes
		}
		return out[i].PID < out[j].PID
	})
	st.Failed, st.Fault = faults.N, faults.Err()
	return out, st, nil
}

type cand struct {
	p  procfs.Proc
	ps procfs.ProcStatus
}

// topByRSS reads /proc/PID/status of every process and returns the n with
// the largest VmRSS (all if n ≤ 0), largest first, ties by PID.
func (c *Collector) topByRSS(n int, faults *process.Faults) ([]cand, ProcScan, error) {
	all, err := c.fs.AllProcs()
	if err != nil {
		return nil, ProcScan{}, err
	}
	var st ProcScan
	st.Processes = len(all)
	var cands []cand
	for _, p := range all {
		s, err := readStatus(c.procRoot(), p.PID)
		if err != nil {
			if process.Gone(err) {
				st.Vanished++
			} else {
				faults.Add(err) // names the file (and line); the process is left out
			}
			continue
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

// cmdlineLimit is how much of a /proc/PID/cmdline `mem` reads: the
// table shows a few dozen characters of it.
const cmdlineLimit = 64 << 10

// procRoot is <root>/proc, the jail of every per-process file.
func (c *Collector) procRoot() string { return filepath.Join(c.root, "proc") }
