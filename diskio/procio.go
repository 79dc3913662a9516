package diskio

// Per-process I/O from /proc/PID/io and /proc/PID/stat.
//
// /proc/PID/io (https://docs.kernel.org/filesystems/proc.html, section
// "/proc/<pid>/io - Display the IO accounting fields"):
//
//	rchar: 6671779
//	wchar: 4982454
//	syscr: 700
//	syscw: 49
//	read_bytes: 5287936
//	write_bytes: 4980736
//	cancelled_write_bytes: 0
//
// read_bytes counts bytes this process caused to be fetched from storage
// (block layer submissions, so page cache hits are not in it); write_bytes
// counts bytes it caused to be sent to storage, charged when the page is
// dirtied, not when writeback happens; cancelled_write_bytes is dirtied
// data that was truncated or deleted before it reached the disk — by this
// task, possibly data another task dirtied (proc(5): "a task can cause
// negative I/O too"). proc(5) also warns that on 32-bit systems a reader
// can see a half-updated 64-bit counter; a counter that steps back gives
// a delta of 0, never a wrapped huge value. On
// filesystems without block devices (tmpfs, NFS) they stay 0. The file is
// mode 0400 and needs ptrace read access: other users' processes are
// EACCES unless we have CAP_SYS_PTRACE (or are root).
//
// The tgid view /proc/PID/io sums all threads, the threads that have
// already exited, and — this matters for attribution — every child the
// process has reaped with wait(2): kernel/exit.c wait_task_zombie() adds
// the zombie's counters (its own and those of its reaped descendants) to
// the parent's signal->ioac, which fs/proc/base.c do_io_accounting()
// includes. proc(5) (man-pages 6.03, Debian bookworm) does not mention
// this; checked on this project's CI
// host (kernel 6.18): a bash running `sh -c "dd ... bs=1M count=8
// conv=fsync"` showed write_bytes 0 before and 8409088 after reaping sh.
// Children reaped automatically (SIGCHLD ignored, SA_NOCLDWAIT) are not
// added. So when a child exits, its parent's counters jump by the
// child's whole total in the interval in which it is reaped, and a
// per-interval delta of /proc/PID/io charges a shell with what its dd
// did — a second time, since the child's own counters (and its exit
// record) already hold it. pidstat -d reads the same file and shows the
// same jump; so does atop, whose photoproc.c procio() (revision 1.33)
// reads /proc/PID/io for the process and task/TID/io per thread only for
// multi-threaded ones, and which reports exited processes from process
// accounting, with no correction for the parent.
//
// What memdiag does:
//   - For a single-threaded process (stat field 20 num_threads is 1),
//     /proc/PID/task/PID/io is the thread's own counters
//     (do_io_accounting() with whole=0 reports task->ioac only), so
//     /proc/PID/io minus it is signal->ioac: what reaped children
//     brought in (plus any threads that exited earlier). The scanner
//     reads it when the process's /proc/PID/io changed (and at first
//     sight), so the process's delta is exactly its own I/O, whatever
//     it reaped and whenever. signal->ioac also holds the I/O of the
//     process's threads that exited (kernel/exit.c __exit_signal adds
//     each thread's counters to it): a threaded server idle between
//     requests is single-threaded, and its request threads' I/O lands
//     there. That is its own I/O. A reap raises the process's
//     children's faults and times (stat fields 11, 13, 16, 17) with
//     the I/O, in one critical section of wait_task_zombie(); a thread's
//     exit does not. So signal->ioac's gain in an interval in which
//     those fields did not move (read before and again after io) is
//     exited threads' and counted as the process's own; in an interval
//     in which it reaped a child, the gain is taken as reaped: exited
//     threads or children, which /proc cannot tell apart. What reaped
//     children (or exited threads) brought in, less the
//     totals of the children the scanner knows (their last seen
//     counters, or taskstats' exact exit totals given to NoteExits), is
//     I/O no other row holds — children that started and ended between
//     two scans, or wrote after the last scan saw them — and is
//     reported as the parent's DeltaReaped*Bytes and in ScanStats,
//     attributed to no process: memdiag cannot tell which child did it.
//   - For a multi-threaded process the per-thread files do not separate
//     reaped children from exited threads, so the known children's
//     totals are taken off its delta (saturating at 0); I/O of children
//     never seen, and the part a seen child did after our last look,
//     stay with the parent, unless taskstats gave the child's total.
//
// ProcIO's cumulative ReadBytes/WriteBytes and a polled exit's totals are
// the process's own as far as known (/proc/PID/io less what its reaped
// children brought in), like taskstats' exit totals, so that a consumer
// adding a process's deltas and its exit total never counts a child on
// its parent.
//
// /proc/PID/stat (proc(5)): "15706 (python3) S 15700 ..." — field 2 comm
// in parentheses (it may contain spaces and ')', so it ends at the last
// ')'), field 4 ppid, field 22 starttime (clock ticks after boot), field
// 42 delayacct_blkio_ticks (clock ticks waiting for block I/O; counted
// only with kernel.task_delayacct=1 or the delayacct boot parameter).
//
// Why a reader of our own instead of procfs or gopsutil: this runs every
// second over every process (bench/ measures it at 1000-5000
// processes). procfs's Proc.IO() and Proc.Stat() each use os.ReadFile
// (an *os.File, a fresh buffer, and fmt.Sscan for every field), and
// gopsutil's process.IOCounters/Ppid/CreateTime read stat several times
// and allocate per call. Here the /proc listing is one getdents64 loop on
// a reused buffer, each file is one openat+read+close into a reused
// buffer with the path built in a reused byte slice, parsing is a byte
// scan, and state lives in one map keyed by PID that holds start time
// for identity; a process costs no allocation once it is known. Command
// line and cgroup are read only for new processes, processes whose comm
// changed (exec), and the top N.

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/process"

	"github.com/memdiag/memdiag/redact"
)

// DeniedHint is the warning a command prints once when a scan counts
// processes in ScanStats.Denied. Opening another user's /proc/PID/io
// needs CAP_DAC_READ_SEARCH (the file is mode 0400) and reading it needs
// ptrace read access, CAP_SYS_PTRACE; neither alone is enough (checked on
// kernel 6.18 with setpriv, and in TestScanAsNobody). Root can be denied
// too, for processes in another user namespace or protected by a
// security module (this project's CI host denies /proc/1/io to root).
const DeniedHint = "other users' per-process I/O is invisible; run as root, " +
	"or give memdiag CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH " +
	"(setcap cap_sys_ptrace,cap_dac_read_search+ep memdiag)"

