package memstate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// OOMKill is one process the kernel's OOM killer killed, as told by the
// kernel log. Sources: the messages of mm/oom_kill.c (dump_header,
// __oom_kill_process); their format changed over time, see
// [ParseKernelLog].
type OOMKill struct {
	// SinceBoot is the log timestamp (time since boot); Time is boot time
	// (/proc/stat btime) plus SinceBoot, zero if the boot time is unknown.
	// The log's clock stops while the machine is suspended, so after a
	// suspend Time is early by the time spent suspended.
	SinceBoot time.Duration `json:"since_boot_ns"`
	Time      time.Time     `json:"time,omitzero"`

	PID  int    `json:"pid"`
	Comm string `json:"comm"`          // task name, 15 characters at most
	UID  *int   `json:"uid,omitempty"` // from the oom-kill: line or "UID:" (since 5.x)

	TotalVMBytes  uint64 `json:"total_vm_bytes"`
	AnonRSSBytes  uint64 `json:"anon_rss_bytes"`
	FileRSSBytes  uint64 `json:"file_rss_bytes"`
	ShmemRSSBytes uint64 `json:"shmem_rss_bytes"` // since 4.5; 0 before

	// Constraint is what ran out: "memcg" (a cgroup's limit), "global"
	// (the whole host), "cpuset", "mempolicy", or "" when the log does not
	// say. ConstraintRaw is the kernel's word (CONSTRAINT_MEMCG, …).
	Constraint    string `json:"constraint"`
	ConstraintRaw string `json:"constraint_raw,omitempty"`
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
}

var (
	// dmesg, syslog(2) and journalctl -o short-monotonic: "<3>[  523.181986] …",
	// "[  523.181986] host kernel: …".
	bracketLine = regexp.MustCompile(`^(?:<\d+>)?\[\s*(\d+)\.(\d+)\]\s?(.*)$`)

	// Since 4.19 (mm/oom_kill.c dump_oom_summary):
	// "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/x,task_memcg=/x,task=hog,pid=13919,uid=0".
	oomKillLine = regexp.MustCompile(`oom-kill:(constraint=\S*?),task=(.*),pid=(\d+),uid=(\d+)\s*$`)
	// "Killed process 13919 (hog) total-vm:1292960kB, anon-rss:32384kB, file-rss:1660kB, shmem-rss:0kB, UID:0 pgtables:160kB oom_score_adj:0"
	// shmem-rss since 4.5, the "Out of memory: "/"Memory cgroup out of memory: "
	// prefix and UID/pgtables/oom_score_adj since 5.1.
	// RHEL 7's 3.10 kernels put the UID before total-vm:
	// "Killed process 1234 (java), UID 0, total-vm:…kB, anon-rss:…".
	killedLine = regexp.MustCompile(`(?:(Memory cgroup out of memory|Out of memory(?: \(oom_kill_allocating_task\))?): )?Killed process (\d+) \((.*)\)(?:, UID (\d+),)? total-vm:(\d+)kB, anon-rss:(\d+)kB, file-rss:(\d+)kB(?:, shmem-rss:(\d+)kB)?(?:, UID:(\d+))?`)
	// Before 5.1: "Memory cgroup out of memory: Kill process 1234 (hog) score 1000 or sacrifice child".
	killLine = regexp.MustCompile(`(Memory cgroup out of memory|Out of memory): Kill process (\d+) \(`)
	// Before 4.19, memcg only: "Task in /a killed as a result of limit of /b".
	taskInLine = regexp.MustCompile(`Task in (\S+) killed as a result of limit of (\S+)`)
	// memcg OOMs, every version: "memory: usage 32768kB, limit 32768kB, failcnt 204".
	memUsageLine = regexp.MustCompile(`^memory: usage (\d+)kB, limit (\d+)kB, failcnt \d+`)
)

