package memstate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// OOMKill is one process the kernel's OOM killer killed, with the report
// the kernel wrote before killing it. Sources: the messages of
// mm/oom_kill.c (dump_header, dump_tasks, dump_oom_summary,
// __oom_kill_process), mm/memcontrol.c (mem_cgroup_print_oom_meminfo)
// and mm/show_mem.c (the Mem-Info summary of a global OOM); their
// format changed over time, see [ParseKernelLogWith].
type OOMKill struct {
	// SinceBoot is the log's stamp (time since boot; 0 when the log form
	// has none). Time is the wall time of the kill: the log's own when it
	// carries one (dmesg -T, journalctl -k, syslog; TimeFromLog), else
	// boot time (/proc/stat btime) plus SinceBoot, zero if neither is
	// known. The kernel's stamp stops while the machine is suspended, so
	// after a suspend boot + stamp (and dmesg -T, which computes the same)
	// is early by the time spent suspended.
	SinceBoot   time.Duration `json:"since_boot_ns"`
	Time        time.Time     `json:"time,omitzero"`
	TimeFromLog bool          `json:"time_from_log,omitempty"`

	PID  int    `json:"pid"`
	Comm string `json:"comm"`          // task name, 15 characters at most
	UID  *int   `json:"uid,omitempty"` // from the oom-kill: line or "UID:" (since 5.x)

	TotalVMBytes  uint64 `json:"total_vm_bytes"`
	AnonRSSBytes  uint64 `json:"anon_rss_bytes"`
	FileRSSBytes  uint64 `json:"file_rss_bytes"`
	ShmemRSSBytes uint64 `json:"shmem_rss_bytes"` // since 4.5; 0 before

	// Trigger is the allocation that invoked the OOM killer (not the
	// victim): "<comm> invoked oom-killer: gfp_mask=…, order=…,
	// oom_score_adj=…" and the "CPU: … PID: …" line after it.
	Trigger *OOMTrigger `json:"trigger,omitempty"`

	// Constraint is what ran out: "memcg" (a cgroup's limit), "global"
	// (the whole host), "cpuset", "mempolicy", or "" when the log does not
	// say. ConstraintRaw is the kernel's word (CONSTRAINT_MEMCG, …).
	Constraint    string `json:"constraint"`
	ConstraintRaw string `json:"constraint_raw,omitempty"`
	// Cpuset and MemsAllowed are the triggering task's, from the oom-kill:
	// line (4.19+) or "<comm> cpuset=… mems_allowed=…" (before).
	Cpuset      string `json:"cpuset,omitempty"`
	MemsAllowed string `json:"mems_allowed,omitempty"`
	// OOMCgroup is the cgroup whose limit was hit (oom_memcg=, or "limit of"
	// in 4.x's "Task in … killed as a result of limit of …"); TaskCgroup the
	// killed task's own cgroup.
	OOMCgroup  string `json:"oom_cgroup,omitempty"`
	TaskCgroup string `json:"task_cgroup,omitempty"`
	// CgroupUsageBytes and CgroupLimitBytes are the limited group's memory
	// usage and limit at the kill, from the report's "memory: usage %lukB,
	// limit %lukB, failcnt %lu" line (mem_cgroup_print_oom_meminfo); 0 for
	// a global OOM. anon-rss + file-rss can exceed the limit: file-rss
	// counts shared files charged to other groups.
	CgroupUsageBytes uint64 `json:"cgroup_usage_bytes,omitempty"`
	CgroupLimitBytes uint64 `json:"cgroup_limit_bytes,omitempty"`
	// CgroupSwapCounter is the report's swap line: "memory+swap" (v1:
	// memory and swap together against memory.memsw.limit_in_bytes) or
	// "swap" (v2: swap alone against memory.swap.max); "" without one.
	// Usage and limit are that line's; a limit of PAGE_COUNTER_MAX
	// (9007199254740988 kB with 4 KiB pages) is no limit: nil.
	CgroupSwapCounter    string  `json:"cgroup_swap_counter,omitempty"`
	CgroupSwapUsageBytes *uint64 `json:"cgroup_swap_usage_bytes,omitempty"`
	CgroupSwapLimitBytes *uint64 `json:"cgroup_swap_limit_bytes,omitempty"`
	// CgroupStats are the "Memory cgroup stats for <path>:" blocks, in
	// bytes (4.x prints "key:valueKB" pairs on one line, one line per
	// group of the subtree; 5.x+ v1 and v2 print memory.stat's lines).
	CgroupStats []OOMCgroupStats `json:"cgroup_stats,omitempty"`
	// AtKill is what the limited group (memcg) or the host (global,
	// cpuset: the Mem-Info "Node N …" lines summed over nodes) held.
	AtKill *OOMMemory `json:"at_kill,omitempty"`

	// Tasks is the report's task table ("Tasks state (memory values in
	// pages)"), converted to bytes with PageSizeBytes: the victim (Victim
	// true) and every other task the killer considered.
	Tasks []OOMTask `json:"tasks,omitempty"`
	// PageSizeBytes is the page size of the machine that wrote the log,
	// as PageSizeFrom says: the victim's rss pages in the table against
	// anon-rss + file-rss + shmem-rss of the kill line (both printed at the
	// kill), or assumed.
	PageSizeBytes uint64 `json:"page_size_bytes,omitempty"`
	PageSizeFrom  string `json:"page_size_from,omitempty"`

	// Cause is one line saying what filled the memory that ran out, from
	// the figures above ("anon overrun in /x: 255.0 MiB of 256.0 MiB anon,
	// no cache left, swap full"), or what the report lacks to say it.
	Cause string `json:"cause,omitempty"`
}

