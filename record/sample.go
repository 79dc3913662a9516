// Package record defines the Sample that collectors fill once per interval,
// the JSON Lines recording that `memdiag watch` writes and every other
// command reads, and the Sampler that drives the collectors.
//
// A recording is JSON Lines (https://jsonlines.org): the first line is the
// [Header] ("type":"header"), then one [Sample] per line ("type":"sample"),
// and, when the recorder ended cleanly, an [End] line ("type":"end").
// Every line is written and flushed to the kernel as soon as it exists, so
// a SIGKILL loses nothing already sampled; a file ending in ".gz" is gzip
// compressed with a sync flush after every line. docs/recording.md documents
// the schema.
package record

import "time"

// SchemaVersion is the version of the recording format written by this
// build. Readers accept recordings of this version and older ones.
//
// Version 2 (2026-12-06) adds the victim (Header.Victim), the page-cache
// chain traced with eBPF (Sample.Chain) and the RSS holders' cgroups
// (ProcRSS.Cgroup). Every path of version 1 is kept (testdata/v1); a
// memdiag that reads only version 1 refuses version 2 and says to
// upgrade, rather than ignore the chain and credit by correlation what
// the chain refutes.
const SchemaVersion = 2

// FormatName is the value of Header.Format.
const FormatName = "memdiag-recording"

// Line types.
const (
	TypeHeader = "header"
	TypeSample = "sample"
	TypeEnd    = "end"
	TypeGap    = "gap" // a stretch without the samples the interval asks for: [Gap]
)

// CollectorStatus says whether a collector could run on this host, and if
// not, why and what to do.
type CollectorStatus struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// Header is the first line of a recording.
type Header struct {
	Type           string              `json:"type"`           // "header"
	Format         string              `json:"format"`         // "memdiag-recording"
	SchemaVersion  int                 `json:"schema_version"` // SchemaVersion
	MemdiagVersion string              `json:"memdiag_version"`
	Host           string              `json:"host"`
	Kernel         string              `json:"kernel"` // uname release
	BootTime       time.Time           `json:"boot_time"`
	Start          time.Time           `json:"start"`
	Interval       time.Duration       `json:"interval_ns"`
	TimeZone       string              `json:"time_zone"`      // IANA name of the host's local zone, "" if unknown
	UTCOffset      int                 `json:"utc_offset_s"`   // the local zone's offset at Start
	PageSize       int                 `json:"page_size"`      // bytes; converts *_pages counters
	ClockTicks     int                 `json:"clock_ticks"`    // USER_HZ; converts *_ticks fields
	Root           string              `json:"root,omitempty"` // filesystem root the collectors read, "/" normally
	Cgroup         string              `json:"cgroup,omitempty"`
	Command        []string            `json:"command,omitempty"`      // the command watch wrapped (after --)
	CommandStart   time.Time           `json:"command_start,omitzero"` // when watch started Command (just before its exec); anchors hey's offsets
	Probe          string              `json:"probe,omitempty"`        // --probe URL
	LatencyFile    string              `json:"latency_file,omitempty"` // --latency file
	Collectors     []CollectorStatus   `json:"collectors"`
	Swaps          []SwapDevice        `json:"swaps,omitempty"`
	VMStatMapping  map[string][]string `json:"vmstat_mapping,omitempty"` // which /proc/vmstat counters feed each vmstat field on this kernel
	Jobs           []Job               `json:"jobs,omitempty"`           // periodic jobs on the host at Start
	TopN           int                 `json:"top_n"`
	DelayAcct      *bool               `json:"task_delayacct,omitempty"` // kernel.task_delayacct at Start
	// ProcIOAccounting is the per-process I/O accounting of the recorder
	// (ProcIOAccountingThreads, ProcIOAccountingDepth or 0). 0, recordings made before it: a
	// ProcIO's DeltaReaped*Bytes may hold the I/O of a grandchild that
	// exited between the same two scans as its parent, both seen alive
	// and started within one clock tick (the old scanner took it off in
	// start-time order); package correlate takes it off then.
	ProcIOAccounting int `json:"proc_io_accounting,omitempty"`
	// Victim is whose latency the recording explains: the service behind
	// --probe, behind a followed load-test file's target, or given with
	// --victim; nil when none was found (Collectors says why) and in
	// recordings made before it was added.
	Victim *Victim `json:"victim,omitempty"`
	// CgroupLimit is the memory cgroup whose limit bounds the Cgroup
	// scope's memory (its own group or the nearest ancestor with a limit:
	// v1 memory.limit_in_bytes on a hybrid host, v2 memory.max), ""
	// when none has one or Cgroup is not under the cgroup2 mount;
	// CgroupLimitBytes that limit. Added within version 2 (absent before
	// it, and without --cgroup).
	CgroupLimit      string `json:"cgroup_limit,omitempty"`
	CgroupLimitBytes uint64 `json:"cgroup_limit_bytes,omitempty"`
}

