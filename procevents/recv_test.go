package procevents

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// nlmsg wraps payload in a struct nlmsghdr of type typ, padded to 4 bytes.
func nlmsg(typ uint16, payload []byte) []byte {
	l := unix.NLMSG_HDRLEN + len(payload)
	b := make([]byte, (l+3)&^3)
	binary.NativeEndian.PutUint32(b[0:], uint32(l))
	binary.NativeEndian.PutUint16(b[4:], typ)
	copy(b[unix.NLMSG_HDRLEN:], payload)
	return b
}

// errMsg is an NLMSG_ERROR message carrying -errno (0: an acknowledgement).
func errMsg(errno int32) []byte {
	p := make([]byte, 4+unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(p, uint32(-errno))
	return nlmsg(unix.NLMSG_ERROR, p)
}

// TestEachMessage reads datagrams built from the captured messages of
// testdata/netlink: the connector's fork and exit of PID 3387 in one
// datagram, an acknowledgement between them, and a taskstats exit behind
// its genetlink header, as readConnector and readTaskstats do.
func TestEachMessage(t *testing.T) {
	dgram := append(append(nlmsg(unix.NLMSG_DONE, readNetlink(t, "cn-fork")), errMsg(0)...), nlmsg(unix.NLMSG_DONE, readNetlink(t, "cn-exit"))...)
	var got []procEvent
	err := eachMessage(dgram, func(typ uint16, data []byte) {
		if typ != unix.NLMSG_DONE {
			t.Errorf("type %d, want NLMSG_DONE (the connector's)", typ)
		}
		ev, err := parseCnMsg(data)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].What != whatFork || got[0].PID != 3387 || got[0].ParentTGID != 3370 ||
		got[1].What != whatExit || got[1].PID != 3387 || got[1].Seq != 812647 {
		t.Errorf("events %+v, want the fork and the exit of 3387", got)
	}

	genl := append([]byte{unix.TASKSTATS_CMD_NEW, 1, 0, 0}, readNetlink(t, "taskstats-exit")...)
	n := 0
	if err := eachMessage(nlmsg(0x17, genl), func(_ uint16, data []byte) {
		te, ok, err := parseTaskstatsAttrs(data[4:])
		if err != nil || !ok || te.PID != 3387 || te.Comm != "true" || te.ReadBytes != 8192 {
			t.Errorf("taskstats: %+v ok %v err %v", te, ok, err)
		}
		n++
	}); err != nil || n != 1 {
		t.Errorf("taskstats datagram: %d messages, %v", n, err)
	}
}

// TestEachMessageErrors: a netlink error is the errno the kernel sent,
// and a datagram whose lengths do not hold is refused, after handing on
// the whole messages before the bad header.
func TestEachMessageErrors(t *testing.T) {
	if err := eachMessage(errMsg(int32(unix.ENOBUFS)), func(uint16, []byte) { t.Error("error message handed on") }); !errors.Is(err, unix.ENOBUFS) {
		t.Errorf("NLMSG_ERROR -ENOBUFS: %v, want ENOBUFS", err)
	}
	good := nlmsg(unix.NLMSG_DONE, []byte("abcd"))
	for _, c := range []struct {
		name, want string
		b          []byte
	}{
		{"short header", "7 bytes left, want a 16-byte header", append(good, 1, 2, 3, 4, 5, 6, 7)},
		{"length past the datagram", "length 100 out of [16, 20]", nil}, // built below
		{"length under a header", "length 8 out of [16, 16]", nil},
		{"error message cut", "error message: 2 bytes, want 4 or more", append(good, nlmsg(unix.NLMSG_ERROR, []byte{1, 2})...)},
	} {
		b := c.b
		switch c.name {
		case "length past the datagram":
			b = append(append([]byte{}, good...), nlmsg(3, make([]byte, 4))...)
			binary.NativeEndian.PutUint32(b[len(good):], 100)
		case "length under a header":
			b = append(append([]byte{}, good...), nlmsg(3, nil)...)
			binary.NativeEndian.PutUint32(b[len(good):], 8)
		}
		n := 0
		err := eachMessage(b, func(_ uint16, data []byte) {
			if string(data) != "abcd" {
				t.Errorf("%s: payload %q", c.name, data)
			}
			n++
		})
		if err == nil || !strings.Contains(err.Error(), c.want) || n != 1 {
			t.Errorf("%s: %d messages, error %v, want 1 and %q", c.name, n, err, c.want)
		}
	}
}

// FuzzEachMessage: no datagram panics eachMessage, and every payload it
// hands on lies within the datagram. Seeds: the captured messages.
func FuzzEachMessage(f *testing.F) {
	for _, name := range []string{"cn-fork", "cn-exit", "taskstats-exit"} {
		f.Add(nlmsg(unix.NLMSG_DONE, readNetlink(f, name)))
	}
	f.Add(errMsg(int32(unix.ENOBUFS)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		total := 0
		_ = eachMessage(b, func(_ uint16, data []byte) { total += unix.NLMSG_HDRLEN + len(data) })
		if total > len(b) {
			t.Fatalf("payloads of %d bytes from a %d-byte datagram", total, len(b))
		}
	})
}
