package procevents

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/process"
)

// Options configure a Listener.
type Options struct {
	// ProcRoot is where /proc/PID/{comm,cmdline,cgroup} are read at exec
	// time ("/proc").
	ProcRoot string
	// SysRoot gives the online CPUs for the taskstats registration ("/sys").
	SysRoot string
	// MaxEvents bounds the events held between two Drain calls (default
	// 65536); more are counted in EventStats.LostBuffer.
	MaxEvents int
	// Cmdline turns a process's argv into the stored command line (e.g.
	// redaction); nil stores nothing.
	Cmdline func(argv []string) string
	// NoTaskstats disables the taskstats listener (exits then carry no I/O).
	NoTaskstats bool
	// ReadBuffer is the sockets' receive buffer in bytes (default 8 MiB;
	// the kernel caps it at net.core.rmem_max unless root).
	ReadBuffer int
	// Now is the wall clock (time.Now).
	Now func() time.Time
}

type procInfo struct {
	comm, cmdline, cgroup, unit string
	exe                         string // /proc/PID/exe, read at exec
	ppid                        int
	// forkAt is when the connector's fork event says the process was
	// forked (zero when its fork was not seen: it ran before the
	// listener started, or the event was lost).
	forkAt time.Time
	forkNS uint64 // the fork event's stamp, CLOCK_MONOTONIC ns (0: not seen)
	// execIdx is the index of this process's exec event in the buffer of
	// generation gen, so that what could not be read at exec time (a
	// process that exited before /proc was read) is filled in at exit.
	execIdx int
	gen     uint64
	hasExec bool
	// described: a child's exec event already carried this process's
	// identity (process.Event.ParentComm).
	described bool
}

// pendingExit is a process exit held back briefly before it is handed
// out: a multi-threaded process's threads may send their taskstats after
// the leader's (exit_group), and their I/O belongs to the process; the
// connector's exit event, sent later in do_exit, gives the exact time.
type pendingExit struct {
	ev       process.Event
	received time.Time
}

// cnExit is a connector exit of a main thread read before its taskstats
// record: when and what the connector had tracked of the process.
type cnExit struct {
	at   time.Time
	info *procInfo
}

// tsExit is a taskstats exit read before the connector's exit of the
// same process: what names the process to its exec if that is read
// later still.
type tsExit struct {
	received time.Time
	comm     string        // ac_comm: the process's comm when it exited
	ppid     int           // ac_ppid
	elapsed  time.Duration // ac_etime
}

// exitMatchWait is how long one reader's exit waits for the other's
// record of the same process before it is taken as lost: a connector
// exit is then handed out without I/O (TaskstatsMissing), a taskstats
// record read first stops standing for the process at its PID.
const exitMatchWait = time.Second

// forkSlack is how far a process's fork event may come after the start
// time the kernel gave it (copy_process sets start_time well before it
// calls proc_fork_connector, and a preempted fork, e.g. of a SCHED_IDLE
// task on a busy machine, stalls between the two).
const forkSlack = time.Second

// clockSlack bounds the error between two wall times the listener
// derives from separate clock reads: a CLOCK_MONOTONIC event stamp
// converted when its datagram is read (monoToWall), and the time another
// datagram is read.
const clockSlack = 10 * time.Millisecond

// before reports whether x is certainly the exit of a process earlier
// than one forked at forkAt (zero: unknown, nothing is certain): its
// record was read before that fork, or its process started (no later than
// received − elapsed, having exited before the record was read) more than
// forkSlack before it.
func (x tsExit) before(forkAt time.Time) bool {
	if forkAt.IsZero() {
		return false
	}
	return x.received.Before(forkAt.Add(-clockSlack)) || x.received.Add(-x.elapsed).Before(forkAt.Add(-forkSlack))
}

// endedBefore reports whether connector exit x is certainly of a process
// that ended before one that began at begin (taskstats ac_btime64, whole
// seconds of wall time, within a second of the start; zero: unknown).
func (x cnExit) endedBefore(begin time.Time) bool {
	return !begin.IsZero() && begin.Add(-time.Second-clockSlack).After(x.at)
}

// exitHold is how long an exit is held for its late threads.
const exitHold = 150 * time.Millisecond