// ProcScanOptions configures a [ProcScanner].
type ProcScanOptions struct {
	// TopN is the number of processes Scan returns, those with the most
	// bytes read plus written in the interval. Default 10.
	TopN int
	// KeepCmdline stores command lines as they are instead of passing
	// them through [redact.Cmdline] (`watch --keep-cmdline`).
	KeepCmdline bool
	// ClockTicks is USER_HZ, the unit of delayacct_blkio_ticks
	// (sysconf(_SC_CLK_TCK)); default 100, which it is on every Linux
	// architecture's user ABI.
	ClockTicks int
	// MaxCmdline caps the bytes of /proc/PID/cmdline read; default 4096.
	MaxCmdline int
	// GrowthFloor, GrowthIdle and MaxGrowth say which processes RSS
	// returns besides the largest: see [ProcScanner.RSS]. Defaults 1 MiB,
	// 10 minutes and 32.
	GrowthFloor uint64
	GrowthIdle  time.Duration
	MaxGrowth   int
}

// ProcScanner follows every process's I/O counters from one scan to the
// next. It is not safe for concurrent use.
type ProcScanner struct {
	procRoot string
	opts     ProcScanOptions

	// readFile reads the file at path (NUL-terminated, relative to the
	// directory dirfd, the proc root) into buf and returns the bytes
	// read; it stops at EOF, when buf is full, or after a short read
	// ending in '\n'. A function field so tests can inject EACCES and
	// races (as node_exporter's diskstats collector does).
	readFile func(dirfd int, path, buf []byte) (int, error)
	rootfd   int // open proc root during a Scan (for the scanner's life when keepOpen)

	// keepOpen is set when procRoot is a procfs mount: the root and each
	// process's stat and io files then stay open across scans and are
	// re-read with pread(2), one syscall per file instead of three
	// (openat's path walk in procfs is the dearest of them). An open
	// /proc/PID file pins the process's struct pid, so once the process
	// is reaped a read gives ESRCH, never another process that reuses
	// the PID; the scanner then closes it and looks the PID up again.
	// Off for plain directories (tests' fixture trees, which benchmarks
	// swap under a symlink).
	keepOpen bool
	maxOpen  int // file descriptors the scanner may hold (RLIMIT_NOFILE minus a reserve)
	nOpen    int

	procs  map[int]*procState
	gen    uint64
	scans  int
	faults process.Faults // of the last Scan: Fault

	dirBuf  []byte
	pathBuf []byte
	statBuf []byte // comm returned by parseStat aliases it until the next stat read
	fileBuf []byte
	cmdBuf  []byte
	cgBuf   []byte // /proc/PID/cgroup: up to ~13 v1 hierarchies with long paths
	cand    []*procState
	rssCand []*procState
	// growCand are this scan's growth candidates (see RSS), now its time
	// (Unix ns) and floorPages GrowthFloor in pages.
	growCand []*procState
	// growLeftOut is how many growth candidates the last RSS call did
	// not return (more than MaxGrowth); see GrowthLeftOut.
	growLeftOut int
	now         int64
	floorPages  uint64
	// exitIO holds exact final totals of exited processes given by
	// NoteExits (taskstats), by PID, until the next Scan uses them.
	exitIO map[int]exitIO
	// exitedBy indexes this scan's exited processes by PID while their
	// reaps are credited.
	exitedBy map[int]*procState
	exited   []*procState
}

// procState is what the scanner remembers about one process.
type procState struct {
	pid, ppid int
	start     uint64 // /proc/PID/stat field 22
	gen       uint64 // scan in which it was last seen

	comm            string
	cmdline, cgroup string
	unit            string
	exe             string // /proc/PID/exe link target
	ioKnown         bool   // /proc/PID/io was readable at the last scan
	statFD, ioFD    int    // kept-open /proc/PID/stat and io, -1 when not held

	whole ioCounters // /proc/PID/io, cumulative, last seen
	blkio uint64     // ticks, cumulative
	rss   uint64     // resident pages at the last scan (stat field 24)
	final *exitIO    // exact totals at exit, from NoteExits
	// reaped is the part of whole the kernel added for reaped children,
	// as far as known: the sum of what was taken off its deltas as such
	// (signal->ioac growth in an interval in which it reaped a child,
	// known children's totals). whole minus reaped is the process's own
	// I/O, its exited threads' included, and the sum of its own deltas;
	// taskstats' exit totals (every thread's, summed by procevents) are
	// that too.
	reaped ioCounters
	// sig is signal->ioac at the last split read: /proc/PID/io minus
	// /proc/PID/task/PID/io, what exited threads and reaped children
	// brought in.
	sig   ioCounters
	split bool // sig is exact (single-threaded, task io read)
	// mark is statFields.reapMark at the last scan, read before io.
	mark uint64
	// splitNow: this scan's delta was split exactly, so known children's
	// totals come off dReap, not off the process's own delta.
	splitNow bool
	// absorbedUnseen is what its reaped children brought in after its
	// counters were last read (children reaped between its last scan and
	// its exit), which its last seen totals lack.
	absorbedUnseen            exitIO
	dRead, dWrite, dCancelled uint64 // this scan, its own I/O
	// dReap is what reaped children brought into its counters in this
	// scan that no known child accounts for (exact only when splitNow).
	dReap  ioCounters
	dBlkio uint64
	grow   growState
}

// ioCounters are the three /proc/PID/io byte counters memdiag keeps.
type ioCounters struct{ read, write, cancelled uint64 }

// sub is c - d per counter, 0 where d is larger.
func (c ioCounters) sub(d ioCounters) ioCounters {
	return ioCounters{satSub(c.read, d.read), satSub(c.write, d.write), satSub(c.cancelled, d.cancelled)}
}

// max is the larger of c and d per counter.
func (c ioCounters) max(d ioCounters) ioCounters {
	return ioCounters{max(c.read, d.read), max(c.write, d.write), max(c.cancelled, d.cancelled)}
}

func (c ioCounters) add(d ioCounters) ioCounters {
	return ioCounters{c.read + d.read, c.write + d.write, c.cancelled + d.cancelled}
}

