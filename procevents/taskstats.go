package procevents

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/hostenv"
)

// taskExit is one exiting task's accounting from struct taskstats
// (include/uapi/linux/taskstats.h), as the kernel sends it to listeners
// registered with TASKSTATS_CMD_ATTR_REGISTER_CPUMASK.
type taskExit struct {
	PID, TGID, PPID     int
	Comm                string
	ExitCode            uint32
	ReadBytes           uint64        // bytes this task caused to be read from storage
	WriteBytes          uint64        // bytes this task caused to be written (dirtied)
	CancelledWriteBytes uint64        // dirtied then truncated before writeback
	BlkioDelay          time.Duration // zero unless kernel.task_delayacct=1
	RunTime             time.Duration // cpu_run_real_total
	Elapsed             time.Duration // ac_etime: wall time since the task started
	BeginTime           time.Time     // ac_btime64 (or ac_btime on old kernels)
}

// taskstatsSize is the size of struct taskstats this build knows; kernels
// of other versions send a shorter or longer struct whose common prefix has
// the same layout (the struct is only ever extended at its end).
const taskstatsSize = int(unsafe.Sizeof(unix.Taskstats{}))

// parseTaskstatsAttrs decodes the attributes of a TASKSTATS_CMD_NEW
// message: an AGGR_PID (or AGGR_TGID) nest holding PID and STATS.
// ok is false for aggregates memdiag does not use (AGGR_TGID carries only
// delay totals).
func parseTaskstatsAttrs(b []byte) (te taskExit, ok bool, err error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return te, false, err
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.TASKSTATS_TYPE_AGGR_PID:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					switch nad.Type() {
					case unix.TASKSTATS_TYPE_PID:
						te.PID = int(nad.Uint32())
					case unix.TASKSTATS_TYPE_STATS:
						if err := decodeTaskstats(nad.Bytes(), &te); err != nil {
							return err
						}
						ok = true
					}
				}
				return nil
			})
		case unix.TASKSTATS_TYPE_AGGR_TGID, unix.TASKSTATS_TYPE_NULL:
		}
	}
	if err := ad.Err(); err != nil {
		return te, false, err
	}
	return te, ok, nil
}

func decodeTaskstats(b []byte, te *taskExit) error {
	var ts unix.Taskstats
	minLen := int(unsafe.Offsetof(ts.Cancelled_write_bytes)) + 8
	if len(b) < minLen {
		return fmt.Errorf("struct taskstats of %d bytes is shorter than the %d bytes up to cancelled_write_bytes", len(b), minLen)
	}
	n := min(len(b), taskstatsSize)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), taskstatsSize), b[:n])
	te.PID = int(ts.Ac_pid)
	te.PPID = int(ts.Ac_ppid)
	te.TGID = te.PID
	if n >= int(unsafe.Offsetof(ts.Ac_tgid))+4 && ts.Ac_tgid != 0 {
		te.TGID = int(ts.Ac_tgid)
	}
	c := ts.Ac_comm[:]
	buf := make([]byte, 0, len(c))
	for _, x := range c {
		if x == 0 {
			break
		}
		buf = append(buf, byte(x))
	}
	te.Comm = string(buf)
	te.ExitCode = ts.Ac_exitcode
	te.ReadBytes, te.WriteBytes, te.CancelledWriteBytes = ts.Read_bytes, ts.Write_bytes, ts.Cancelled_write_bytes
	// Counters past what a Duration holds (292 years) are no kernel's;
	// refused rather than wrapped to a negative time (found by
	// FuzzParseTaskstatsAttrs).
	if ts.Blkio_delay_total > math.MaxInt64 || ts.Cpu_run_real_total > math.MaxInt64 || ts.Ac_etime > math.MaxInt64/uint64(time.Microsecond) {
		return fmt.Errorf("struct taskstats: a delay or time past 292 years (blkio_delay_total %d ns, cpu_run_real_total %d ns, ac_etime %d µs)",
			ts.Blkio_delay_total, ts.Cpu_run_real_total, ts.Ac_etime)
	}
	te.BlkioDelay = time.Duration(ts.Blkio_delay_total)
	te.RunTime = time.Duration(ts.Cpu_run_real_total)
	te.Elapsed = time.Duration(ts.Ac_etime) * time.Microsecond
	if n >= int(unsafe.Offsetof(ts.Ac_btime64))+8 && ts.Ac_btime64 != 0 {
		te.BeginTime = time.Unix(int64(ts.Ac_btime64), 0)
	} else if ts.Ac_btime != 0 {
		te.BeginTime = time.Unix(int64(ts.Ac_btime), 0)
	}
	return nil
}

// unavailable says process events cannot be used here, why, and what the
// user can do (memdiag then falls back to polling), as memdiag's one
// *hostenv.Unavailable: Path names the interface.
func unavailable(what string, err error) error {
	hint := "falling back to polling /proc, which misses processes that live shorter than the interval"
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		hint = "needs root (CAP_NET_ADMIN) in the initial namespaces; " + hint
	}
	return &hostenv.Unavailable{Path: what, Need: err.Error(), Hint: hint, Err: err}
}