// Listener receives process events from the kernel and buffers them as
// process.Event values until Drain.
type Listener struct {
	opts Options
	cn   *netlink.Conn
	ts   *genetlink.Conn
	fam  genetlink.Family
	// tsMask is the CPU list the taskstats socket registered for, to
	// deregister at Close.
	tsMask string

	mu       sync.Mutex
	events   []process.Event
	stats    process.EventStats
	seq      seqTracker
	tracked  map[int]*procInfo
	threadIO map[int][]threadExit // I/O of a process's exited threads, by TGID
	pending  map[int]*pendingExit // by TGID
	// The two readers' exits of one PID are paired by their order: each
	// socket delivers one PID's exits in the order its processes
	// exited, and a PID is reused only after its process exited, so the
	// k-th taskstats exit of a PID and the k-th connector exit are the
	// same process's. Whichever comes first waits here for the other,
	// oldest first; at most one of the two holds a PID.
	cnExits map[int][]cnExit // connector exits of main threads awaiting their taskstats record
	tsFirst map[int][]tsExit // taskstats exits read before their connector exit
	readErr string           // why a reader stopped early, reported once by Drain
	gen     uint64           // incremented by Drain: indexes into events are valid within one generation
	wg      sync.WaitGroup
	tsOn    bool
	infoBuf []byte // readInfo's file buffer; used by the connector reader only (or before Start)
	pathBuf []byte
}

// Open subscribes to the proc connector and, unless disabled, registers
// for taskstats exit records on every online CPU. Without the needed
// privileges it returns a *hostenv.Unavailable.
func Open(opts Options) (*Listener, error) {
	l := newListener(opts)
	opts = l.opts
	cn, err := netlink.Dial(unix.NETLINK_CONNECTOR, &netlink.Config{Groups: cnIdxProc})
	if err != nil {
		return nil, unavailable("process-events connector", err)
	}
	_ = cn.SetReadBuffer(opts.ReadBuffer)
	if _, err := cn.Send(netlink.Message{Header: netlink.Header{Type: netlink.Done}, Data: listenMsg(procCNMcastListen)}); err != nil {
		cn.Close()
		return nil, unavailable("process-events connector", err)
	}
	l.cn = cn
	if !opts.NoTaskstats {
		if err := l.openTaskstats(); err != nil {
			cn.Close()
			return nil, err
		}
		l.tsOn = true
	}
	l.snapshotExisting()
	return l, nil
}

// newListener returns a Listener with opts' defaults filled in and no
// socket open.
func newListener(opts Options) *Listener {
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 65536
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReadBuffer <= 0 {
		opts.ReadBuffer = 8 << 20
	}
	return &Listener{opts: opts, tracked: map[int]*procInfo{}, threadIO: map[int][]threadExit{}, pending: map[int]*pendingExit{},
		cnExits: map[int][]cnExit{}, tsFirst: map[int][]tsExit{}}
}

// openTaskstats opens the socket taskstats exit records come to and
// registers it for the online CPUs.
//
// The kernel sends exit records to a port id, not a socket, and keeps a
// registration until a send to that port fails (kernel/taskstats.c,
// send_cpu_listeners). The first generic netlink socket of a process is
// given the process's PID as its port id, so a socket of this process
// (after an earlier Listener's Close, had it not deregistered) or of an
// earlier process with the same PID can receive exit records before it
// registers. The socket is read as if it may: the family is looked up on
// a second socket, whose port id no registration can hold, and
// awaitRegistration reads past records.
func (l *Listener) openTaskstats() error {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return unavailable("taskstats", err)
	}
	fam, err := taskstatsFamily()
	if err != nil {
		c.Close()
		return unavailable("taskstats (kernel without CONFIG_TASKSTATS?)", err)
	}
	_ = c.SetReadBuffer(l.opts.ReadBuffer)
	mask := "0"
	if b, err := rootfs.ReadPath(context.Background(), filepath.Join(l.opts.SysRoot, "devices/system/cpu/online"), rootfs.ProcLimit); err == nil {
		mask = strings.TrimSpace(string(b))
	}
	sent, err := c.Send(cpumaskMsg(fam, unix.TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, mask), fam.ID, netlink.Request|netlink.Acknowledge)
	if err == nil {
		_ = c.SetReadDeadline(time.Now().Add(registerWait))
		err = l.awaitRegistration(c, sent.Header.Sequence)
		_ = c.SetReadDeadline(time.Time{})
	}
	if err != nil {
		c.Close()
		return unavailable("taskstats exit registration", err)
	}
	l.ts, l.fam, l.tsMask = c, fam, mask
	return nil
}