// own is the process's own cumulative I/O as far as known: /proc/PID/io
// less what reaped children brought in.
func (st *procState) own() ioCounters { return st.whole.sub(st.reaped) }

// NewProcScanner returns a scanner of the processes under procRoot
// (normally /proc). It fails if procRoot is not a directory.
func NewProcScanner(procRoot string, opts ProcScanOptions) (*ProcScanner, error) {
	var st unix.Stat_t
	if err := unix.Stat(procRoot, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: procRoot, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("%s: not a directory", procRoot)
	}
	if opts.TopN <= 0 {
		opts.TopN = 10
	}
	if opts.ClockTicks <= 0 {
		opts.ClockTicks = 100
	}
	if opts.MaxCmdline <= 0 {
		opts.MaxCmdline = 4096
	}
	if opts.GrowthFloor == 0 {
		opts.GrowthFloor = 1 << 20
	}
	if opts.GrowthIdle <= 0 {
		opts.GrowthIdle = 10 * time.Minute
	}
	if opts.MaxGrowth <= 0 {
		opts.MaxGrowth = 32
	}
	var sfs unix.Statfs_t
	keep := unix.Statfs(procRoot, &sfs) == nil && sfs.Type == unix.PROC_SUPER_MAGIC
	var lim unix.Rlimit
	maxOpen := 0
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur > 1024 {
		// Go raises the soft limit to the hard one at start; leave 512
		// for the rest of the program (recording, netlink, probes).
		maxOpen = int(min(lim.Cur, 1<<20)) - 512
	}
	readFile := readFileRaw
	if !keep {
		// Not a procfs mount (a --root fixture tree or image): each file
		// is resolved inside the proc root and must be regular.
		readFile = readFileJailed
	}
	return &ProcScanner{
		procRoot: strings.TrimRight(procRoot, "/"),
		opts:     opts,
		readFile: readFile,
		rootfd:   -1,
		keepOpen: keep,
		maxOpen:  maxOpen,
		procs:    make(map[int]*procState),
		dirBuf:   make([]byte, 32<<10),
		statBuf:  make([]byte, 4096),
		fileBuf:  make([]byte, 4096),
		cmdBuf:   make([]byte, opts.MaxCmdline),
		cgBuf:    make([]byte, 16<<10),
		// RSS pages: stat field 24 counts pages of the kernel's size.
		floorPages: (opts.GrowthFloor + uint64(unix.Getpagesize()) - 1) / uint64(unix.Getpagesize()),
	}, nil
}

// Scan lists the processes once and compares them with the previous scan.
//
// top holds up to TopN processes that read or wrote in the interval,
// most bytes (read+write) first, ties by PID. events holds an Exec event
// for every process first seen (or whose comm changed: it exec'd) and an
// Exit event, with the last seen totals, for every process gone, ordered
// by PID with an exit before an exec of the same PID (PID reuse); Time is
// now. A process is identified by PID and start time, so a reused PID is
// an exit and a new process, never a negative delta.
//
// The first Scan is the baseline: it returns no top and no events. A
// process first seen later has all its I/O counted as its delta (it
// started during the interval). Processes that vanish while being read
// are counted in stats.Vanished, processes whose /proc/PID/io is
// unreadable (another user's, without the capabilities in [DeniedHint])
// in stats.Denied — they still produce exec and exit events — and other
// per-process failures in stats.Failed. err is set only when the process
// list itself cannot be read.
func (s *ProcScanner) Scan(now time.Time) (top []ProcIO, events []process.Event, stats ScanStats, err error) {
	s.beginScan(now)
	baseline := s.scans == 0
	if err := s.openRoot(); err != nil {
		s.gen--
		return nil, nil, stats, err
	}
	if !s.keepOpen {
		defer func() { unix.Close(s.rootfd); s.rootfd = -1 }()
	}
	err = s.listPIDs(func(pid int) {
		stats.Processes++
		st, ev := s.scanOne(pid, baseline, &stats)
		if ev != nil && !baseline {
			events = append(events, *ev)
		}
		if st != nil && st.dRead+st.dWrite+st.dReap.read+st.dReap.write > 0 {
			s.cand = append(s.cand, st)
		}
	})
	if err != nil {
		s.gen-- // nothing was seen: do not report every process as exited
		return nil, nil, stats, err
	}
	s.scans++
	s.collectExited()
	s.creditUnseenExits()
	events = s.creditExited(events, now)
	if baseline {
		return nil, nil, stats, nil
	}
	sortEvents(events, now)
	top = s.topByIO(&stats) // before stats is returned: it adds to it
	return top, events, stats, nil
}

// beginScan starts scan generation s.gen+1 at now: the per-scan lists
// emptied, their arrays kept.
func (s *ProcScanner) beginScan(now time.Time) {
	s.gen++
	s.faults = process.Faults{}
	s.cand = s.cand[:0]
	s.growCand = s.growCand[:0]
	s.now = now.UnixNano()
	s.exited = s.exited[:0]
}

// collectExited moves the processes this scan did not see from s.procs
// to s.exited (and s.exitedBy, by PID), each with its exit I/O from the
// kernel's exit event when one came.
func (s *ProcScanner) collectExited() {
	for pid, st := range s.procs {
		if x, ok := s.exitIO[pid]; ok {
			st.final = &x
			delete(s.exitIO, pid)
		}
		if st.gen != s.gen {
			s.exited = append(s.exited, st)
			delete(s.procs, pid)
		}
	}
	if len(s.exited) > 0 { // no map on the usual scan without exits
		s.exitedBy = make(map[int]*procState, len(s.exited))
		for _, st := range s.exited {
			s.exitedBy[st.pid] = st
		}
	}
}