// ParseKernelLog finds the OOM kills in kernel log text: /dev/kmsg records
// ("prio,seq,usec,flags;message", continuation lines starting with a space
// are skipped), or dmesg/journalctl -o short-monotonic lines ("[secs.usec]
// message"). It understands both generations of the OOM report:
//
//   - since 5.1 (with 4.19's oom-kill: summary before it):
//     "oom-kill:constraint=CONSTRAINT_MEMCG,…,oom_memcg=/a,task_memcg=/a,task=NAME,pid=N,uid=U"
//     then "Memory cgroup out of memory: Killed process N (NAME) total-vm:…kB,
//     anon-rss:…kB, file-rss:…kB, shmem-rss:…kB, UID:U pgtables:…kB oom_score_adj:…";
//   - before: "Memory cgroup out of memory: Kill process N (NAME) score S or
//     sacrifice child" (or "Out of memory: …" for a global OOM), "Task in /a
//     killed as a result of limit of /b" for a memcg, then "Killed process N
//     (NAME) total-vm:…kB, anon-rss:…kB, file-rss:…kB[, shmem-rss:…kB]".
//
// boot is the wall time of boot (/proc/stat btime) used to set Time; zero
// leaves Time zero. name is used in error messages only.
func ParseKernelLog(r io.Reader, name string, boot time.Time) ([]OOMKill, error) {
	type pending struct {
		constraint, raw, oomCg, taskCg string
		uid                            *int
	}
	byPID := map[int]*pending{}
	var taskIn *[2]string
	var last *pending   // the report a "Kill process" line opened
	var usage [2]uint64 // the last "memory: usage, limit" of a memcg report
	var kills []OOMKill
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // /dev/kmsg dictionary ("SUBSYSTEM=…")
		}
		var ts time.Duration
		msg := line
		if hdr, text, ok := strings.Cut(line, ";"); ok && kmsgHeader(hdr) {
			f := strings.Split(hdr, ",")
			us, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return kills, fmt.Errorf("%s:%d: %w: %q", name, n, ErrParse, line)
			}
			ts, msg = time.Duration(us)*time.Microsecond, text
		} else if m := bracketLine.FindStringSubmatch(line); m != nil {
			sec, err1 := strconv.ParseInt(m[1], 10, 64)
			frac := (m[2] + "000000000")[:9]
			ns, err2 := strconv.ParseInt(frac, 10, 64)
			if err1 != nil || err2 != nil {
				return kills, fmt.Errorf("%s:%d: %w: %q", name, n, ErrParse, line)
			}
			ts, msg = time.Duration(sec)*time.Second+time.Duration(ns), m[3]
		}
		if m := memUsageLine.FindStringSubmatch(msg); m != nil {
			usage = [2]uint64{kib(m[1]), kib(m[2])}
			continue
		}
		if !strings.Contains(msg, "ill") && !strings.Contains(msg, "Task in ") {
			continue // not one of the lines below (all but "Task in" say kill/Killed)
		}
		if m := oomKillLine.FindStringSubmatch(msg); m != nil {
			pid, _ := strconv.Atoi(m[3])
			uid, _ := strconv.Atoi(m[4])
			p := &pending{uid: &uid}
			for _, kv := range strings.Split(m[1], ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "constraint":
					p.raw = v
					p.constraint = constraintName(v)
				case "oom_memcg":
					p.oomCg = v
				case "task_memcg":
					p.taskCg = v
				}
			}
			byPID[pid] = p
			continue
		}
		if m := taskInLine.FindStringSubmatch(msg); m != nil {
			taskIn = &[2]string{m[1], m[2]}
			continue
		}
		if m := killLine.FindStringSubmatch(msg); m != nil {
			pid, _ := strconv.Atoi(m[2])
			p := byPID[pid]
			if p == nil {
				p = &pending{}
				byPID[pid] = p
			}
			if p.constraint == "" {
				p.constraint = prefixConstraint(m[1])
			}
			if taskIn != nil && p.constraint == "memcg" {
				p.taskCg, p.oomCg = taskIn[0], taskIn[1]
				taskIn = nil
			}
			last = p
			continue
		}
		m := killedLine.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		k := OOMKill{SinceBoot: ts, Comm: m[3]}
		var err error
		if k.PID, err = strconv.Atoi(m[2]); err != nil || k.PID <= 0 {
			continue // no kernel kills PID 0 or one past int: not a kill line
		}
		k.TotalVMBytes = kib(m[5])
		k.AnonRSSBytes = kib(m[6])
		k.FileRSSBytes = kib(m[7])
		k.ShmemRSSBytes = kib(m[8])
		for _, u := range []string{m[4], m[9]} {
			if u != "" {
				uid, _ := strconv.Atoi(u)
				k.UID = &uid
			}
		}
		p := byPID[k.PID]
		if p == nil {
			// Before 4.19 the killer could "sacrifice" a child: "Kill
			// process 10 (a) … or sacrifice child" then "Killed process 11
			// (a)"; the report is the last one opened.
			p = last
		}
		if p != nil {
			k.Constraint, k.ConstraintRaw, k.OOMCgroup, k.TaskCgroup = p.constraint, p.raw, p.oomCg, p.taskCg
			if k.UID == nil {
				k.UID = p.uid
			}
			for pid, q := range byPID {
				if q == p {
					delete(byPID, pid)
				}
			}
		}
		last = nil
		if k.Constraint == "" {
			k.Constraint = prefixConstraint(m[1])
		}
		if k.Constraint == "memcg" && k.OOMCgroup == "" && taskIn != nil {
			k.TaskCgroup, k.OOMCgroup = taskIn[0], taskIn[1]
		}
		if k.Constraint == "memcg" {
			k.CgroupUsageBytes, k.CgroupLimitBytes = usage[0], usage[1]
		}
		usage = [2]uint64{}
		taskIn = nil
		if !boot.IsZero() {
			k.Time = boot.Add(ts)
		}
		kills = append(kills, k)
	}
	if err := sc.Err(); err != nil {
		return kills, fmt.Errorf("%s: %w", name, err)
	}
	return kills, nil
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

// kib converts a "…kB" figure (KiB) to bytes; "" is 0.
func kib(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v * 1024
}

// ReadKmsg reads every record of the kernel ring buffer from path
// (/dev/kmsg) without blocking: it opens it O_RDONLY|O_NONBLOCK and reads
// one record per read(2) until EAGAIN, skipping records overwritten while
// reading (EPIPE). A regular file (a fixture) is read to its end. Reading
// /dev/kmsg needs CAP_SYSLOG when kernel.dmesg_restrict=1.
// Source: https://docs.kernel.org/admin-guide/abi-testing.html#abi-dev-kmsg
func ReadKmsg(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd := int(f.Fd()) // f.Fd puts the file in blocking mode; O_NONBLOCK stays on the open file
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 16*1024)
	for {
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
	}
}