// taskstatsFamily looks up the "TASKSTATS" generic netlink family on a
// socket of its own, opened while the caller's holds the process's port
// id (see openTaskstats).
func taskstatsFamily() (genetlink.Family, error) {
	q, err := genetlink.Dial(nil)
	if err != nil {
		return genetlink.Family{}, err
	}
	defer q.Close()
	return q.GetFamily(unix.TASKSTATS_GENL_NAME)
}

// cpumaskMsg is a TASKSTATS_CMD_GET request registering or deregistering
// (attr) the listener for the CPUs of mask ("0-1", the format of
// /sys/devices/system/cpu/online).
func cpumaskMsg(fam genetlink.Family, attr uint16, mask string) genetlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.String(attr, mask)
	data, _ := ae.Encode() // a string attribute always encodes
	return genetlink.Message{Header: genetlink.Header{Command: unix.TASKSTATS_CMD_GET, Version: fam.Version}, Data: data}
}

// registerWait bounds the wait for the kernel's answer to the taskstats
// registration (it answers at once; this is for a kernel that does not).
const registerWait = 5 * time.Second

// genlReceiver is what awaitRegistration reads: a *genetlink.Conn, or a
// test's replay of one.
type genlReceiver interface {
	Receive() ([]genetlink.Message, []netlink.Message, error)
}

// awaitRegistration reads c until the kernel acknowledges the request
// numbered seq, and returns its error (nil: registered). The kernel sends
// exit records from the moment the CPU mask is registered, so on a busy
// host some come before the acknowledgement: they are handled as the
// taskstats reader handles the rest. (genetlink's Execute took them for
// the reply and failed: "netlink validate: mismatched sequence in
// netlink reply", once in 20 storms beside a loop of exiting sleeps.)
// Called from Open, before the readers start.
func (l *Listener) awaitRegistration(c genlReceiver, seq uint32) error {
	for {
		gms, nms, err := c.Receive() // an error answer (errno) is returned as err
		if err != nil {
			return err
		}
		for i, m := range nms {
			if m.Header.Type == netlink.Error {
				if m.Header.Sequence == seq {
					return nil
				}
				continue
			}
			if i >= len(gms) || gms[i].Header.Command != unix.TASKSTATS_CMD_NEW {
				continue
			}
			if te, ok, err := parseTaskstatsAttrs(gms[i].Data); err == nil && ok {
				l.handleExit(te, l.opts.Now())
			}
		}
	}
}

// snapshotExisting records comm and cgroup of the processes already
// running, so their exits are attributed to their unit too.
func (l *Listener) snapshotExisting() {
	ents, err := os.ReadDir(l.opts.ProcRoot)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		l.tracked[pid], _ = l.readInfo(pid, 0, false, 0)
	}
}

