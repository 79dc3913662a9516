package procevents

import (
	"bufio"
	"context"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/process"
)

// StallSnapshot lists the processes to blame at a stall onset: with
// cgroupDir, every process in that cgroup and its descendants
// (cgroup.procs); without, the host's processes in uninterruptible sleep
// (state D in /proc/PID/stat: blocked in reclaim, on a page fault or on
// I/O). Each comes with its cumulative I/O from /proc/PID/io, most I/O
// first; at most limit processes; the cgroup and unit are
// process.ParseCgroupFile's, as in every other list. It is called only at onsets (at most once
// per trigger window), not every sample, so it uses procfs for clarity.
func StallSnapshot(procRoot, cgroupDir string, limit int) []diskio.ProcIO {
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil
	}
	var pids []int
	if cgroupDir != "" {
		pids = cgroupPIDs(cgroupDir)
	} else {
		all, err := pfs.AllProcs()
		if err != nil {
			return nil
		}
		for _, p := range all {
			if st, err := p.Stat(); err == nil && st.State == "D" {
				pids = append(pids, p.PID)
			}
		}
	}
	var out []diskio.ProcIO
	for _, pid := range pids {
		p, err := pfs.Proc(pid)
		if err != nil {
			continue
		}
		st, err := p.Stat()
		if err != nil {
			continue
		}
		pi := diskio.ProcIO{PID: pid, PPID: st.PPID, StartTicks: st.Starttime, Comm: st.Comm}
		if exe, err := p.Executable(); err == nil {
			pi.Exe = exe
		}
		if io, err := p.IO(); err == nil {
			pi.ReadBytes, pi.WriteBytes, pi.CancelledWriteBytes = io.ReadBytes, io.WriteBytes, uint64(max(io.CancelledWriteBytes, 0))
		}
		if b, err := rootfs.ReadPath(context.Background(), filepath.Join(procRoot, strconv.Itoa(pid), "cgroup"), rootfs.ProcLimit); err == nil {
			pi.Cgroup, pi.Unit = process.ParseCgroupFile(b)
		}
		out = append(out, pi)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].ReadBytes+out[i].WriteBytes > out[j].ReadBytes+out[j].WriteBytes
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// cgroupPIDs reads cgroup.procs of dir and of every cgroup below it.
func cgroupPIDs(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		f, err := rootfs.OpenPath(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}