// MemoryLimit is a memory cgroup with a memory limit: its group path
// ("/a/b", as /proc/PID/cgroup gives it) and the limit in bytes (v1
// memory.limit_in_bytes, v2 memory.max).
type MemoryLimit struct {
	Group string `json:"group"`
	Bytes uint64 `json:"bytes"`
}

// Domain is the group whose descendants compete with the victim for
// memory: the outermost group with a memory limit above it (the last
// of OuterLimits, else Limit), "" when none has one (only host-wide
// reclaim reaches it).
func (v *Victim) Domain() string {
	if n := len(v.OuterLimits); n > 0 {
		return v.OuterLimits[n-1].Group
	}
	return v.Limit
}

// How a victim was found, Victim.How.
const (
	VictimFromProbe   = "probe"   // the process listening behind --probe's local address
	VictimFromLatency = "latency" // the process listening behind a followed load-test file's target
	VictimFromCommand = "command" // the process listening behind the URL in the wrapped command's arguments
	VictimGiven       = "given"   // --victim PID|UNIT|CGROUP
)

// Victim is the service whose latency a recording explains, and where
// its own stall and memory are read: its cgroup v2 group's *.pressure
// (recorded as Header.Cgroup / Sample.CgroupPSI) and its memory cgroup's
// counters (Sample.CgroupVMStat).
type Victim struct {
	PID    int    `json:"pid,omitempty"` // the main process; 0 when given as a unit or cgroup
	Comm   string `json:"comm,omitempty"`
	Exe    string `json:"exe,omitempty"`
	How    string `json:"how"`              // VictimFromProbe, VictimFromLatency, VictimFromCommand, VictimGiven
	Detail string `json:"detail,omitempty"` // how, in words: "127.0.0.1:8080 is a listening socket of pid 4242"
	Unit   string `json:"unit,omitempty"`   // its systemd unit, from its cgroup path
	Cgroup string `json:"cgroup,omitempty"` // its cgroup v2 (unified) group, the path /proc/PID/cgroup gives ("/a/b.service")
	Memcg  string `json:"memcg,omitempty"`  // its memory cgroup (v1 memory controller on a hybrid host; the v2 group on pure v2)
	// Limit is the memory cgroup whose limit bounds the victim's memory:
	// its own group or the nearest ancestor with a memory limit (v1
	// memory.limit_in_bytes, v2 memory.max), "" when none has one (only
	// host-wide reclaim reaches it); LimitBytes that limit. Every group
	// under Limit competes with the victim for the same memory.
	Limit      string `json:"limit,omitempty"`
	LimitBytes uint64 `json:"limit_bytes,omitempty"`
	// OuterLimits are the groups above Limit that have a memory limit
	// too, nearest first: a node's (Kubernetes' kubepods, a systemd
	// machine.slice with MemoryMax=) holding the victim's slice. Each
	// one's reclaim takes the victim's pages when every group under it
	// fills it, while Limit's own may never be reached, so the groups
	// under the last of them compete with the victim as well. Absent
	// when none has one, and in recordings made before it was added
	// (within version 2).
	OuterLimits []MemoryLimit `json:"outer_limits,omitempty"`
	// CgroupDir and MemcgDir are the directories those are read from
	// (under --root); "" when the group's directory was not found.
	CgroupDir string `json:"cgroup_dir,omitempty"`
	MemcgDir  string `json:"memcg_dir,omitempty"`
	// MemcgVersion is the cgroup version of MemcgDir: 1 (the v1 memory
	// controller, hybrid hosts), 2, or 0 when MemcgDir is "".
	MemcgVersion int `json:"memcg_version,omitempty"`
	// Holders is how many processes hold the listening socket (a
	// prefork server's workers share it); PID is the one whose parent
	// holds none. 0 when not found from a socket.
	Holders int `json:"holders,omitempty"`
}