// readInfo reads cgroup, (withCmdline) cmdline and exe of the process
// at pid, then its comm, parent PID (returned) and start time from
// <ProcRoot>/<pid>/stat, last: with bornBy, the CLOCK_MONOTONIC ns stamp
// of an event of the process (its fork or exec), a start no later than
// the event vouches for all of it. A process that is there at the stat
// read and had started by the event held the PID at the event, so it is
// the event's process, and was so at the reads before. One that started
// after it is a later process at a reused PID (the listener read too
// late): nothing of it is kept. Without bornBy (processes running at
// Open) nothing is checked.
//
// The files are read with plain open/read/close into a reused buffer:
// os.ReadFile also registers each file with the runtime's poller and
// allocates a buffer per call, which made it half of the listener's CPU
// under heavy exec churn (bench: 3000 /bin/true in 20 s).
func (l *Listener) readInfo(pid, ppid int, withCmdline bool, bornBy uint64) (*procInfo, int) {
	pi := &procInfo{ppid: ppid}
	if b, ok := l.readProcFile(pid, "cgroup"); ok {
		pi.cgroup, pi.unit = process.ParseCgroupFile(b)
	}
	if withCmdline && l.opts.Cmdline != nil {
		if b, ok := l.readProcFile(pid, "cmdline"); ok && len(b) > 0 {
			pi.cmdline = l.opts.Cmdline(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
		}
	}
	if withCmdline {
		pi.exe = l.readExe(pid)
	}
	b, ok := l.readProcFile(pid, "stat")
	if !ok {
		return &procInfo{ppid: ppid}, 0 // gone: what was read may be of a later process
	}
	st, err := process.ParseStat(b)
	if err != nil || bornBy != 0 && !startedBy(st.StartTicks, bornBy) {
		return &procInfo{ppid: ppid}, 0
	}
	pi.comm, _ = process.ParseComm([]byte(st.Comm)) // "" for a comm that is not the kernel's
	return pi, st.PPID
}

// startedBy reports whether a process that started startTicks clock
// ticks after boot (/proc/PID/stat field 22: start_boottime, CLOCK_BOOTTIME,
// in USER_HZ ticks, 100 a second on every architecture memdiag runs on)
// had started by mono, a CLOCK_MONOTONIC stamp in ns. The two clocks
// differ by the time the machine was suspended, measured now. The tick
// truncates the start: a process started up to 10 ms after mono passes,
// which for a later process at the same PID would take a whole round of
// pid_max PIDs within those 10 ms.
func startedBy(startTicks, mono uint64) bool {
	var b, m unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &m) != nil || unix.ClockGettime(unix.CLOCK_BOOTTIME, &b) != nil {
		return true // no clock: nothing is certain
	}
	suspended := max(b.Nano()-m.Nano(), 0)
	const tick = uint64(time.Second / 100)
	return startTicks <= (mono+uint64(suspended))/tick
}

// describeParent gives an exec event its parent's identity when the
// parent's own exec was not recorded (it was running before the listener
// started, like a loop's shell): comm, command line and parent PID, read
// from /proc once per parent, so a child's ancestry reaches the loop.
func (l *Listener) describeParent(e *process.Event, forkNS uint64) {
	if e.PPID <= 1 {
		return
	}
	par := l.tracked[e.PPID]
	if par != nil && (par.hasExec || par.described) {
		return
	}
	// The parent started before it forked the child (forkNS; 0 when that
	// fork was not seen); a process at its PID that started later is not it.
	info, ppid := l.readInfo(e.PPID, 0, true, forkNS)
	if info.comm == "" {
		return // gone already
	}
	e.ParentComm, e.ParentCmdline, e.ParentPPID = info.comm, info.cmdline, ppid
	if par == nil {
		info.ppid = e.ParentPPID
		par = info
		l.tracked[e.PPID] = par
	}
	par.described = true
}

// readExe returns the target of <ProcRoot>/<pid>/exe (the program the
// process runs since its last exec), "" when it cannot be read (the
// process is gone, or a kernel thread).
func (l *Listener) readExe(pid int) string {
	if l.infoBuf == nil {
		l.infoBuf = make([]byte, 16<<10)
	}
	n, err := unix.Readlink(l.opts.ProcRoot+"/"+strconv.Itoa(pid)+"/exe", l.infoBuf)
	if err != nil {
		return ""
	}
	return string(l.infoBuf[:n])
}

// readProcFile reads <ProcRoot>/<pid>/<name> (at most 16 KiB, enough for
// cgroup with every v1 hierarchy; cmdline is truncated there) into the
// reused buffer; the result is valid until the next call.
func (l *Listener) readProcFile(pid int, name string) ([]byte, bool) {
	if l.infoBuf == nil {
		l.infoBuf = make([]byte, 16<<10)
	}
	p := append(l.pathBuf[:0], l.opts.ProcRoot...)
	p = append(p, '/')
	p = strconv.AppendInt(p, int64(pid), 10)
	p = append(p, '/')
	p = append(p, name...)
	l.pathBuf = p
	fd, err := unix.Open(string(p), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	total, err := process.ReadFile(fd, l.infoBuf, false)
	if err != nil {
		return nil, false
	}
	return l.infoBuf[:total], true
}

// Start reads events until ctx ends or Close is called.
func (l *Listener) Start(ctx context.Context) {
	l.wg.Add(1)
	cn, ts := l.cn, l.ts
	go func() { defer l.wg.Done(); l.readConnector(ctx, cn) }()
	if ts != nil {
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.readTaskstats(ctx, ts) }()
	}
	go func() { <-ctx.Done(); l.Close() }()
}

