package procevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// receiver reads a netlink socket's datagrams into one buffer it keeps,
// with one read(2) each, waiting in the runtime's poller while none is
// queued.
//
// mdlayher/netlink's Receive, which the readers used before, costs far
// more per datagram than the kernel's work: it peeks at each datagram
// (recvmsg MSG_PEEK|MSG_TRUNC) to size a new buffer, reads it with a
// second recvmsg, and mdlayher/socket starts a goroutine per receive to
// watch for cancellation. For every fork, exec and exit of the host's
// process churn (and each taskstats record) that was two system calls,
// a goroutine, a buffer and a Sockaddr: 30 % of watch's allocations and
// most of the events listener's CPU in the N = 1000 profile
// (docs/benchmarks.md, "Round four"). Reading ends when the socket is
// closed (Listener.Close), as before.
type receiver struct {
	rc  syscall.RawConn
	buf []byte
}

// recvBuffer is each receiver's buffer. A proc connector datagram is one
// netlink message with a cn_msg and a proc_event (under 200 bytes); a
// taskstats one is a few hundred bytes (struct taskstats version 16 is
// 456). A datagram that fills it is reported as cut, never parsed.
const recvBuffer = 64 << 10

func newReceiver(c interface {
	SyscallConn() (syscall.RawConn, error)
}) (*receiver, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &receiver{rc: rc, buf: make([]byte, recvBuffer)}, nil
}

// errCut is a datagram as large as the buffer: possibly cut by read(2).
var errCut = errors.New("netlink datagram of 64 KiB or more: not read")

// receive waits for the next datagram and returns it; it is valid until
// the next call. Errors are the socket's (ENOBUFS: the kernel dropped
// messages) or the poller's (the socket was closed).
func (r *receiver) receive() ([]byte, error) {
	var n int
	var rerr error
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = unix.Read(int(fd), r.buf)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return nil, err
	case rerr != nil:
		return nil, fmt.Errorf("netlink read: %w", rerr)
	case n >= len(r.buf):
		return nil, errCut
	}
	return r.buf[:n], nil
}

// eachMessage calls fn with the type and payload of each netlink message
// in datagram b (struct nlmsghdr, each message aligned to 4 bytes), in
// order. A netlink error message (NLMSG_ERROR) with a non-zero errno is
// returned as that errno, as netlink.Conn.Receive did; an
// acknowledgement (errno 0) is skipped. A header that does not fit the
// datagram ends it with an error; the messages before it were handed on.
func eachMessage(b []byte, fn func(typ uint16, payload []byte)) error {
	ne := binary.NativeEndian
	for len(b) > 0 {
		if len(b) < unix.NLMSG_HDRLEN {
			return fmt.Errorf("netlink message: %d bytes left, want a %d-byte header", len(b), unix.NLMSG_HDRLEN)
		}
		l := int(ne.Uint32(b[0:]))
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return fmt.Errorf("netlink message: length %d out of [%d, %d]", l, unix.NLMSG_HDRLEN, len(b))
		}
		typ, payload := ne.Uint16(b[4:]), b[unix.NLMSG_HDRLEN:l]
		if typ == unix.NLMSG_ERROR {
			if len(payload) < 4 {
				return fmt.Errorf("netlink error message: %d bytes, want 4 or more", len(payload))
			}
			if errno := int64(int32(ne.Uint32(payload))); errno != 0 {
				return fmt.Errorf("netlink: %w", syscall.Errno(max(errno, -errno))) // the kernel sends -errno
			}
		} else {
			fn(typ, payload)
		}
		b = b[min((l+3)&^3, len(b)):]
	}
	return nil
}