// OOMTrigger is the allocation that invoked the OOM killer.
type OOMTrigger struct {
	Comm        string `json:"comm"`
	PID         int    `json:"pid,omitempty"` // from "CPU: n PID: p Comm: …": the task's own ID, a thread's in a multi-threaded process
	GFPMask     string `json:"gfp_mask"`      // "0xcc0(GFP_KERNEL)"
	Order       int    `json:"order"`         // 2^order pages were asked for
	OOMScoreAdj int    `json:"oom_score_adj"`
}

// OOMCgroupStats is one "Memory cgroup stats for" block: memory.stat's
// fields as printed (sizes in bytes, pg* fields event counts), 4.x's
// "key:valueKB" pairs converted to bytes.
type OOMCgroupStats struct {
	Path   string            `json:"path"`
	Values map[string]uint64 `json:"values"`
}

// OOMMemory is what the memory that ran out held at the kill, in bytes;
// nil fields were not in the report.
type OOMMemory struct {
	AnonBytes   *uint64 `json:"anon_bytes,omitempty"`
	FileBytes   *uint64 `json:"file_bytes,omitempty"`  // page cache, shmem included
	ShmemBytes  *uint64 `json:"shmem_bytes,omitempty"` // tmpfs, shared memory
	DirtyBytes  *uint64 `json:"dirty_bytes,omitempty"`
	KernelBytes *uint64 `json:"kernel_bytes,omitempty"` // v2 kernel, v1 kmem: usage
	SwapBytes   *uint64 `json:"swap_bytes,omitempty"`   // v1 total_swap; v2: the swap: line
	// Host only (global, cpuset): the RAM the kernel manages ("N pages
	// RAM" − "M pages reserved" of the Mem-Info summary), and swap from
	// "Free swap  = …kB" / "Total swap = …kB".
	RAMBytes       *uint64 `json:"ram_bytes,omitempty"`
	SwapFreeBytes  *uint64 `json:"swap_free_bytes,omitempty"`
	SwapTotalBytes *uint64 `json:"swap_total_bytes,omitempty"`
}

// OOMTask is one row of the report's task table, in bytes.
type OOMTask struct {
	PID    int    `json:"pid"`
	UID    int    `json:"uid"`
	TGID   int    `json:"tgid"`
	Name   string `json:"name"`
	Victim bool   `json:"victim,omitempty"`

	TotalVMBytes uint64 `json:"total_vm_bytes"`
	RSSBytes     uint64 `json:"rss_bytes"`
	// RSSAnonBytes, RSSFileBytes, RSSShmemBytes: the rss_anon, rss_file
	// and rss_shmem columns (6.x); nil before.
	RSSAnonBytes  *uint64 `json:"rss_anon_bytes,omitempty"`
	RSSFileBytes  *uint64 `json:"rss_file_bytes,omitempty"`
	RSSShmemBytes *uint64 `json:"rss_shmem_bytes,omitempty"`
	// PageTablesBytes: pgtables_bytes (4.15+, bytes) or nr_ptes pages.
	PageTablesBytes uint64 `json:"page_tables_bytes"`
	SwapBytes       uint64 `json:"swap_bytes"` // swapents pages
	OOMScoreAdj     int    `json:"oom_score_adj"`
}