// monoToWall converts a CLOCK_MONOTONIC timestamp in ns to wall time.
func monoToWall(ns uint64, now time.Time) time.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return now
	}
	return now.Add(-time.Duration(uint64(ts.Nano()) - ns))
}

// keepReading decides after a receive error whether to read on: ENOBUFS
// (the kernel dropped messages; the connector's drops are counted exactly
// from sequence numbers) is counted and survived; a closed socket or an
// ended ctx stops quietly; anything else stops the reader and is reported
// in the next EventStats.
func (l *Listener) keepReading(ctx context.Context, which string, err error) bool {
	if ctx.Err() != nil || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if errors.Is(err, unix.ENOBUFS) {
		l.stats.Overruns++
		return true
	}
	l.readErr = fmt.Sprintf("%s reader stopped: %v", which, err)
	return false
}

func (l *Listener) readConnector(ctx context.Context, cn *netlink.Conn) {
	r, err := newReceiver(cn)
	if err != nil {
		l.keepReading(ctx, "connector", err)
		return
	}
	for {
		b, err := r.receive()
		if err != nil {
			if l.keepReading(ctx, "connector", err) {
				continue
			}
			return
		}
		now := l.opts.Now()
		l.mu.Lock()
		err = eachMessage(b, func(_ uint16, data []byte) {
			ev, err := parseCnMsg(data)
			if err != nil {
				return
			}
			l.stats.Received++
			l.seq.observe(ev.CPU, ev.Seq)
			l.handleConnector(ev, monoToWall(ev.TimestampNS, now))
		})
		l.mu.Unlock()
		if err != nil && !l.keepReading(ctx, "connector", err) {
			return
		}
	}
}

func (l *Listener) push(e process.Event) {
	if len(l.events) >= l.opts.MaxEvents {
		l.stats.LostBuffer++
		return
	}
	l.events = append(l.events, e)
}

func (l *Listener) handleConnector(ev procEvent, at time.Time) {
	switch ev.What {
	case whatFork:
		if ev.PID != ev.TGID {
			return // a new thread, not a process
		}
		parent := l.tracked[ev.ParentTGID]
		l.pruneTSFirst(ev.PID, at)
		var pi *procInfo
		if len(l.tsFirst[ev.PID]) == 0 {
			pi, _ = l.readInfo(ev.PID, ev.ParentTGID, false, ev.TimestampNS)
		} else {
			// Its exit was read already: /proc/PID is gone, or is a
			// later process's.
			pi = &procInfo{ppid: ev.ParentTGID}
		}
		if pi.comm == "" && parent != nil {
			pi.comm = parent.comm // a child is its parent's copy until it execs
		}
		pi.forkAt, pi.forkNS = at, ev.TimestampNS
		l.tracked[ev.PID] = pi
	case whatExec:
		if ev.PID != ev.TGID {
			return
		}
		l.handleExec(ev.PID, at, ev.TimestampNS)
	case whatComm:
		if pi := l.tracked[ev.TGID]; pi != nil && ev.PID == ev.TGID {
			pi.comm = ev.Comm
		}
	case whatExit:
		if ev.PID != ev.TGID {
			return
		}
		pi := l.tracked[ev.PID]
		delete(l.tracked, ev.PID)
		if l.tsOn {
			if q := l.tsFirst[ev.PID]; len(q) > 0 {
				// Its taskstats record came first (it is sent earlier in
				// do_exit): give its event the connector's exact time,
				// if it is the one still held.
				if pe := l.pending[ev.PID]; pe != nil && len(q) == 1 {
					pe.ev.Time = at
				}
				l.popTSFirst(ev.PID, 1)
				return
			}
			l.cnExits[ev.PID] = append(l.cnExits[ev.PID], cnExit{at: at, info: pi})
			return
		}
		e := process.Event{Kind: process.Exit, Time: at, Source: "connector", PID: ev.PID, PPID: ev.ParentTGID}
		if pi != nil {
			e.Comm, e.Exe, e.Cmdline, e.Cgroup, e.Unit = pi.comm, pi.exe, pi.cmdline, pi.cgroup, pi.unit
		}
		l.push(e)
	}
}

