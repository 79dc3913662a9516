package memstate

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A kernel log line in any of the forms users paste, reduced to its
// message and its time: since boot (stamp) and/or on the wall clock.
type logLine struct {
	stamp    time.Duration
	hasStamp bool
	wall     time.Time
	msg      string
}

var (
	// dmesg, dmesg -r, syslog(2): "<3>[  523.181986] msg", "[  523.181986] msg".
	bracketLine = regexp.MustCompile(`^(?:<\d+>)?\[\s*(\d+)\.(\d+)\]\s?(.*)$`)
	// The same stamp inside another tool's line (a hypervisor's copy of the
	// guest console: "… Guest: <6>[39291577.009360] msg").
	bracketInside = regexp.MustCompile(`(?:^|\s)(?:<\d+>)?\[\s*(\d+)\.(\d+)\]\s?(.*)$`)
	// dmesg -T: "[Wed Jun 17 10:37:10 2020] msg".
	ctimeLine = regexp.MustCompile(`^\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\]\s?(.*)$`)
	// journalctl -k (short, short-precise), syslog, /var/log/kern.log:
	// "Nov 01 22:29:11 host kernel: msg", "May  1 21:13:05 host kernel: [ 4563.079551] msg".
	syslogLine = regexp.MustCompile(`^([A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2}(?:\.\d+)?) \S+ [^:\s]+(?:\[\d+\])?: ?(.*)$`)
	// journalctl -o short-iso / short-iso-precise: "2026-12-01T21:30:08+0000 host kernel: msg".
	isoLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) \S+ [^:\s]+(?:\[\d+\])?: ?(.*)$`)
	// journalctl -o short-monotonic after its stamp: "host kernel: msg".
	monoRest = regexp.MustCompile(`^\S+ kernel: ?(.*)$`)
	// dmesg -x: "kern  :err   : msg".
	decodePrefix = regexp.MustCompile(`^[a-z]+ *:[a-z]+ *: `)
)

// splitLine turns one line of text into log lines. prev is the last line
// read (continuation lines of a multi-line message take its time);
// kmsg says whether prev came from /dev/kmsg, whose lines starting with a
// space are dictionary entries ("SUBSYSTEM=…"), not message text.
func splitLine(line string, prev logLine, kmsg bool, o *LogOptions) (out []logLine, isKmsg bool, err error) {
	if line == "" {
		return nil, kmsg, nil
	}
	if line[0] == ' ' || line[0] == '\t' {
		if kmsg {
			return nil, true, nil
		}
		// dmesg, journalctl and syslog print the further lines of one
		// message indented, without a time of their own.
		c := prev
		c.msg = strings.TrimSpace(line)
		return []logLine{c}, false, nil
	}
	if hdr, text, ok := strings.Cut(line, ";"); ok && kmsgHeader(hdr) {
		out, err := kmsgRecord(hdr, text)
		return out, true, err
	}
	l := logLine{msg: line}
	if m := decodePrefix.FindString(line); m != "" {
		l.msg = line[len(m):]
	}
	if err := l.wallClock(o); err != nil {
		return nil, false, err
	}
	if err := l.monotonic(); err != nil {
		return nil, false, err
	}
	return []logLine{l}, false, nil
}

// kmsgRecord is one /dev/kmsg record, header hdr ("6,1234,5678901,-")
// and its text: /dev/kmsg escapes a message's newlines as \x0a, so one
// record may be several lines (a v2 group's memory.stat, the Mem-Info
// summary), each stamped with the record's time since boot.
func kmsgRecord(hdr, text string) ([]logLine, error) {
	f := strings.Split(hdr, ",")
	us, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return nil, err
	}
	ts := time.Duration(us) * time.Microsecond
	var out []logLine
	for _, part := range strings.Split(unescapeKmsg(text), "\n") {
		out = append(out, logLine{stamp: ts, hasStamp: true, msg: strings.TrimSpace(part)})
	}
	return out, nil
}

// wallClock takes a leading wall-clock time off l.msg into l.wall: ctime
// (dmesg -T), ISO 8601 (journalctl -o short-iso) or syslog's "Jan  2
// 15:04:05", which has no year: the latest that is not after o.Now.
func (l *logLine) wallClock(o *LogOptions) error {
	switch {
	case ctimeLine.MatchString(l.msg):
		m := ctimeLine.FindStringSubmatch(l.msg)
		t, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", m[1], o.Loc)
		if err != nil {
			return err
		}
		l.wall, l.msg = t, m[2]
	case isoLine.MatchString(l.msg):
		m := isoLine.FindStringSubmatch(l.msg)
		t, err := parseISO(m[1])
		if err != nil {
			return err
		}
		l.wall, l.msg = t, m[2]
	case syslogLine.MatchString(l.msg):
		m := syslogLine.FindStringSubmatch(l.msg)
		t, err := time.ParseInLocation("Jan _2 15:04:05.999999999", strings.Replace(m[1], "  ", " ", 1), o.Loc)
		if err != nil {
			t, err = time.ParseInLocation("Jan 2 15:04:05.999999999", m[1], o.Loc)
		}
		if err != nil {
			return err
		}
		y := o.Now.Year()
		t = t.AddDate(y, 0, 0)
		if t.After(o.Now.Add(24 * time.Hour)) {
			t = t.AddDate(-1, 0, 0)
		}
		l.wall, l.msg = t, m[2]
	}
	return nil
}

// monotonic takes the kernel's "[  123.456789]" time since boot off
// l.msg into l.stamp (at its start, or, with no wall clock, inside a
// syslog line's tag); without either it drops a leading "kernel: ".
func (l *logLine) monotonic() error {
	if m := bracketLine.FindStringSubmatch(l.msg); m != nil {
		ts, err := stamp(m[1], m[2])
		if err != nil {
			return err
		}
		l.stamp, l.hasStamp, l.msg = ts, true, m[3]
		if r := monoRest.FindStringSubmatch(l.msg); r != nil && l.wall.IsZero() {
			l.msg = r[1] // journalctl -o short-monotonic
		}
		return nil
	}
	if !l.wall.IsZero() {
		return nil
	}
	if m := bracketInside.FindStringSubmatch(l.msg); m != nil {
		if ts, err := stamp(m[1], m[2]); err == nil {
			l.stamp, l.hasStamp, l.msg = ts, true, m[3]
		}
	} else {
		l.msg = strings.TrimPrefix(l.msg, "kernel: ")
	}
	return nil
}

func stamp(secs, frac string) (time.Duration, error) {
	sec, err1 := strconv.ParseInt(secs, 10, 64)
	ns, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	if err1 != nil || err2 != nil || sec > 1<<33 {
		return 0, fmt.Errorf("bad stamp %s.%s", secs, frac)
	}
	return time.Duration(sec)*time.Second + time.Duration(ns), nil
}

func parseISO(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q", s)
}

// unescapeKmsg decodes /dev/kmsg's \xHH escapes (non-printable bytes and
// newlines inside one record).
func unescapeKmsg(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

var (
	invokedLine = regexp.MustCompile(`^(.*) invoked oom-killer: gfp_mask=(0x[0-9a-f]+(?:\([^)]*\))?),(?: nodemask=\S+,)?\s*order=(-?\d+),(?: oom_adj=-?\d+,)? oom_score_adj=(-?\d+)`)
	cpuLine     = regexp.MustCompile(`^CPU: \d+ (?:UID: \d+ )?PID: (\d+) Comm: `)
	cpusetLine  = regexp.MustCompile(`^.* cpuset=(\S+) mems_allowed=(\S+)$`)
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
	// v1 "memory+swap: usage …", v2 (5.x+) "swap: usage …".
	swapUsageLine = regexp.MustCompile(`^(memory\+swap|swap): usage (\d+)kB, limit (\d+)kB, failcnt \d+`)
	kmemLine      = regexp.MustCompile(`^kmem: usage (\d+)kB`)
	statsLine     = regexp.MustCompile(`^Memory cgroup stats for (.*?):(.*)$`)
	statKV        = regexp.MustCompile(`^([a-z_]+) (\d+)$`)
	statKB        = regexp.MustCompile(`([a-z_]+):(\d+)KB`)
	taskHeader    = regexp.MustCompile(`^\[\s*pid\s*\]\s+(uid\s+tgid\s+total_vm\s+rss.*name)\s*$`)
	taskRow       = regexp.MustCompile(`^\[\s*(\d+)\]\s+(.*)$`)
	nodeLine      = regexp.MustCompile(`^Node \d+ active_anon:(\d+)kB inactive_anon:(\d+)kB active_file:(\d+)kB inactive_file:(\d+)kB`)
	nodeShmem     = regexp.MustCompile(` shmem:(\d+)kB`)
	nodeDirty     = regexp.MustCompile(` dirty:(\d+)kB`)
	swapFreeLine  = regexp.MustCompile(`^Free swap\s+=\s+(\d+)kB`)
	swapTotalLine = regexp.MustCompile(`^Total swap\s+=\s+(\d+)kB`)
	ramLine       = regexp.MustCompile(`^(\d+) pages RAM`)
	reservedLine  = regexp.MustCompile(`^(\d+) pages reserved`)
)

// pageCounterMaxKB: a memcg counter's "no limit" (PAGE_COUNTER_MAX pages)
// as printed in kB; anything from here up is unlimited.
const pageCounterMaxKB = 1 << 52

// oomReport gathers one OOM report until its kill line.
type oomReport struct {
	trigger                 *OOMTrigger
	constraint, raw         string
	cpuset, mems            string
	oomCg, taskCg           string
	uid                     *int
	usage, limit            uint64
	swapCounter             string
	swapUsage, swapLimit    *uint64
	kmem                    *uint64
	stats                   []OOMCgroupStats
	inStats                 bool
	taskCols                []string
	tasks                   [][]string // raw rows: columns then the name
	node                    *[5]uint64 // anon, file, shmem, dirty, nodes seen
	swapFree, swapTot, ramP *uint64
	reservedP               uint64
}

// ParseKernelLogWith finds the OOM kills in kernel log text in any form
// users paste: /dev/kmsg records ("prio,seq,usec,flags;message", \x0a
// inside a record splitting its lines), dmesg ("[secs.usec] message",
// -r with "<prio>", -T with "[Wed Jun 17 10:37:10 2020]", -x with
// "kern  :err   : "), journalctl -k (short, short-precise, short-iso,
// short-monotonic) and syslog files ("Nov 01 22:29:11 host kernel: …",
// with or without the kernel's own "[secs.usec]" after it). Lines of one
// message printed indented under it belong to it.
//
// For each kill it reads the report before it (mm/oom_kill.c,
// mm/memcontrol.c, mm/show_mem.c of 3.10 to 6.18): the trigger ("X
// invoked oom-killer: gfp_mask=…, order=…, oom_score_adj=…"), the
// constraint (4.19+'s "oom-kill:constraint=…" line, or before it the kill
// line's prefix and "Task in … killed as a result of limit of …"), a
// memcg's "memory:", "memory+swap:"/"swap:" and "kmem:" lines and its
// "Memory cgroup stats for …" block(s), a global OOM's per-node Mem-Info
// and swap lines, and the task table; then the kill line, "Killed process
// N (NAME) total-vm:…kB, anon-rss:…kB, file-rss:…kB[, shmem-rss:…kB]…",
// preceded before 5.1 by "… Kill process N (NAME) score S or sacrifice
// child". A report cut short (a pasted excerpt) gives what it has.
func ParseKernelLogWith(r io.Reader, name string, o LogOptions) ([]OOMKill, error) {
	if o.Loc == nil {
		o.Loc = time.Local
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.In(o.Loc)
	rep := &oomReport{}
	var last *oomReport // the report a "Kill process" line closed
	var kills []OOMKill
	var prev logLine
	kmsg := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		lines, isKmsg, err := splitLine(sc.Text(), prev, kmsg, &o)
		if err != nil {
			return kills, fmt.Errorf("%s:%d: %w: %w", name, n, ErrParse, err)
		}
		kmsg = isKmsg
		for _, l := range lines {
			prev = l
			if k, q, done := rep.add(l, &last); done {
				if !l.wall.IsZero() {
					k.Time, k.TimeFromLog = l.wall, true
				} else if !o.Boot.IsZero() && l.hasStamp {
					k.Time = o.Boot.Add(l.stamp)
				}
				finish(&k, q, o.PageSize)
				kills = append(kills, k)
				rep = &oomReport{}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return kills, fmt.Errorf("%s: %w", name, err)
	}
	return kills, nil
}

// add takes one message line into the report; on the kill line it
// returns the kill. The line kinds are tried in this order, the first
// that matches taking the line: a value of a stats block being read,
// the trigger, the memcg's counters and stats, the task table, the
// global Mem-Info, the constraint, the kill lines.
func (p *oomReport) add(l logLine, last **oomReport) (OOMKill, *oomReport, bool) {
	msg := l.msg
	if p.inStats && p.addStatValue(msg) {
		return OOMKill{}, nil, false
	}
	if p.addTrigger(msg) || p.addMemcg(msg) || p.addTask(msg) || p.addMemInfo(msg) || p.addConstraint(msg) {
		return OOMKill{}, nil, false
	}
	return p.addKill(l, last)
}

// addStatValue takes a "key value" line of the "Memory cgroup stats for
// …:" block being read (mm/memcontrol.c; the value kept as printed);
// any other line ends the block and is not taken.
func (p *oomReport) addStatValue(msg string) bool {
	if m := statKV.FindStringSubmatch(msg); m != nil {
		v, _ := strconv.ParseUint(m[2], 10, 64)
		p.stats[len(p.stats)-1].Values[m[1]] = v
		return true
	}
	p.inStats = false
	return false
}

// addTrigger takes the lines naming what ran into the OOM
// (mm/oom_kill.c, dump_header): "X invoked oom-killer: gfp_mask=…,
// order=…, oom_score_adj=…", which starts a new report, the "CPU: N
// PID: P Comm: X" line of the stack dump after it, and the trigger's
// "X cpuset=… mems_allowed=…" unless the cpuset is known already.
func (p *oomReport) addTrigger(msg string) bool {
	switch {
	case strings.Contains(msg, " invoked oom-killer: "):
		if m := invokedLine.FindStringSubmatch(msg); m != nil {
			*p = oomReport{}
			order, _ := strconv.Atoi(m[3])
			adj, _ := strconv.Atoi(m[4])
			p.trigger = &OOMTrigger{Comm: m[1], GFPMask: m[2], Order: order, OOMScoreAdj: adj}
		}
	case strings.HasPrefix(msg, "CPU: "):
		if m := cpuLine.FindStringSubmatch(msg); m != nil && p.trigger != nil && p.trigger.PID == 0 {
			p.trigger.PID, _ = strconv.Atoi(m[1])
		}
	case p.trigger != nil && p.cpuset == "" && cpusetLine.MatchString(msg) && strings.HasPrefix(msg, p.trigger.Comm+" cpuset="):
		m := cpusetLine.FindStringSubmatch(msg)
		p.cpuset, p.mems = m[1], m[2]
	default:
		return false
	}
	return true
}

// addMemcg takes a memcg OOM's counters (mm/memcontrol.c): "memory:
// usage NkB, limit NkB, failcnt N", v1's "memory+swap:" or v2's "swap:"
// (a limit from [pageCounterMaxKB] up is none), "kmem: usage NkB" (all
// kept in bytes), and the "Memory cgroup stats for …:" line, whose
// values follow on it ("cache:0KB rss:…KB", kept in bytes) or on the
// lines after it ([oomReport.addStatValue]).
func (p *oomReport) addMemcg(msg string) bool {
	switch {
	case memUsageLine.MatchString(msg):
		m := memUsageLine.FindStringSubmatch(msg)
		p.usage, p.limit = kib(m[1]), kib(m[2])
	case swapUsageLine.MatchString(msg):
		m := swapUsageLine.FindStringSubmatch(msg)
		p.swapCounter = m[1]
		u := kib(m[2])
		p.swapUsage = &u
		if lim, _ := strconv.ParseUint(m[3], 10, 64); lim < pageCounterMaxKB {
			v := lim * 1024
			p.swapLimit = &v
		}
	case kmemLine.MatchString(msg):
		v := kib(kmemLine.FindStringSubmatch(msg)[1])
		p.kmem = &v
	case statsLine.MatchString(msg):
		m := statsLine.FindStringSubmatch(msg)
		st := OOMCgroupStats{Path: m[1], Values: map[string]uint64{}}
		if rest := strings.TrimSpace(m[2]); rest != "" {
			for _, kv := range statKB.FindAllStringSubmatch(rest, -1) {
				st.Values[kv[1]] = kib(kv[2])
			}
		} else {
			p.inStats = true
		}
		p.stats = append(p.stats, st)
	default:
		return false
	}
	return true
}

// addTask takes the task table (mm/oom_kill.c, dump_tasks): its header
// "[  pid  ]   uid  tgid total_vm …  name", which restarts the rows, and
// each row, kept as its columns then the name (which may hold spaces).
func (p *oomReport) addTask(msg string) bool {
	switch {
	case taskHeader.MatchString(msg):
		p.taskCols = strings.Fields(taskHeader.FindStringSubmatch(msg)[1])
		p.tasks = nil
	case p.taskCols != nil && taskRow.MatchString(msg):
		m := taskRow.FindStringSubmatch(msg)
		f := strings.Fields(m[2])
		if nc := len(p.taskCols) - 1; len(f) > nc {
			row := append([]string{m[1]}, f[:nc]...)
			p.tasks = append(p.tasks, append(row, strings.Join(f[nc:], " ")))
		}
	default:
		return false
	}
	return true
}

// addMemInfo takes a global OOM's memory lines (mm/show_mem.c): each
// node's "Node N active_anon:…kB inactive_anon:…kB active_file:…kB
// inactive_file:…kB … shmem:…kB … dirty:…kB", anon, file, shmem and
// dirty summed over the nodes in bytes; "Free swap  = NkB" and "Total
// swap = NkB" in bytes; "N pages RAM" and "N pages reserved" in pages.
func (p *oomReport) addMemInfo(msg string) bool {
	switch {
	case nodeLine.MatchString(msg):
		m := nodeLine.FindStringSubmatch(msg)
		if p.node == nil {
			p.node = &[5]uint64{}
		}
		p.node[0] += kib(m[1]) + kib(m[2])
		p.node[1] += kib(m[3]) + kib(m[4])
		if s := nodeShmem.FindStringSubmatch(msg); s != nil {
			p.node[2] += kib(s[1])
		}
		if s := nodeDirty.FindStringSubmatch(msg); s != nil {
			p.node[3] += kib(s[1])
		}
		p.node[4]++
	case swapFreeLine.MatchString(msg):
		v := kib(swapFreeLine.FindStringSubmatch(msg)[1])
		p.swapFree = &v
	case swapTotalLine.MatchString(msg):
		v := kib(swapTotalLine.FindStringSubmatch(msg)[1])
		p.swapTot = &v
	case ramLine.MatchString(msg):
		v, _ := strconv.ParseUint(ramLine.FindStringSubmatch(msg)[1], 10, 64)
		p.ramP = &v
	case reservedLine.MatchString(msg):
		p.reservedP, _ = strconv.ParseUint(reservedLine.FindStringSubmatch(msg)[1], 10, 64)
	default:
		return false
	}
	return true
}

// addConstraint takes the constraint: 4.19+'s "oom-kill:constraint=…,
// nodemask=…,cpuset=…,mems_allowed=…,oom_memcg=…,task_memcg=…,task=…,
// pid=…,uid=…" (mm/oom_kill.c, dump_oom_summary), or before it "Task in
// /a killed as a result of limit of /b".
func (p *oomReport) addConstraint(msg string) bool {
	switch {
	case strings.Contains(msg, "oom-kill:constraint="):
		if m := oomKillLine.FindStringSubmatch(msg); m != nil {
			uid, _ := strconv.Atoi(m[4])
			p.uid = &uid
			for _, kv := range strings.Split(m[1], ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "constraint":
					p.raw, p.constraint = v, constraintName(v)
				case "cpuset":
					p.cpuset = v
				case "mems_allowed":
					p.mems = v
				case "oom_memcg":
					p.oomCg = v
				case "task_memcg":
					p.taskCg = v
				}
			}
		}
	case strings.Contains(msg, "Task in "):
		if m := taskInLine.FindStringSubmatch(msg); m != nil {
			p.taskCg, p.oomCg = m[1], m[2]
		}
	default:
		return false
	}
	return true
}

// addKill takes the kill lines (mm/oom_kill.c): before 5.1 "… Kill
// process N (NAME) score S or sacrifice child", which closes the report
// as the last one (*last), then "Killed process N (NAME) total-vm:…kB,
// anon-rss:…kB, file-rss:…kB[, shmem-rss:…kB]…", which gives the kill
// and the report it ends.
func (p *oomReport) addKill(l logLine, last **oomReport) (OOMKill, *oomReport, bool) {
	msg := l.msg
	switch {
	case strings.Contains(msg, "Kill process "):
		if m := killLine.FindStringSubmatch(msg); m != nil {
			if p.constraint == "" {
				p.constraint = prefixConstraint(m[1])
			}
			*last = p
		}
	case strings.Contains(msg, "Killed process "):
		m := killedLine.FindStringSubmatch(msg)
		if m == nil || strings.Trim(m[2], "0") == "" { // PID 0 is never killed: not a kill line
			return OOMKill{}, nil, false
		}
		// Before 4.19 the killer could "sacrifice" a child: "Kill process
		// 10 (a) … or sacrifice child" then "Killed process 11 (a)"; a
		// report with no lines of its own since is the last one's.
		q := p
		if q.trigger == nil && q.stats == nil && q.constraint == "" && *last != nil {
			q = *last
		}
		*last = nil
		return q.kill(l, m), q, true
	}
	return OOMKill{}, nil, false
}

// kill builds the kill from the report and the kill line m.
func (p *oomReport) kill(l logLine, m []string) OOMKill {
	k := OOMKill{SinceBoot: l.stamp, Comm: m[3], Trigger: p.trigger,
		Constraint: p.constraint, ConstraintRaw: p.raw, Cpuset: p.cpuset, MemsAllowed: p.mems,
		OOMCgroup: p.oomCg, TaskCgroup: p.taskCg, UID: p.uid, CgroupStats: p.stats}
	k.PID, _ = strconv.Atoi(m[2])
	k.TotalVMBytes, k.AnonRSSBytes, k.FileRSSBytes, k.ShmemRSSBytes = kib(m[5]), kib(m[6]), kib(m[7]), kib(m[8])
	for _, u := range []string{m[4], m[9]} {
		if u != "" {
			uid, _ := strconv.Atoi(u)
			k.UID = &uid
		}
	}
	if k.Constraint == "" {
		k.Constraint = prefixConstraint(m[1])
	}
	if k.Constraint == "memcg" {
		k.CgroupUsageBytes, k.CgroupLimitBytes = p.usage, p.limit
		k.CgroupSwapCounter, k.CgroupSwapUsageBytes, k.CgroupSwapLimitBytes = p.swapCounter, p.swapUsage, p.swapLimit
	}
	return k
}

// kib converts a "…kB" figure (KiB) to bytes; "" is 0.
func kib(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v * 1024
}