// ProcIOAccountingDepth: the diskio scanner takes exited processes'
// totals off their parents children first by ancestry, so a reaped delta
// holds no recorded descendant's I/O.
const ProcIOAccountingDepth = 1

// ProcIOAccountingThreads: besides ProcIOAccountingDepth, a
// single-threaded process's exited threads' I/O is its own (in
// ProcIO.Delta*Bytes and its cumulative and exit totals) whenever it
// reaped no child in the interval; DeltaReaped*Bytes then holds I/O
// only from intervals in which it reaped a child (its children's, or its
// exited threads' too: /proc cannot tell them apart). Before it, a
// threaded server's exited request threads' I/O was DeltaReaped*Bytes,
// and its exit total (taskstats sums every thread) held it a second
// time beyond its cumulative totals.
const ProcIOAccountingThreads = 2

// Sample is one interval's reading of every collector. Counters are
// cumulative as the kernel reports them; rates come from the difference
// of two samples (see Rates), so any later analysis can re-derive them.
type Sample struct {
	Type      string     `json:"type"` // "sample"
	Seq       int        `json:"seq"`
	Time      time.Time  `json:"time"`
	PSI       *PSI       `json:"psi,omitempty"`        // host, /proc/pressure/*
	CgroupPSI *PSI       `json:"cgroup_psi,omitempty"` // the --cgroup group's *.pressure
	Meminfo   *Meminfo   `json:"meminfo,omitempty"`
	VMStat    *VMStat    `json:"vmstat,omitempty"`
	Disks     []Disk     `json:"disks,omitempty"`
	Procs     []ProcIO   `json:"procs,omitempty"`  // top N by I/O in the interval
	Events    []Event    `json:"events,omitempty"` // processes started/exited since the previous sample
	Scan      *ScanStats `json:"scan,omitempty"`
	// Latency summarises the requests (probe or --latency file) that
	// completed since the previous sample.
	Latency *Latency `json:"latency,omitempty"`
	// EventStats accounts for the process events of the interval (the
	// connector's drops are counted exactly); nil when polling only.
	EventStats *EventStats `json:"event_stats,omitempty"`
	// Onsets are the stall thresholds crossed since the previous sample.
	Onsets []StallOnset `json:"onsets,omitempty"`
	// RSS is the top N processes by RSS, then every process whose RSS
	// is growing (diskio.ProcScanner.RSS): anon/file/shmem;
	// memstate.GrowthSeries fits them.
	RSS []ProcRSS `json:"rss,omitempty"`
	// RSSLeftOut is how many growth candidates RSS leaves out: more
	// processes were growing than the scanner records per sample
	// (diskio.ProcScanOptions.MaxGrowth); each is recorded in turn, in
	// fewer samples. Absent (0) when none was left out, and in
	// recordings made before it was added.
	RSSLeftOut int `json:"rss_left_out,omitempty"`
	// Retention is the allocator evidence of the processes that became
	// growth candidates in this interval, read once per process
	// (memstate.Collector.RetentionOf); analyze attaches it to their
	// growth findings. Absent from recordings before it was added.
	Retention []ProcRetention `json:"retention,omitempty"`
	Errors    []string        `json:"errors,omitempty"` // collectors that failed this time, "name: error"

	// CgroupVMStat holds the --cgroup group's counters with the meanings of
	// VMStat, from cgroup v2 <group>/memory.stat and memory.events
	// (oom_kill); nil when no group was given, and a nil field where the
	// group or kernel lacks that counter (no v2 memory controller, older
	// kernel).
	CgroupVMStat *VMStat `json:"cgroup_vmstat,omitempty"`

	// OOMKills are the processes the kernel's OOM killer killed since the
	// previous sample, read from the kernel log (/dev/kmsg, parsed by
	// memstate.ParseKernelLogWith, as `memdiag mem` does) when
	// /proc/vmstat oom_kill rose; absent when none, when the log was
	// unreadable (Errors says why) and in recordings made before it was
	// added.
	OOMKills []OOMVictim `json:"oom_kills,omitempty"`

	// Chain is the page-cache chain of the interval traced with eBPF
	// (who filled the cache, whose pages reclaim took, who stalled and
	// who refaulted); nil when not traced. Schema version 2.
	Chain *Chain `json:"chain,omitempty"`

	// Gap is the gap this sample ends: the samples due before it that
	// were not taken or not written, or its own lateness. It is not part
	// of the sample's line: the Writer writes it as a line of its own
	// ("type":"gap") just before the sample's, and the Reader puts it
	// back on the sample that follows it. nil when the sample came on
	// time.
	Gap *Gap `json:"-"`

	// VictimDelay is the victim process's delay accounting, cumulative,
	// summed over its threads (taskstats by TGID); nil when there is no
	// victim process, when kernel.task_delayacct is 0 (the header's
	// "victim-delay" collector says so) and in recordings made before it
	// was added.
	VictimDelay *TaskDelays `json:"victim_delay,omitempty"`
}