// creditUnseenExits credits the exits of processes never seen alive
// (s.exitIO) to their parents.
func (s *ProcScanner) creditUnseenExits() {
	// Exits of processes never seen alive: already reaped, so their
	// totals are in the parent's counters now — and, when the parent is
	// one of them too (a script that ran cat between two scans), in that
	// parent's, which reaps into its own parent. Children first.
	kids := map[int]int{} // pending exits whose parent is a pending exit too
	for pid, x := range s.exitIO {
		if _, ok := s.exitIO[x.ppid]; ok && x.ppid != pid {
			kids[x.ppid]++
		}
	}
	var leaves []int
	for pid := range s.exitIO {
		if kids[pid] == 0 {
			leaves = append(leaves, pid)
		}
	}
	for len(leaves) > 0 {
		pid := leaves[len(leaves)-1]
		leaves = leaves[:len(leaves)-1]
		x := s.exitIO[pid]
		delete(s.exitIO, pid)
		if p, ok := s.exitIO[x.ppid]; ok && x.ppid != pid {
			p.read += x.read
			p.write += x.write
			p.cancelled += x.cancelled
			s.exitIO[x.ppid] = p
			if kids[x.ppid]--; kids[x.ppid] == 0 {
				leaves = append(leaves, x.ppid)
			}
		} else {
			s.creditParent(x.ppid, x.counters())
		}
	}
	// What is left is a cycle (PIDs reused within one interval): credit
	// it to the parents as it is.
	for pid, x := range s.exitIO {
		s.creditParent(x.ppid, x.counters())
		delete(s.exitIO, pid)
	}
}

// creditExited credits each exited process seen alive to the parent that
// reaped it, children first, closes its files and appends its exit
// event to events.
func (s *ProcScanner) creditExited(events []process.Event, now time.Time) []process.Event {
	// Exited processes we saw: children before their parents, so a
	// parent's credit includes what it absorbed from them. By their depth
	// among the exited (a child is deeper than its parent), not by start
	// time: a script and the cat it runs at once often share a start tick
	// (USER_HZ 100), and a script credited first left cat's total charged
	// to the loop that reaped the script, as if unseen children did it.
	depth := make(map[*procState]int, len(s.exited))
	for _, st := range s.exited {
		d := 0
		for p := s.exitedBy[st.ppid]; p != nil && p != st && d < len(s.exited); p = s.exitedBy[p.ppid] {
			d++
		}
		depth[st] = d
	}
	slices.SortFunc(s.exited, func(a, b *procState) int {
		if c := cmp.Compare(depth[b], depth[a]); c != 0 {
			return c
		}
		return cmp.Compare(b.start, a.start)
	})
	for _, st := range s.exited {
		s.closeFiles(st)
		s.creditReap(st)
		events = append(events, s.exitEvent(st, now))
	}
	s.exitedBy = nil
	return events
}

// sortEvents stamps events with the scan's time now and orders them by
// PID, a process's start before its exit.
func sortEvents(events []process.Event, now time.Time) {
	for i := range events {
		events[i].Time = now
	}
	slices.SortStableFunc(events, func(a, b process.Event) int {
		if c := cmp.Compare(a.PID, b.PID); c != 0 {
			return c
		}
		return cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind))
	})
}

// topByIO is the scan's top processes by I/O in the interval (at most
// Options.TopN), their metadata read again; it adds the reaped bytes of
// every candidate to stats.
func (s *ProcScanner) topByIO(stats *ScanStats) []ProcIO {
	s.cand = slices.DeleteFunc(s.cand, func(st *procState) bool { return st.ioBytes() == 0 })
	for _, st := range s.cand {
		stats.ReapedReadBytes += st.dReap.read
		stats.ReapedWriteBytes += st.dReap.write
	}
	slices.SortFunc(s.cand, func(a, b *procState) int {
		if c := cmp.Compare(b.ioBytes(), a.ioBytes()); c != 0 {
			return c
		}
		return cmp.Compare(a.pid, b.pid)
	})
	n := min(len(s.cand), s.opts.TopN)
	top := make([]ProcIO, 0, n)
	for _, st := range s.cand[:n] {
		s.readMeta(st, nil) // refresh: cheap for N processes, and catches cgroup moves
		own := st.own()
		top = append(top, ProcIO{
			PID: st.pid, PPID: st.ppid, StartTicks: st.start,
			Comm: st.comm, Exe: st.exe, Cmdline: st.cmdline, Cgroup: st.cgroup, Unit: st.unit,
			ReadBytes: own.read, WriteBytes: own.write, CancelledWriteBytes: own.cancelled,
			DeltaReadBytes: st.dRead, DeltaWriteBytes: st.dWrite, DeltaCancelledWriteBytes: st.dCancelled,
			DeltaReapedReadBytes: st.dReap.read, DeltaReapedWriteBytes: st.dReap.write,
			BlkioDelay:      s.ticks(st.blkio),
			DeltaBlkioDelay: s.ticks(st.dBlkio),
		})
	}
	return top
}

// openRoot opens the proc root, or rewinds the one kept open so that
// getdents64 lists it from the start again.
func (s *ProcScanner) openRoot() error {
	if s.rootfd >= 0 {
		if _, err := unix.Seek(s.rootfd, 0, 0); err == nil {
			return nil
		}
		unix.Close(s.rootfd)
		s.rootfd = -1
	}
	fd, err := unix.Open(s.procRoot, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: s.procRoot, Err: err}
	}
	s.rootfd = fd
	return nil
}

// Close releases the files the scanner keeps open. The scanner must not
// be used afterwards.
func (s *ProcScanner) Close() error {
	for _, st := range s.procs {
		s.closeFiles(st)
	}
	if s.rootfd >= 0 {
		unix.Close(s.rootfd)
		s.rootfd = -1
	}
	return nil
}

// closeFiles closes a process's kept-open files.
func (s *ProcScanner) closeFiles(st *procState) {
	s.closeFD(&st.statFD)
	s.closeFD(&st.ioFD)
}

func (s *ProcScanner) closeFD(fd *int) {
	if *fd >= 0 {
		unix.Close(*fd)
		s.nOpen--
		*fd = -1
	}
}

