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
// per trigger window), not every sample; every per-process file is read
// inside procRoot, bounded (package process).
func StallSnapshot(procRoot, cgroupDir string, limit int) []diskio.ProcIO {
	pfs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil
	}
	ctx := context.Background()
	var pids []int
	if cgroupDir != "" {
		pids = cgroupPIDs(cgroupDir)
	} else {
		all, err := pfs.AllProcs()
		if err != nil {
			return nil
		}
		for _, p := range all {
			if st, err := process.ReadStat(ctx, procRoot, p.PID); err == nil && st.State == "D" {
				pids = append(pids, p.PID)
			}
		}
	}
	var out []diskio.ProcIO
	for _, pid := range pids {
		st, err := process.ReadStat(ctx, procRoot, pid)
		if err != nil {
			continue // exited, or a stat that is not the kernel's
		}
		pi := diskio.ProcIO{PID: pid, PPID: st.PPID, StartTicks: st.StartTicks, Comm: st.Comm}
		if exe, err := process.Exe(procRoot, pid); err == nil {
			pi.Exe = exe
		}
		if io, err := process.ReadIO(ctx, procRoot, pid); err == nil {
			pi.ReadBytes, pi.WriteBytes, pi.CancelledWriteBytes = io.ReadBytes, io.WriteBytes, io.CancelledWriteBytes
		}
		if b, err := process.ReadPIDFile(ctx, procRoot, pid, "cgroup", rootfs.ProcLimit); err == nil {
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
