package procevents

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Delays is a process's delay accounting summed over its threads, live
// and exited, as TASKSTATS_CMD_GET with TASKSTATS_CMD_ATTR_TGID returns
// it (struct taskstats, include/uapi/linux/taskstats.h; the fields are
// described in Documentation/accounting/delay-accounting.rst and
// taskstats-struct.rst). Each total is the time, in ns, that the
// process's threads waited for that reason since they started, counted
// only while kernel.task_delayacct is 1; each count is how many such
// waits there were.
type Delays struct {
	// Reclaim is freepages_delay_total: waiting in direct memory
	// reclaim, the allocation path reclaiming because free memory ran
	// low (the document's "RECLAIM").
	Reclaim      time.Duration
	ReclaimCount uint64
	// Thrashing is thrashing_delay_total: waiting for a page that was
	// evicted from the page cache or swap and is read back soon after
	// (a refault of the workingset).
	Thrashing      time.Duration
	ThrashingCount uint64
	// Swapin is swapin_delay_total: waiting for pages to be read from
	// swap.
	Swapin      time.Duration
	SwapinCount uint64
	// Compact is compact_delay_total: waiting in memory compaction.
	Compact      time.Duration
	CompactCount uint64
	// Blkio is blkio_delay_total: waiting for synchronous block I/O.
	Blkio      time.Duration
	BlkioCount uint64
}

// TGIDQuerier asks the kernel's taskstats interface (generic netlink
// family "TASKSTATS", CONFIG_TASKSTATS) for one process's delays.
type TGIDQuerier struct {
	c   *genetlink.Conn
	fam genetlink.Family
}

// NewTGIDQuerier opens a taskstats connection. It needs no privilege to
// open; the kernel answers a query for another user's process only to
// root (CAP_NET_ADMIN is not needed for TASKSTATS_CMD_GET).
func NewTGIDQuerier() (*TGIDQuerier, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, unavailable("taskstats", err)
	}
	fam, err := c.GetFamily(unix.TASKSTATS_GENL_NAME)
	if err != nil {
		c.Close()
		return nil, unavailable("taskstats (kernel without CONFIG_TASKSTATS?)", err)
	}
	return &TGIDQuerier{c: c, fam: fam}, nil
}

// Close closes the connection.
func (q *TGIDQuerier) Close() error { return q.c.Close() }

// ErrNoProcess is TGID's error for a process that no longer exists.
var ErrNoProcess = errors.New("no such process")

// TGID returns the delays of process tgid, summed over its threads.
func (q *TGIDQuerier) TGID(tgid int) (Delays, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.TASKSTATS_CMD_ATTR_TGID, uint32(tgid))
	data, err := ae.Encode()
	if err != nil {
		return Delays{}, err
	}
	msgs, err := q.c.Execute(genetlink.Message{Header: genetlink.Header{Command: unix.TASKSTATS_CMD_GET, Version: q.fam.Version}, Data: data},
		q.fam.ID, netlink.Request)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return Delays{}, fmt.Errorf("taskstats of pid %d: %w", tgid, ErrNoProcess)
		}
		return Delays{}, fmt.Errorf("taskstats of pid %d: %w", tgid, err)
	}
	for _, m := range msgs {
		d, ok, err := parseTGIDReply(m.Data)
		if err != nil {
			return Delays{}, fmt.Errorf("taskstats of pid %d: %w", tgid, err)
		}
		if ok {
			return d, nil
		}
	}
	return Delays{}, fmt.Errorf("taskstats of pid %d: the reply holds no TASKSTATS_TYPE_AGGR_TGID", tgid)
}

// parseTGIDReply decodes the attributes of a TASKSTATS_CMD_NEW reply to a
// TGID query: an AGGR_TGID nest holding TGID and STATS.
func parseTGIDReply(b []byte) (d Delays, ok bool, err error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return d, false, err
	}
	for ad.Next() {
		if ad.Type() != unix.TASKSTATS_TYPE_AGGR_TGID {
			continue
		}
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			for nad.Next() {
				if nad.Type() == unix.TASKSTATS_TYPE_STATS {
					var err error
					if d, err = decodeDelays(nad.Bytes()); err != nil {
						return err
					}
					ok = true
				}
			}
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		return Delays{}, false, err
	}
	return d, ok, nil
}

// decodeDelays reads the delay fields of a struct taskstats. The
// thrashing and compaction fields came in taskstats version 10 (kernel
// 5.14); a shorter struct is an error, not zeros.
func decodeDelays(b []byte) (Delays, error) {
	var ts unix.Taskstats
	need := int(unsafe.Offsetof(ts.Compact_delay_total)) + 8
	if len(b) < need {
		return Delays{}, fmt.Errorf("struct taskstats of %d bytes is shorter than the %d bytes up to compact_delay_total (kernel before 5.14)", len(b), need)
	}
	n := min(len(b), taskstatsSize)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), taskstatsSize), b[:n])
	for _, v := range []uint64{ts.Freepages_delay_total, ts.Thrashing_delay_total, ts.Swapin_delay_total, ts.Compact_delay_total, ts.Blkio_delay_total} {
		if v > math.MaxInt64 {
			return Delays{}, fmt.Errorf("struct taskstats: a delay past 292 years (%d ns)", v)
		}
	}
	return Delays{
		Reclaim: time.Duration(ts.Freepages_delay_total), ReclaimCount: ts.Freepages_count,
		Thrashing: time.Duration(ts.Thrashing_delay_total), ThrashingCount: ts.Thrashing_count,
		Swapin: time.Duration(ts.Swapin_delay_total), SwapinCount: ts.Swapin_count,
		Compact: time.Duration(ts.Compact_delay_total), CompactCount: ts.Compact_count,
		Blkio: time.Duration(ts.Blkio_delay_total), BlkioCount: ts.Blkio_count,
	}, nil
}