// readProcFile reads /proc/PID/name into buf: with pread on *kept when it
// is open, else by path. When the scanner keeps files open and has room,
// a file read by path stays open and is returned in *opened for the
// caller to keep (or close); *kept is closed when its read fails (the
// process is gone; the path may now name a new process).
func (s *ProcScanner) readProcFile(kept *int, opened *int, pid int, name string, buf []byte) (int, error) {
	if *kept >= 0 {
		n, err := preadFile(*kept, buf)
		if err == nil {
			return n, nil
		}
		s.closeFD(kept)
	}
	if !s.keepOpen || s.nOpen >= s.maxOpen {
		return s.readFile(s.rootfd, s.path(pid, name), buf)
	}
	path := s.path(pid, name)
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(s.rootfd),
		uintptr(unsafe.Pointer(&path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	n, err := preadFile(int(fd), buf)
	if err != nil {
		unix.Close(int(fd))
		return n, err
	}
	s.nOpen++
	*opened = int(fd)
	return n, nil
}

// preadFile reads a /proc file from offset 0 into buf, stopping at a
// short read that ends in a newline (process.ReadFile).
func preadFile(fd int, buf []byte) (int, error) { return process.ReadFile(fd, buf, true) }

// ioBytes is what ranks a process in Scan's top: its own bytes read and
// written in the interval plus those of reaped children no row holds.
func (st *procState) ioBytes() uint64 {
	return st.dRead + st.dWrite + st.dReap.read + st.dReap.write
}

func kindOrder(k process.EventKind) int {
	if k == process.Exit {
		return 0
	}
	return 1
}

// creditReap takes an exited child's totals off its parent's delta of
// this scan: the kernel added them to the parent when it reaped the child
// (see the comment at the top of this file).
func (s *ProcScanner) creditReap(child *procState) {
	// The kernel hands the parent the child's whole counters: its own
	// I/O and what it had itself absorbed from its reaped children.
	in := child.reaped.add(child.absorbedUnseen.counters())
	if child.final != nil {
		// taskstats counts the child's own I/O, exactly: one record
		// per thread, which procevents sums into the exit (checked on
		// a real threaded python3, threads ended before it and killed
		// by exit_group: sources TestThreadedProcessIOCountedOnce).
		// It may hold less than a scan saw: threads that ended before
		// the listener started, and for a multi-threaded child (not
		// split) the I/O of its own children that no scan saw, which
		// its rows held (a go test binary: 12 KiB at exit after 1.5
		// GiB in its rows). So no less than what a scan saw of it.
		c := child.final.counters()
		if child.ioKnown {
			c = c.max(child.own())
		}
		s.creditParent(child.ppid, c.add(in))
		return
	}
	if !child.ioKnown {
		return
	}
	s.creditParent(child.ppid, child.own().add(in))
}

// creditParent takes a reaped child's totals (c) off its parent's
// delta: off what reaped children brought in when the parent's delta
// was split exactly (the rest of dReap is children memdiag did not
// know), else off the parent's own delta, counting them as reaped.
func (s *ProcScanner) creditParent(ppid int, c ioCounters) {
	p := s.procs[ppid]
	if p == nil {
		p = s.exitedBy[ppid]
	}
	if p == nil {
		return
	}
	if p.gen != s.gen || !p.ioKnown {
		p.absorbedUnseen.read += c.read
		p.absorbedUnseen.write += c.write
		p.absorbedUnseen.cancelled += c.cancelled
		return
	}
	if p.splitNow {
		p.dReap = p.dReap.sub(c)
		return
	}
	if !p.split {
		p.reaped = p.reaped.add(c)
	}
	p.dRead = satSub(p.dRead, c.read)
	p.dWrite = satSub(p.dWrite, c.write)
	p.dCancelled = satSub(p.dCancelled, c.cancelled)
}

// exitIO is a process's I/O over its whole life, as taskstats reports it
// at exit.
type exitIO struct {
	ppid                   int
	read, write, cancelled uint64
}

func (x exitIO) counters() ioCounters { return ioCounters{x.read, x.write, x.cancelled} }

// NoteExits gives the scanner the exact life-time I/O of processes that
// exited (Exit events with Source "taskstats" from package procevents),
// to be used by the next Scan. A parent's /proc/PID/io grows by a reaped
// child's whole total; with exact totals Scan takes all of it off the
// parent's delta — also for children it never saw alive, which polling
// alone leaves charged to the parent. A child still present at the next
// Scan (not yet reaped) keeps its totals until it is gone.
func (s *ProcScanner) NoteExits(evs []process.Event) {
	for _, e := range evs {
		if e.Kind != process.Exit || e.Source != "taskstats" {
			continue
		}
		if s.exitIO == nil {
			s.exitIO = make(map[int]exitIO)
		}
		s.exitIO[e.PID] = exitIO{ppid: e.PPID, read: e.ReadBytes, write: e.WriteBytes}
	}
}

func satSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func (s *ProcScanner) ticks(t uint64) time.Duration {
	return time.Duration(t) * time.Second / time.Duration(s.opts.ClockTicks)
}

func (s *ProcScanner) exitEvent(st *procState, now time.Time) process.Event {
	own := st.own()
	return process.Event{
		Kind: process.Exit, Time: now, Source: "poll",
		PID: st.pid, PPID: st.ppid, StartTicks: st.start,
		Comm: st.comm, Exe: st.exe, Cmdline: st.cmdline, Cgroup: st.cgroup, Unit: st.unit,
		ReadBytes: own.read, WriteBytes: own.write,
		BlkioDelay: s.ticks(st.blkio),
	}
}

// scanOne reads one process's stat and io and updates its state. It
// returns the state (nil if the process was skipped) and an exec event
// if the process is new or exec'd.
func (s *ProcScanner) scanOne(pid int, baseline bool, stats *ScanStats) (*procState, *process.Event) {
	// Files opened by path in this call, kept by the process's state at
	// the end or closed on an early return.
	statFD, ioFD := -1, -1
	noKept := -1
	keptStat := &noKept
	st := s.procs[pid]
	if st != nil {
		keptStat = &st.statFD
	}
	n, err := s.readProcFile(keptStat, &statFD, pid, "stat", s.statBuf)
	if err != nil {
		s.countErr(pid, "stat", err, stats)
		return nil, nil
	}
	sf, ok := parseStat(s.statBuf[:n])
	if !ok {
		s.closeFD(&statFD)
		stats.Failed++
		s.fault(pid, "stat", parseFault(s.statBuf[:n], strictStat, "ppid and starttime are not numbers"))
		return nil, nil
	}

	if st != nil && st.start != sf.start {
		// PID reused: the old process exited.
		s.exited = append(s.exited, st)
		st = nil
	}
	isNew := st == nil

	cur, ioKnown, ok := s.scanIO(pid, st, &ioFD, stats)
	if !ok {
		s.closeFD(&statFD)
		return nil, nil
	}

	var ev *process.Event
	created := isNew
	if isNew {
		st = &procState{pid: pid, start: sf.start, comm: string(sf.comm), statFD: -1, ioFD: -1}
		s.procs[pid] = st
		s.readMeta(st, stats)
	} else if string(sf.comm) != st.comm { // no allocation: compiler-optimised comparison
		st.comm = string(sf.comm)
		s.readMeta(st, stats)
		isNew = true // it exec'd: report as an exec
	}
	s.account(st, cur, ioKnown, sf, st.gen == 0, baseline)
	st.dBlkio = satSub(sf.blkio, st.blkio)
	if st.gen == 0 && baseline {
		st.dBlkio = 0
	}
	st.ppid, st.blkio, st.rss, st.gen = sf.ppid, sf.blkio, sf.rss, s.gen
	s.trackGrowth(st, created)
	s.keepFDs(st, statFD, ioFD)
	if isNew {
		ev = s.pollExec(st, sf)
	}
	return st, ev
}

// scanIO reads pid's /proc/PID/io, with pread on st's kept descriptor
// when there is one, else by path (a descriptor opened then is left in
// *ioFD for the caller to keep). known is false when the file is denied
// (another user's process); ok is false when the process is to be left
// out of this scan: vanished between stat and io (if it was known it is
// reported as exited, as it is not marked seen) or a fault, counted in
// stats. On !ok nothing is left open in *ioFD.
func (s *ProcScanner) scanIO(pid int, st *procState, ioFD *int, stats *ScanStats) (cur ioCounters, known, ok bool) {
	noKept := -1
	keptIO := &noKept
	if st != nil {
		keptIO = &st.ioFD
	}
	n, err := s.readProcFile(keptIO, ioFD, pid, "io", s.fileBuf)
	switch {
	case err == nil:
		if cur.read, cur.write, cur.cancelled, ok = parseIO(s.fileBuf[:n]); !ok {
			s.closeFD(ioFD)
			stats.Failed++
			s.fault(pid, "io", parseFault(s.fileBuf[:n], strictIO, "no cancelled_write_bytes"))
			return ioCounters{}, false, false
		}
		return cur, true, true
	case process.Denied(err):
		stats.Denied++
		return ioCounters{}, false, true
	}
	s.countErr(pid, "io", err, stats)
	return ioCounters{}, false, false
}

// keepFDs keeps in st the descriptors scanOne opened by path (-1: none).
func (s *ProcScanner) keepFDs(st *procState, statFD, ioFD int) {
	if statFD >= 0 {
		s.closeFD(&st.statFD) // none normally: it was read by path because none was kept
		st.statFD = statFD
	}
	if ioFD >= 0 {
		s.closeFD(&st.ioFD)
		st.ioFD = ioFD
	}
}

// pollExec is the exec event of a process the scan found new (or that
// exec'd: its comm changed), with what it had done by now.
func (s *ProcScanner) pollExec(st *procState, sf statFields) *process.Event {
	own := st.own()
	return &process.Event{
		Kind: process.Exec, Source: "poll",
		PID: st.pid, PPID: sf.ppid, StartTicks: sf.start,
		Comm: st.comm, Exe: st.exe, Cmdline: st.cmdline, Cgroup: st.cgroup, Unit: st.unit,
		ReadBytes: own.read, WriteBytes: own.write, BlkioDelay: s.ticks(sf.blkio),
	}
}

// account takes a process's /proc/PID/io counters (cur; ioKnown false
// when unreadable) and its stat fields (sf, read before io), and sets its
// deltas for this scan: the I/O it did itself, its exited threads'
// included (dRead, dWrite, dCancelled), and what the kernel added for
// children it reaped (dReap*, before the children memdiag knows are
// taken off by creditParent). first is set for a process not seen
// before; baseline for the first scan, which has no deltas.
//
// For a single-threaded process (threads == 1) the split is exact:
// /proc/PID/task/PID/io is the thread's own counters (do_io_accounting()
// with whole=0 reports task->ioac alone), so /proc/PID/io minus it is
// what signal->ioac holds: reaped children and exited threads. It is
// read only when /proc/PID/io changed (or at first sight, to know the
// part already there), so an idle process costs nothing more. What
// signal->ioac gained is its exited threads' when it reaped no child
// meanwhile (reapMark unchanged, see [statFields]): its own I/O, as a
// threaded server's workers are the server. Otherwise the two cannot
// be told apart and the gain is dReap: "exited threads or children".
func (s *ProcScanner) account(st *procState, cur ioCounters, ioKnown bool, sf statFields, first, baseline bool) {
	prev, prevSig, prevSplit, prevKnown, prevMark := st.whole, st.sig, st.split, st.ioKnown && !first, st.mark
	st.mark = sf.reapMark
	st.dRead, st.dWrite, st.dCancelled = 0, 0, 0
	st.dReap = ioCounters{}
	st.splitNow = false
	if !ioKnown {
		st.ioKnown, st.split = false, false
		return
	}
	changed := first || !prevKnown || cur != prev
	switch {
	case sf.threads == 1 && cur == (ioCounters{}):
		st.sig, st.split = ioCounters{}, true
	case sf.threads == 1 && changed:
		if own, ok := s.readTaskIO(st); ok {
			st.sig, st.split = cur.sub(own), true
		} else {
			st.split = false
		}
	case sf.threads != 1:
		st.split = false
	}
	// Unchanged counters keep the split as it was: nothing was reaped.
	st.whole, st.ioKnown = cur, true
	switch {
	case first:
		// At first sight signal->ioac holds its whole life's reaped
		// children and exited threads: only threads when it never
		// reaped a child (its children's faults and times are 0).
		if st.split && sf.reapMark != 0 {
			st.reaped = st.sig
		}
		if baseline {
			return
		}
		// Everything it did happened since it started, in this interval.
		own := cur.sub(st.reaped)
		st.dRead, st.dWrite, st.dCancelled = own.read, own.write, own.cancelled
		st.dReap, st.splitNow = st.reaped, st.split
	case !prevKnown:
		// Readable again after being denied: no delta this time.
	case st.split && prevSplit:
		// A counter going backwards cannot happen for one process; if it
		// does, the delta is 0, never a wrapped huge value.
		if g := st.sig.sub(prevSig); g != (ioCounters{}) && (sf.reapMark != prevMark || s.reapMarkNow(st) != prevMark) {
			st.dReap = g
			st.reaped = st.reaped.add(g)
		}
		d := cur.sub(prev).sub(st.dReap)
		st.dRead, st.dWrite, st.dCancelled = d.read, d.write, d.cancelled
		st.splitNow = true
	default:
		// Multi-threaded (its live and exited threads are its own; known
		// children come off in creditParent), or split for the first
		// time since: the whole delta is its own.
		d := cur.sub(prev)
		st.dRead, st.dWrite, st.dCancelled = d.read, d.write, d.cancelled
	}
}

// reapMarkNow reads the process's stat again, after its io: a child
// reaped between the stat read of this scan and the io read shows in io
// but not in the first read's reapMark. It returns the mark, or
// MaxUint64 when the read fails (so the gain counts as reaped).
func (s *ProcScanner) reapMarkNow(st *procState) uint64 {
	n, err := s.readFile(s.rootfd, s.path(st.pid, "stat"), s.fileBuf)
	if err != nil {
		return math.MaxUint64
	}
	sf, ok := parseStat(s.fileBuf[:n])
	if !ok {
		return math.MaxUint64
	}
	return sf.reapMark
}

// readTaskIO reads the main thread's own counters,
// /proc/PID/task/PID/io. It is read by path, not kept open like stat
// and io: it is read only when the process's I/O changed, and the
// descriptors the scanner may hold are better spent on the files read
// every scan.
func (s *ProcScanner) readTaskIO(st *procState) (ioCounters, bool) {
	var c ioCounters
	n, err := s.readFile(s.rootfd, s.path(st.pid, taskIO), s.fileBuf)
	if err != nil {
		return c, false
	}
	var ok bool
	c.read, c.write, c.cancelled, ok = parseIO(s.fileBuf[:n])
	return c, ok
}

// readMeta reads the command line, program (/proc/PID/exe) and cgroup of
// a process. Failures leave the fields as they were: the process may have
// just exited, and the exe link of another user's process is unreadable
// without root. A cmdline or cgroup that is there and unusable is a
// fault of the scan, counted in stats (nil: a refresh of a process
// already read this scan, whose faults are not counted again).
func (s *ProcScanner) readMeta(st *procState, stats *ScanStats) {
	if n, err := unix.Readlinkat(s.rootfd, strconv.Itoa(st.pid)+"/exe", s.fileBuf); err == nil {
		st.exe = string(s.fileBuf[:n])
	}
	if n, err := s.readFile(s.rootfd, s.path(st.pid, "cmdline"), s.cmdBuf); err == nil {
		args := splitCmdline(s.cmdBuf[:n])
		if s.opts.KeepCmdline {
			st.cmdline = strings.Join(args, " ")
		} else {
			st.cmdline = redact.Cmdline(args)
		}
	} else if stats != nil && !process.Gone(err) && !process.Denied(err) {
		stats.Failed++
		s.fault(st.pid, "cmdline", err)
	}
	if n, err := s.readFile(s.rootfd, s.path(st.pid, "cgroup"), s.cgBuf); err == nil {
		st.cgroup, st.unit = process.ParseCgroupFile(s.cgBuf[:n])
	} else if stats != nil && !process.Gone(err) && !process.Denied(err) {
		stats.Failed++
		s.fault(st.pid, "cgroup", err)
	}
}

func splitCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// countErr counts a failed read of pid's file name by the per-process
// file policy (package process): a process that exited is vanished, a
// file of another user's process denied, anything else a fault, kept
// (the first of the scan) for [ProcScanner.Fault].
func (s *ProcScanner) countErr(pid int, name string, err error, stats *ScanStats) {
	switch {
	case process.Gone(err):
		stats.Vanished++
	case process.Denied(err):
		stats.Denied++
	default:
		stats.Failed++
		s.fault(pid, name, err)
	}
}

// fault adds the fault err of pid's file name (a read error, or a parse
// error beginning with the line number) to the scan's, naming the file:
// "<procRoot>/<pid>/<name>: err", or ":<line>: ..." for a parse error.
func (s *ProcScanner) fault(pid int, name string, err error) {
	p := s.procRoot + "/" + strconv.Itoa(pid) + "/" + name
	if errors.Is(err, process.ErrParse) {
		s.faults.Add(fmt.Errorf("%s:%w", p, err))
		return
	}
	s.faults.Add(&fs.PathError{Op: "read", Path: p, Err: err})
}

// parseFault is why b, which parse (diskio's own fast parser) refused,
// is malformed: the error of process's parser (strict), which begins
// with the line number, or "1: malformed line" when that one took it.
func parseFault(b []byte, strict func([]byte) error, what string) error {
	if len(b) == 0 {
		return fmt.Errorf("1: %w: empty file", process.ErrParse)
	}
	if err := strict(b); err != nil {
		return err
	}
	return fmt.Errorf("1: %w: %s", process.ErrParse, what)
}

func strictStat(b []byte) error { _, err := process.ParseStat(b); return err }
func strictIO(b []byte) error   { _, err := process.ParseIO(b); return err }

// Fault is why the last Scan left files out: nil when every file it
// read was usable (a process that exited or a denied file is no fault),
// else a *process.FaultError counting the per-process files that were
// there but not regular, too large or malformed (ScanStats.Failed), and
// naming the first with its line. The processes whose stat or io was
// one are missing from that scan; a cmdline or cgroup one leaves that
// field empty.
func (s *ProcScanner) Fault() error { return s.faults.Err() }

// taskIO names /proc/PID/task/PID/io, the main thread's own counters,
// for path.
const taskIO = ""

// path builds "<pid>/<file>\x00" (for taskIO "<pid>/task/<pid>/io\x00"),
// relative to the proc root, in the reused path buffer.
func (s *ProcScanner) path(pid int, file string) []byte {
	b := appendInt(s.pathBuf[:0], pid)
	b = append(b, '/')
	if file == taskIO {
		b = append(b, "task/"...)
		b = appendInt(b, pid)
		file = "io"
		b = append(b, '/')
	}
	b = append(b, file...)
	b = append(b, 0)
	s.pathBuf = b
	return b
}

func appendInt(b []byte, v int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// readFileRaw is the default readFile: openat relative to the proc root
// (so the root's path is resolved once per scan, not per file), read into
// buf, close, with no allocation. path must end in a NUL byte.
func readFileRaw(dirfd int, path, buf []byte) (int, error) {
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd),
		uintptr(unsafe.Pointer(&path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	defer unix.Close(int(fd))
	// A fresh fd at offset 0: pread from offset total is read(2), so the
	// kept-open files' loop serves (one copy of the stop rule).
	return preadFile(int(fd), buf)
}

// readFileJailed is readFile for a proc root that is not a procfs mount
// (--root): path is resolved inside the root (openat2 RESOLVE_IN_ROOT,
// so a PID folder that is a link to the host's /proc/1 leads nowhere)
// and must be a regular file (a FIFO or device is refused), then read as
// readFileRaw reads it. Kernels without openat2 (< 5.6) take the
// O_NOFOLLOW open of readFileRaw and the same regular-file check.
func readFileJailed(dirfd int, path, buf []byte) (int, error) {
	name := string(path[:len(path)-1]) // without its NUL
	fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		fd, err = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, rootfs.ErrNotRegular
	}
	return preadFile(fd, buf)
}

// listPIDs calls fn for each numeric entry of the proc root, reading the
// directory with getdents64 into a reused buffer.
func (s *ProcScanner) listPIDs(fn func(pid int)) error {
	for {
		n, err := unix.ReadDirent(s.rootfd, s.dirBuf)
		if err == unix.EINTR { //nolint:errorlint // a bare Errno from a syscall
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "getdents64", Path: s.procRoot, Err: err}
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen;
		// u8 d_type; char d_name[]; } (getdents64(2)).
		for off := 0; off+19 < n; {
			reclen := int(binary.NativeEndian.Uint16(s.dirBuf[off+16:]))
			if reclen == 0 {
				break
			}
			name := s.dirBuf[off+19 : off+reclen]
			off += reclen
			if pid, ok := parsePID(name); ok {
				fn(pid)
			}
		}
	}
}

// parsePID parses a NUL-terminated directory name made of digits only.
func parsePID(name []byte) (int, bool) {
	pid := 0
	i := 0
	for ; i < len(name) && name[i] != 0; i++ {
		c := name[i]
		if c < '0' || c > '9' || i > 9 {
			return 0, false
		}
		pid = pid*10 + int(c-'0')
	}
	return pid, pid > 0
}

// statFields are the fields of /proc/PID/stat the scanner uses.
type statFields struct {
	comm    []byte // field 2, aliasing the parsed buffer
	ppid    int    // field 4
	start   uint64 // field 22, starttime in clock ticks after boot
	rss     uint64 // field 24, resident pages (anon+file+shmem)
	threads int    // field 20, num_threads
	blkio   uint64 // field 42, delayacct_blkio_ticks (absent before Linux 2.6.18: 0)
	// reapMark is the sum of fields 11 cminflt, 13 cmajflt, 16 cutime
	// and 17 cstime: what the process's reaped children brought into its
	// signal_struct besides their I/O. kernel/exit.c wait_task_zombie()
	// adds a reaped child's faults and times to these and its I/O to
	// signal->ioac in one critical section (psig->stats_lock); a thread
	// that exits adds its I/O to signal->ioac too (__exit_signal) but
	// nothing to these. So signal->ioac growing while reapMark stays is
	// exited threads' I/O. A child that ran at all took page faults (its
	// first write after fork, or loading the program it exec'd), so a
	// reap always moves cminflt.
	reapMark uint64
}

// parseStat extracts comm (field 2), ppid (4), the children's faults
// and times (11, 13, 16, 17, summed in reapMark), num_threads (20),
// starttime (22), rss (24) and delayacct_blkio_ticks (42) from
// /proc/PID/stat. comm aliases b. ppid and starttime are required.
func parseStat(b []byte) (f statFields, ok bool) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open || closing+2 > len(b) {
		return statFields{}, false
	}
	f.comm = b[open+1 : closing]
	field := 3
	rest := b[closing+2:]
	seen := 0
	for len(rest) > 0 && field <= 42 {
		end := fieldEnd(rest)
		v := rest[:end]
		switch field {
		case 4:
			n, good := parseUint(v)
			if !good || n > math.MaxInt32 { // PIDs are at most PID_MAX_LIMIT (2^22)
				return statFields{}, false
			}
			f.ppid, seen = int(n), seen+1
		case 11, 13, 16, 17:
			if n, good := parseUint(v); good {
				f.reapMark += n
			}
		case 20:
			if n, good := parseUint(v); good && n <= math.MaxInt32 {
				f.threads = int(n)
			}
		case 22:
			n, good := parseUint(v)
			if !good {
				return statFields{}, false
			}
			f.start, seen = n, seen+1
		case 24:
			f.rss, _ = parseUint(v)
		case 42:
			f.blkio, _ = parseUint(v)
		}
		field++
		if end == len(rest) {
			break
		}
		rest = rest[end+1:]
	}
	if seen != 2 {
		return statFields{}, false
	}
	return f, true
}

// fieldEnd is the index of the first space or newline of b, len(b)
// when it has none. A plain loop: the fields of a stat line are a few
// bytes long, and bytes.IndexAny built its byte set at each of the ~40
// calls a line (BenchmarkParseStat: 587 ns a line before).
func fieldEnd(b []byte) int {
	for i, c := range b {
		if c == ' ' || c == '\n' {
			return i
		}
	}
	return len(b)
}

// cutLine splits b at its first newline: the line without it, and the
// rest (nil after the last line).
func cutLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// parseIO extracts read_bytes, write_bytes and cancelled_write_bytes from
// /proc/PID/io.
func parseIO(b []byte) (rd, wr, cw uint64, ok bool) {
	var seen uint8 // one bit per field: a field written twice counts once
	for len(b) > 0 {
		var line []byte
		line, b = cutLine(b)
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		key, val := line[:colon], bytes.TrimLeft(line[colon+1:], " ")
		var dst *uint64
		var bit uint8
		switch string(key) { // no allocation: compiler-optimised switch on string(bytes)
		case "read_bytes":
			dst, bit = &rd, 1
		case "write_bytes":
			dst, bit = &wr, 2
		case "cancelled_write_bytes":
			dst, bit = &cw, 4
		default:
			continue
		}
		v, good := parseUint(val)
		if !good {
			return 0, 0, 0, false
		}
		*dst = v
		seen |= bit
	}
	return rd, wr, cw, seen == 7
}

// parseUint parses a decimal counter; a number past 2^64-1 (which a
// 20-digit field can hold) is refused, not wrapped.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