// handleExec records the exec of process pid and tracks it from there.
//
// Its identity comes from /proc/PID, read now, or, when taskstats has
// read its exit already (the two sockets are read by two goroutines),
// from that exit record and what its fork recorded; /proc/PID is then
// gone, or is a later process's, and is not read. It never comes from
// an exit record of another process at the same PID: the records are
// paired by their order (Listener.tsFirst). When nothing says what the
// process was, Comm is left empty; every consumer of process.Event takes
// an empty Comm as unknown (correlate's proc.note keeps the name it had,
// and the process's exit, read later, names it).
func (l *Listener) handleExec(pid int, at time.Time, stamp uint64) {
	old := l.tracked[pid]
	if old != nil {
		l.pruneTSFirst(pid, old.forkAt)
	}
	q := l.tsFirst[pid]
	var pi *procInfo
	statPPID := 0
	if len(q) == 0 {
		pi, statPPID = l.readInfo(pid, 0, true, stamp)
	} else {
		pi = &procInfo{}
	}
	if old != nil {
		pi.ppid, pi.forkAt, pi.forkNS = old.ppid, old.forkAt, old.forkNS
		if pi.cgroup == "" {
			pi.cgroup, pi.unit = old.cgroup, old.unit
		}
	}
	if len(q) > 0 {
		// The first exit taskstats read at this PID that the connector
		// has not: this process's.
		pi.comm = q[0].comm
		if pi.ppid == 0 {
			pi.ppid = q[0].ppid
		}
		if pe := l.pending[pid]; pe != nil && len(q) == 1 && pe.ev.Cgroup == "" {
			pe.ev.Cgroup, pe.ev.Unit = pi.cgroup, pi.unit
		}
	}
	if pi.ppid == 0 {
		// Forked before the listener started (or the fork event was
		// lost): every exec still carries its parent, from stat.
		pi.ppid = statPPID
	}
	pi.execIdx, pi.gen, pi.hasExec = len(l.events), l.gen, true
	l.tracked[pid] = pi
	e := process.Event{Kind: process.Exec, Time: at, Source: "connector", PID: pid, PPID: pi.ppid,
		Comm: pi.comm, Exe: pi.exe, Cmdline: pi.cmdline, Cgroup: pi.cgroup, Unit: pi.unit}
	l.describeParent(&e, pi.forkNS)
	l.push(e)
}

// pruneTSFirst forgets the taskstats exits of pid waiting for their
// connector exit that are certainly of processes earlier than the one
// the connector saw forked at forkAt: their connector exits, which came
// before that fork, were lost.
func (l *Listener) pruneTSFirst(pid int, forkAt time.Time) {
	q := l.tsFirst[pid]
	n := 0
	for n < len(q) && q[n].before(forkAt) {
		n++
	}
	if n > 0 {
		l.popTSFirst(pid, n)
	}
}

// popTSFirst forgets the n oldest taskstats exits of pid waiting for
// their connector exit.
func (l *Listener) popTSFirst(pid, n int) {
	if q := l.tsFirst[pid]; n < len(q) {
		l.tsFirst[pid] = q[n:]
	} else {
		delete(l.tsFirst, pid)
	}
}

func (l *Listener) readTaskstats(ctx context.Context, ts *genetlink.Conn) {
	r, err := newReceiver(ts)
	if err != nil {
		l.keepReading(ctx, "taskstats", err)
		return
	}
	for {
		b, err := r.receive()
		if err != nil {
			if l.keepReading(ctx, "taskstats", err) {
				continue
			}
			return
		}
		now := l.opts.Now()
		l.mu.Lock()
		err = eachMessage(b, func(_ uint16, data []byte) {
			// struct genlmsghdr: cmd, version, 2 reserved bytes; then the attributes
			if len(data) < 4 || data[0] != unix.TASKSTATS_CMD_NEW {
				return
			}
			te, ok, err := parseTaskstatsAttrs(data[4:])
			if err != nil || !ok {
				return
			}
			l.handleExit(te, now)
		})
		l.mu.Unlock()
		if err != nil && !l.keepReading(ctx, "taskstats", err) {
			return
		}
	}
}