// LogOptions say how to read times and pages in a kernel log.
type LogOptions struct {
	// Boot is the wall time of boot (/proc/stat btime) that turns since-
	// boot stamps into times; zero leaves Time zero for lines that carry
	// no wall time of their own.
	Boot time.Time
	// Loc is the zone of wall times printed without one (dmesg -T,
	// journalctl -k's default "short" form, syslog): the zone of the
	// machine that printed them. nil is time.Local.
	Loc *time.Location
	// Now dates syslog/journal lines, which have no year: the latest year
	// that does not put the line after Now. Zero is time.Now().
	Now time.Time
	// PageSize is the page size assumed when a report does not tell it
	// (no victim row in its task table); 0 is 4096.
	PageSize uint64
}

// kmsgHeader reports whether hdr is a /dev/kmsg record header,
// "prio,seq,usec,flags[,more]" as in 6.18's
// "3,533,523181986,-;Memory cgroup out of memory: Killed process …"
// (https://docs.kernel.org/admin-guide/abi-testing.html#abi-dev-kmsg).
func kmsgHeader(hdr string) bool {
	f := strings.Split(hdr, ",")
	if len(f) < 4 {
		return false
	}
	for _, x := range f[:3] {
		if x == "" || strings.Trim(x, "0123456789") != "" {
			return false
		}
	}
	return true
}

// constraintName maps the kernel's enum oom_constraint names.
func constraintName(raw string) string {
	switch raw {
	case "CONSTRAINT_NONE":
		return "global"
	case "CONSTRAINT_MEMCG":
		return "memcg"
	case "CONSTRAINT_CPUSET":
		return "cpuset"
	case "CONSTRAINT_MEMORY_POLICY":
		return "mempolicy"
	}
	return strings.ToLower(strings.TrimPrefix(raw, "CONSTRAINT_"))
}

// prefixConstraint reads the constraint from the message's prefix.
func prefixConstraint(prefix string) string {
	switch {
	case prefix == "Memory cgroup out of memory":
		return "memcg"
	case strings.HasPrefix(prefix, "Out of memory"):
		return "global"
	}
	return ""
}

// KmsgLimit bounds what ReadKmsg keeps: the kernel's ring buffer is at
// most 2^25 bytes (CONFIG_LOG_BUF_SHIFT ≤ 25, log_buf_len= likewise
// capped), so a device or file that gives more is not the kernel log.
const KmsgLimit = 64 << 20

// ReadKmsg reads every record of the kernel ring buffer from
// <root>/dev/kmsg, resolved inside root (package rootfs), without
// blocking: it opens it O_RDONLY|O_NONBLOCK and reads one record per
// read(2) until EAGAIN, skipping records overwritten while reading
// (EPIPE). A regular file (a fixture) is read to its end. Only a regular
// file or the kmsg device itself (character device 1:11) is read — a FIFO,
// a link to /dev/zero or a folder is refused — and no more than
// KmsgLimit bytes; the read stops once ctx is done. Reading /dev/kmsg
// needs CAP_SYSLOG when kernel.dmesg_restrict=1.
// Source: https://docs.kernel.org/admin-guide/abi-testing.html#abi-dev-kmsg
// and Documentation/admin-guide/devices.txt (1 char, minor 11 = /dev/kmsg).
func ReadKmsg(ctx context.Context, root string) ([]byte, error) {
	f, err := rootfs.OpenDevice(root, "dev/kmsg", 1, 11)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path := f.Name()
	fd := int(f.Fd()) // f.Fd puts the file in blocking mode; O_NONBLOCK stays on the open file
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 16*1024)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		n, err := syscall.Read(fd, buf)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			return out, nil
		case errors.Is(err, syscall.EPIPE):
			continue
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return out, fmt.Errorf("read %s: %w", path, err)
		case n == 0:
			return out, nil
		}
		out = append(out, buf[:n]...)
		if len(out) > KmsgLimit {
			return nil, fmt.Errorf("read %s: %w: over %d MiB, more than any kernel's ring buffer", path, rootfs.ErrTooLarge, KmsgLimit>>20)
		}
	}
}
