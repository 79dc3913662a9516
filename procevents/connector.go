// Package procevents records every process exec, fork and exit as it
// happens, with the task's own I/O at exit, so that short-lived children of
// a periodic job are attributed to themselves and their unit rather than
// missed between samples or charged to their parent.
//
// Two kernel facilities are used together:
//
//   - the process-events connector (netlink NETLINK_CONNECTOR, group
//     CN_IDX_PROC; include/uapi/linux/cn_proc.h, drivers/connector/cn_proc.c):
//     fork, exec, comm and exit events with a per-CPU sequence number, so
//     events the kernel dropped are counted exactly;
//   - taskstats (generic netlink family "TASKSTATS",
//     https://docs.kernel.org/accounting/taskstats.html): registering a CPU
//     mask makes the kernel send each exiting task's struct taskstats —
//     read_bytes, write_bytes, cancelled_write_bytes, block-I/O delay, run
//     time — to the listener.
//
// Both need CAP_NET_ADMIN (root) in the initial network and PID namespace.
// Without them [Open] returns a *hostenv.Unavailable and memdiag falls back to
// polling /proc.
//
// [StallSnapshot] lists, at a stall onset, the processes to blame (those
// of a cgroup, or the host's in uninterruptible sleep) with their I/O.
package procevents

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Connector constants from include/uapi/linux/connector.h and cn_proc.h.
const (
	cnIdxProc          = 1
	cnValProc          = 1
	procCNMcastListen  = 1
	procCNMcastIgnore  = 2
	cnMsgHeaderLen     = 20 // struct cn_msg without data
	procEventHeaderLen = 16 // what, cpu, timestamp_ns
)

// eventWhat is a proc_event's type (enum what in cn_proc.h).
type eventWhat uint32

// Event types memdiag reads.
const (
	whatNone eventWhat = 0x00000000
	whatFork eventWhat = 0x00000001
	whatExec eventWhat = 0x00000002
	whatComm eventWhat = 0x00000200
	whatExit eventWhat = 0x80000000
)

// procEvent is one decoded proc connector event (struct proc_event).
type procEvent struct {
	What        eventWhat
	CPU         uint32
	Seq         uint32 // cn_msg seq: per-CPU counter; a gap means lost events
	TimestampNS uint64 // ktime_get_ns(): CLOCK_MONOTONIC ns
	PID, TGID   int    // the task (exec, comm, exit) or the child (fork)
	ParentPID   int    // fork: parent pid; exit: parent pid (kernels >= 4.16, else 0)
	ParentTGID  int
	ExitCode    uint32 // exit: wait status
	Comm        string // comm events
}

// errShort is returned for a message shorter than its fixed layout.
var errShort = errors.New("proc connector message too short")

// parseCnMsg decodes one cn_msg carrying a proc_event (data is the netlink
// payload, host byte order).
func parseCnMsg(b []byte) (procEvent, error) {
	var ev procEvent
	if len(b) < cnMsgHeaderLen {
		return ev, errShort
	}
	ne := binary.NativeEndian
	idx, val := ne.Uint32(b[0:]), ne.Uint32(b[4:])
	if idx != cnIdxProc || val != cnValProc {
		return ev, fmt.Errorf("not a proc connector message (idx %d val %d)", idx, val)
	}
	ev.Seq = ne.Uint32(b[8:])
	n := int(ne.Uint16(b[16:]))
	data := b[cnMsgHeaderLen:]
	if n > len(data) {
		return ev, errShort
	}
	data = data[:n]
	if len(data) < procEventHeaderLen {
		return ev, errShort
	}
	ev.What = eventWhat(ne.Uint32(data[0:]))
	ev.CPU = ne.Uint32(data[4:])
	ev.TimestampNS = ne.Uint64(data[8:])
	d := data[procEventHeaderLen:]
	u32 := func(i int) uint32 {
		if len(d) < (i+1)*4 {
			return 0
		}
		return ne.Uint32(d[i*4:])
	}
	switch ev.What {
	case whatFork:
		ev.ParentPID, ev.ParentTGID = int(u32(0)), int(u32(1))
		ev.PID, ev.TGID = int(u32(2)), int(u32(3))
	case whatExec:
		ev.PID, ev.TGID = int(u32(0)), int(u32(1))
	case whatComm:
		ev.PID, ev.TGID = int(u32(0)), int(u32(1))
		if len(d) >= 8+16 {
			c := d[8 : 8+16]
			for i, x := range c {
				if x == 0 {
					c = c[:i]
					break
				}
			}
			ev.Comm = string(c)
		}
	case whatExit:
		ev.PID, ev.TGID = int(u32(0)), int(u32(1))
		ev.ExitCode = u32(2)
		ev.ParentPID, ev.ParentTGID = int(u32(4)), int(u32(5))
	}
	return ev, nil
}

// listenMsg is the cn_msg that subscribes (op=PROC_CN_MCAST_LISTEN) or
// unsubscribes (PROC_CN_MCAST_IGNORE) a socket.
func listenMsg(op uint32) []byte {
	b := make([]byte, cnMsgHeaderLen+4)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], cnIdxProc)
	ne.PutUint32(b[4:], cnValProc)
	ne.PutUint16(b[16:], 4)
	ne.PutUint32(b[20:], op)
	return b
}

// seqTracker counts events lost by the kernel: the proc connector numbers
// the events of each CPU consecutively, so a gap in one CPU's sequence is
// exactly the number of events dropped for that CPU.
type seqTracker struct {
	last map[uint32]uint32
	lost uint64
}

func (s *seqTracker) observe(cpu, seq uint32) {
	if s.last == nil {
		s.last = map[uint32]uint32{}
	}
	if prev, ok := s.last[cpu]; ok && seq != prev+1 {
		// Wrap-safe: seq is a u32 counter.
		gap := seq - prev - 1
		if gap < 1<<31 {
			s.lost += uint64(gap)
		}
	}
	s.last[cpu] = seq
}