func (l *Listener) handleExit(te taskExit, now time.Time) {
	if te.PID != te.TGID {
		// A thread ending after its leader, whose exit is held: its I/O
		// is that process's unless the thread began after the leader's
		// exit (a later process at the PID). BeginTime is within a
		// second of the true start either way (btimeSlack).
		if pe, ok := l.pending[te.TGID]; ok && !te.BeginTime.After(pe.ev.Time.Add(btimeSlack)) {
			pe.ev.ReadBytes += te.ReadBytes
			pe.ev.WriteBytes += te.WriteBytes
			pe.ev.BlkioDelay += te.BlkioDelay
			return
		}
		l.threadIO[te.TGID] = append(l.threadIO[te.TGID], threadExit{received: now, read: te.ReadBytes, write: te.WriteBytes, blkio: te.BlkioDelay})
		return
	}
	l.addThreadIO(&te)
	at := now
	var pi *procInfo // what the connector tracked of this process
	x := tsExit{received: now, comm: te.Comm, ppid: te.PPID, elapsed: te.Elapsed}
	for q := l.cnExits[te.PID]; len(q) > 0 && q[0].endedBefore(te.BeginTime); q = l.cnExits[te.PID] {
		// An earlier process at this PID whose taskstats record was lost.
		l.taskstatsMissing(te.PID, q[0])
		l.popCnExit(te.PID)
	}
	if q := l.cnExits[te.PID]; len(q) > 0 {
		if q[0].info == nil || !x.before(q[0].info.forkAt) {
			// The connector's exit was read first: the oldest waiting
			// at this PID is this process's.
			at, pi = q[0].at, q[0].info
			l.popCnExit(te.PID)
		}
		// Else this process is earlier than the oldest waiting, whose
		// record is still to come: its own connector exit was lost.
	} else if cur := l.tracked[te.PID]; cur == nil || !x.before(cur.forkAt) {
		if cur != nil {
			l.pruneTSFirst(te.PID, cur.forkAt)
		}
		if len(l.tsFirst[te.PID]) == 0 {
			// The connector has read the exits of every earlier process
			// at this PID and not this one's: it tracks this one (or
			// none yet). Otherwise it still tracks an earlier process.
			pi = cur
		}
		l.tsFirst[te.PID] = append(l.tsFirst[te.PID], x)
	}
	// Else the connector tracks a later process at this PID: this one's
	// connector exit, read before that fork, was lost (LostKernel).
	e := process.Event{Kind: process.Exit, Time: at, Source: "taskstats", PID: te.PID, PPID: te.PPID, Comm: te.Comm,
		ReadBytes: te.ReadBytes, WriteBytes: te.WriteBytes, BlkioDelay: te.BlkioDelay}
	if pi != nil {
		e.Exe, e.Cmdline, e.Cgroup, e.Unit = pi.exe, pi.cmdline, pi.cgroup, pi.unit
		if e.Comm == "" {
			e.Comm = pi.comm
		}
		// A process that exited before /proc/PID could be read at exec
		// time has its exec event completed from taskstats.
		if pi.hasExec && pi.gen == l.gen && pi.execIdx < len(l.events) {
			if ex := &l.events[pi.execIdx]; ex.PID == te.PID && ex.Kind == process.Exec && ex.Comm != te.Comm && te.Comm != "" {
				ex.Comm = te.Comm
			}
		}
	}
	if old, ok := l.pending[te.PID]; ok { // PID reused within the hold: hand out the old one
		l.push(old.ev)
	}
	l.pending[te.PID] = &pendingExit{ev: e, received: now}
}

// threadExit is the I/O of one exited thread (not a group leader), held
// until its thread group's leader exits.
type threadExit struct {
	received    time.Time // when its taskstats record was read
	read, write uint64    // bytes, as taskExit's
	blkio       time.Duration
}

// btimeSlack bounds the error of a taskstats BeginTime (ac_btime64):
// the kernel computes it as the whole seconds of the wall clock minus the
// whole seconds of the task's age (bacct_add_tsk, kernel/tsacct.c), so it
// is within a second of the true start, before or after it.
const btimeSlack = time.Second

