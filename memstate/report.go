package memstate

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/signal"
)

// Report is everything `memdiag mem` shows. It is built by [Build] from
// what the Collector read, so rendering never reads /proc.
type Report struct {
	Time time.Time `json:"time"`
	// Root is the tree read (mem --root) when it is not "/": a capture
	// or image whose files are read now, once unless --interval is given
	// (their own time is not known); "" for the live host.
	Root     string        `json:"root,omitempty"`
	Host     Host          `json:"host"`
	PSI      *psi.Resource `json:"psi_memory,omitempty"` // /proc/pressure/memory at the second read
	Activity Activity      `json:"activity"`             // between the two reads
	Verdict  Verdict       `json:"verdict"`
	Procs    []Proc        `json:"processes"`
	ProcScan ProcScan      `json:"process_scan"`
	Cgroups  []Cgroup      `json:"cgroups"`
	OOM      OOMReport     `json:"oom"`
	Warnings []string      `json:"warnings,omitempty"` // sources that could not be read, once each
	// SuspectPSI is where /proc/pressure/memory contradicted itself
	// between the two reads (signal.PSICheck), on Kernel.
	SuspectPSI []signal.PSISuspect `json:"suspect_psi,omitempty"`
	Kernel     string              `json:"kernel,omitempty"`
}

// OOMReport is what is known about OOM kills: the kills in the kernel log
// when it was readable, and the counters, which need no log.
type OOMReport struct {
	LogSource     string `json:"log_source,omitempty"`     // "/dev/kmsg", "dmesg", "journalctl -k"
	LogUnreadable string `json:"log_unreadable,omitempty"` // why no log could be read
	// LogFile: the log is a file the user gave (`mem --kernel-log`),
	// maybe of another host or boot: its raw stamps (time since that
	// boot) get no wall time, and this host's counters below do not
	// count its kills.
	LogFile bool      `json:"log_file,omitempty"`
	Kills   []OOMKill `json:"kills"`
	// VMStatOOMKills is /proc/vmstat oom_kill: kills since boot (4.13+);
	// nil when the kernel lacks it.
	VMStatOOMKills *uint64       `json:"vmstat_oom_kill,omitempty"`
	CgroupOOMKills []CgroupCount `json:"cgroup_oom_kills,omitempty"` // cgroups whose oom_kill counter is not zero
}

// CgroupCount is one cgroup's OOM kill counter.
type CgroupCount struct {
	Path     string `json:"path"`
	Version  int    `json:"version"`
	OOMKills uint64 `json:"oom_kills"`
}

// KernelLog is the OOM part of a report as read by the caller: which log
// was read and what it held, or why none could be.
type KernelLog struct {
	Source     string
	Kills      []OOMKill
	Unreadable string
	File       bool // a file the user gave (OOMReport.LogFile)
}

// Build assembles a Report from two pressure snapshots (prev may equal cur
// when no interval was measured) and the other reads. It is pure.
func Build(now time.Time, prev, cur Snapshot, h Host, procs []Proc, scan ProcScan, cgs []Cgroup, log KernelLog) Report {
	r := Report{
		Time: now, Host: h, PSI: cur.PSI,
		Activity: NewActivity(prev, cur),
		Procs:    procs, ProcScan: scan, Cgroups: cgs,
	}
	if r.Procs == nil {
		r.Procs = []Proc{}
	}
	if r.Cgroups == nil {
		r.Cgroups = []Cgroup{}
	}
	r.Verdict = assess(h, r.Activity)
	r.Kernel, r.SuspectPSI = cur.Kernel, suspectPSI(prev, cur)
	r.OOM = OOMReport{LogSource: log.Source, LogUnreadable: log.Unreadable, Kills: log.Kills, LogFile: log.File}
	if r.OOM.Kills == nil {
		r.OOM.Kills = []OOMKill{}
	}
	if cur.VMStat != nil && cur.VMStat.OOMKill != nil {
		v := *cur.VMStat.OOMKill
		r.OOM.VMStatOOMKills = &v
	}
	for _, c := range cgs {
		if c.OOMKills != nil && *c.OOMKills > 0 {
			r.OOM.CgroupOOMKills = append(r.OOM.CgroupOOMKills, CgroupCount{c.Path, c.Version, *c.OOMKills})
		}
	}
	return r
}

// suspectPSI checks the memory PSI of the two reads for contradictions:
// since boot, and between them (a stall without activity over the whole
// interval counts).
func suspectPSI(prev, cur Snapshot) []signal.PSISuspect {
	dt := cur.Time.Sub(prev.Time)
	chk := signal.NewPSICheck(signal.PSICheckOptions{MinStall: dt})
	for i, s := range []Snapshot{prev, cur} {
		if s.PSI == nil || (i == 1 && dt <= 0) {
			continue // no PSI, or one read (--interval 0)
		}
		chk.Add(s.Time, &psi.Snapshot{Memory: s.PSI}, s.VMStat)
	}
	return chk.Findings()
}

// BootTime reads btime of /proc/stat: the wall time of boot, which turns
// kernel log timestamps into times.
func (c *Collector) BootTime() (time.Time, error) {
	if err := rootfs.Check(filepath.Join(c.root, "proc"), "stat"); err != nil {
		return time.Time{}, err
	}
	st, err := c.fs.Stat()
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", filepath.Join(c.root, "proc/stat"), err)
	}
	return time.Unix(int64(st.BootTime), 0).UTC(), nil
}

// KmsgPath is <root>/dev/kmsg.
func (c *Collector) KmsgPath() string { return filepath.Join(c.root, "dev/kmsg") }