// TaskDelays is a process's delay accounting summed over its threads,
// live and exited, from struct taskstats (TASKSTATS_CMD_GET by TGID;
// include/uapi/linux/taskstats.h, Documentation/accounting/
// delay-accounting.rst). Totals are cumulative nanoseconds waited since
// the threads started, counted only while kernel.task_delayacct is 1.
type TaskDelays struct {
	PID int `json:"pid"`
	// ReclaimNS is freepages_delay_total: waiting in direct reclaim.
	ReclaimNS uint64 `json:"reclaim_ns"`
	// ThrashingNS is thrashing_delay_total: waiting for a recently
	// evicted page to be read back (a workingset refault).
	ThrashingNS uint64 `json:"thrashing_ns"`
	// SwapinNS is swapin_delay_total: waiting for pages read from swap.
	SwapinNS uint64 `json:"swapin_ns"`
	// CompactNS is compact_delay_total: waiting in memory compaction.
	CompactNS uint64 `json:"compact_ns"`
	// BlkioNS is blkio_delay_total: waiting for synchronous block I/O.
	BlkioNS uint64 `json:"blkio_ns"`
}

// MemoryNS is the time the threads waited on memory: reclaim, thrashing,
// swap-in and compaction.
func (d *TaskDelays) MemoryNS() uint64 {
	return d.ReclaimNS + d.ThrashingNS + d.SwapinNS + d.CompactNS
}

// OOMVictim is one process killed by the OOM killer, from the kernel's
// report of the kill (mm/oom_kill.c __oom_kill_process, dump_header;
// https://docs.kernel.org/admin-guide/mm/concepts.html#oom-killer).
type OOMVictim struct {
	Time time.Time `json:"time"` // boot time + the log's stamp
	PID  int       `json:"pid"`
	Comm string    `json:"comm"`
	// Cgroup is the victim's memory cgroup (task_memcg=, relative to the
	// memory controller's root, as /proc/PID/cgroup gives it); OOMCgroup
	// the cgroup whose limit was hit (oom_memcg=); "" when the log's form
	// lacks them (before 4.19).
	Cgroup    string `json:"cgroup,omitempty"`
	OOMCgroup string `json:"oom_cgroup,omitempty"`
	// Constraint is what ran out: "memcg" (a cgroup's limit), "global",
	// "cpuset", "mempolicy", "" when the log does not say.
	Constraint string `json:"constraint,omitempty"`
}

// StallOnset is the moment stall time crossed a threshold within a moving
// window (a PSI trigger, or memdiag's 50 ms polling where the kernel does
// not permit one), with the processes seen at that moment.
type StallOnset struct {
	Time     time.Time     `json:"time"`
	Scope    string        `json:"scope"`    // "host" or the cgroup directory
	Resource string        `json:"resource"` // "memory"
	Kind     string        `json:"kind"`     // "some" or "full"
	Stall    time.Duration `json:"stall_ns"` // threshold
	Window   time.Duration `json:"window_ns"`
	Mode     string        `json:"mode"` // "trigger" or "poll"
	// Procs are the processes at the onset: the cgroup's members for a
	// cgroup scope, the host's tasks in uninterruptible sleep (D: waiting
	// on reclaim or I/O) for the host, most I/O first, with cumulative I/O.
	Procs []ProcIO `json:"procs,omitempty"`
}

// End is the last line of a cleanly ended recording.
type End struct {
	Type    string    `json:"type"` // "end"
	Time    time.Time `json:"time"`
	Samples int       `json:"samples"`
	Reason  string    `json:"reason"` // "duration", "signal: interrupt", "command exited: 0", ...
	// AB is what ab's standard output counted when the command watch ran
	// was ab (latency.ParseABSummary of its last 64 KiB): its failed and
	// non-2xx requests, which its -g file cannot hold. nil otherwise, and
	// in recordings made before it was added.
	AB *ABReport `json:"ab,omitempty"`
}