// addThreadIO adds to leader te the I/O of its group's threads that ended
// before it, and forgets every thread held at its PID. A thread whose
// record was read before the leader began (BeginTime less btimeSlack)
// was an earlier process's at the PID, whose leader's exit had already
// been handed out: its I/O is not te's and is dropped.
func (l *Listener) addThreadIO(te *taskExit) {
	for _, x := range l.threadIO[te.PID] {
		if x.received.Before(te.BeginTime.Add(-btimeSlack)) {
			continue
		}
		te.ReadBytes += x.read
		te.WriteBytes += x.write
		te.BlkioDelay += x.blkio
	}
	delete(l.threadIO, te.PID)
}

// flushPending hands out the exits held at least exitHold (all with
// force), and forgets threads' I/O whose process is long gone.
func (l *Listener) flushPending(now time.Time, force bool) {
	for pid, pe := range l.pending {
		if force || now.Sub(pe.received) >= exitHold {
			l.push(pe.ev)
			delete(l.pending, pid)
		}
	}
}

// taskstatsMissing hands out connector exit x of pid, whose taskstats
// record did not come, without I/O.
func (l *Listener) taskstatsMissing(pid int, x cnExit) {
	l.stats.TaskstatsMissing++
	e := process.Event{Kind: process.Exit, Time: x.at, Source: "connector", PID: pid}
	if pi := x.info; pi != nil {
		e.Comm, e.Exe, e.Cmdline, e.Cgroup, e.Unit, e.PPID = pi.comm, pi.exe, pi.cmdline, pi.cgroup, pi.unit, pi.ppid
	}
	l.push(e)
}

// popCnExit forgets the oldest connector exit of pid waiting for its
// taskstats record and returns those left.
func (l *Listener) popCnExit(pid int) []cnExit {
	q := l.cnExits[pid]
	if len(q) <= 1 {
		delete(l.cnExits, pid)
		return nil
	}
	l.cnExits[pid] = q[1:]
	return q[1:]
}

// Drain returns the events buffered since the last call, oldest first,
// and the accounting of that interval. Connector exits of main threads
// whose taskstats record has not arrived within a second are counted as
// TaskstatsMissing and emitted without I/O.
func (l *Listener) Drain() ([]process.Event, process.EventStats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.opts.Now()
	for pid, q := range l.cnExits {
		for len(q) > 0 && now.Sub(q[0].at) >= exitMatchWait {
			l.taskstatsMissing(pid, q[0])
			q = l.popCnExit(pid)
		}
	}
	// A taskstats exit whose connector exit has not come (the event was
	// lost: LostKernel) stops standing for the process at its PID.
	for pid, q := range l.tsFirst {
		n := 0
		for n < len(q) && now.Sub(q[n].received) >= exitMatchWait {
			n++
		}
		if n > 0 {
			l.popTSFirst(pid, n)
		}
	}
	// Hand out every held exit now, whatever its age: the scan that
	// follows sees its parent's counters with the child reaped, and needs
	// the child's exact totals (diskio NoteExits) to take them off.
	l.flushPending(now, true)
	ev := l.events
	l.events = nil
	l.gen++
	// Two sockets are read by two goroutines: put the interval's events in
	// time order (stable, so an exec stays before its exit on a tie).
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].Time.Before(ev[j].Time) })
	st := l.stats
	st.Error, l.readErr = l.readErr, ""
	st.LostKernel = l.seq.lost
	l.seq.lost = 0
	l.stats = process.EventStats{}
	return ev, st
}

// Close unsubscribes and closes the sockets; safe to call more than once.
func (l *Listener) Close() error {
	l.mu.Lock()
	cn, ts := l.cn, l.ts
	l.cn, l.ts = nil, nil
	l.mu.Unlock()
	if cn != nil {
		_, _ = cn.Send(netlink.Message{Header: netlink.Header{Type: netlink.Done}, Data: listenMsg(procCNMcastIgnore)})
		cn.Close()
	}
	if ts != nil {
		// Deregister first: the kernel would go on sending exit records
		// to the port id, which this process's next generic netlink
		// socket is given (openTaskstats). The request is handled
		// within the send.
		_, _ = ts.Send(cpumaskMsg(l.fam, unix.TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, l.tsMask), l.fam.ID, netlink.Request)
		ts.Close()
	}
	return nil
}

// Wait blocks until the reading goroutines have ended (after Close or the
// end of Start's context).
func (l *Listener) Wait() { l.wg.Wait() }
