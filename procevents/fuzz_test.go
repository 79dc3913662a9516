package procevents

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readNetlink reads a captured netlink payload of testdata/netlink (see
// its SOURCE).
func readNetlink(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "netlink", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseCapturedMessages decodes the real messages of a `sh -c 'exec
// /bin/true'` (PID 3387, started by the capturing test binary, PID 3370).
func TestParseCapturedMessages(t *testing.T) {
	for _, c := range []struct {
		file      string
		what      eventWhat
		pid, ppid int
		seq       uint32
		cpu       uint32
		exitCode  uint32
	}{
		{"cn-fork", whatFork, 3387, 3370, 812642, 1, 0},
		{"cn-exec-sh", whatExec, 3387, 0, 812643, 1, 0},
		{"cn-exec-true", whatExec, 3387, 0, 812646, 1, 0},
		{"cn-exit", whatExit, 3387, 3370, 812647, 1, 0},
	} {
		ev, err := parseCnMsg(readNetlink(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if ev.What != c.what || ev.PID != c.pid || ev.TGID != c.pid || ev.ParentTGID != c.ppid || ev.Seq != c.seq || ev.CPU != c.cpu || ev.ExitCode != c.exitCode {
			t.Errorf("%s: %+v, want what %#x pid %d parent %d seq %d cpu %d", c.file, ev, uint32(c.what), c.pid, c.ppid, c.seq, c.cpu)
		}
	}
	te, ok, err := parseTaskstatsAttrs(readNetlink(t, "taskstats-exit"))
	if err != nil || !ok {
		t.Fatalf("taskstats-exit: ok %v, %v", ok, err)
	}
	if te.PID != 3387 || te.TGID != 3387 || te.PPID != 3370 || te.Comm != "true" || te.ExitCode != 0 ||
		te.ReadBytes != 8192 || te.WriteBytes != 0 || te.Elapsed <= 0 || te.Elapsed > time.Second {
		t.Errorf("taskstats-exit: %+v", te)
	}
}

// FuzzParseCnMsg checks that no proc connector payload panics parseCnMsg
// and that a comm event's name is at most the kernel's 16 bytes. Seeds:
// the captured messages of testdata/netlink.
func FuzzParseCnMsg(f *testing.F) {
	for _, name := range []string{"cn-fork", "cn-exec-sh", "cn-exec-true", "cn-exit"} {
		f.Add(readNetlink(f, name))
	}
	f.Add(listenMsg(procCNMcastListen))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := parseCnMsg(b)
		if err == nil && len(ev.Comm) > 16 {
			t.Fatalf("comm %q longer than 16 bytes", ev.Comm)
		}
	})
}

// FuzzParseTaskstatsAttrs checks that no TASKSTATS_CMD_NEW payload panics
// the decoder, that a decoded exit has a comm of at most the struct's 32
// bytes and no negative duration (a counter past what a Duration holds is
// refused, not wrapped). Seed: the captured exit of testdata/netlink.
func FuzzParseTaskstatsAttrs(f *testing.F) {
	f.Add(readNetlink(f, "taskstats-exit"))
	f.Fuzz(func(t *testing.T, b []byte) {
		te, ok, err := parseTaskstatsAttrs(b)
		if err != nil || !ok {
			return
		}
		if len(te.Comm) > 32 {
			t.Fatalf("comm %q longer than 32 bytes", te.Comm)
		}
		if te.BlkioDelay < 0 || te.RunTime < 0 || te.Elapsed < 0 {
			t.Fatalf("negative duration: %+v", te)
		}
	})
}

// TestTaskstatsFuzzFindings: what FuzzParseTaskstatsAttrs found (its input
// is kept in testdata/fuzz): an ac_etime past 2^63 ns wrapped Elapsed to
// a negative duration. Such a struct is refused now.
func TestTaskstatsFuzzFindings(t *testing.T) {
	for _, ts := range []unix.Taskstats{
		{Ac_pid: 1, Ac_etime: math.MaxInt64 / 1000 * 2},
		{Ac_pid: 1, Cpu_run_real_total: math.MaxInt64 + 1},
		{Ac_pid: 1, Blkio_delay_total: math.MaxUint64},
	} {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts))
		var te taskExit
		if err := decodeTaskstats(b, &te); err == nil {
			t.Errorf("decodeTaskstats accepted %+v as %+v", ts, te)
		}
	}
	ok := unix.Taskstats{Ac_pid: 1, Ac_etime: 49844, Cpu_run_real_total: 12e6}
	var te taskExit
	if err := decodeTaskstats(unsafe.Slice((*byte)(unsafe.Pointer(&ok)), unsafe.Sizeof(ok)), &te); err != nil ||
		te.Elapsed != 49844*time.Microsecond || te.RunTime != 12*time.Millisecond {
		t.Errorf("decodeTaskstats = %+v, %v; want elapsed 49.844ms, run 12ms", te, err)
	}
}

// TestParseTGIDReply decodes a real reply to TASKSTATS_CMD_GET by TGID
// (testdata/netlink/taskstats-tgid-reply, SOURCE): a shell rereading a
// 150 MB file in a 48 MiB memory group with kernel.task_delayacct 1.
func TestParseTGIDReply(t *testing.T) {
	b := readNetlink(t, "taskstats-tgid-reply")
	d, ok, err := parseTGIDReply(b)
	if err != nil || !ok {
		t.Fatalf("ok %v, %v", ok, err)
	}
	t.Logf("%+v", d)
	if d.Reclaim <= 0 || d.ReclaimCount == 0 || d.Blkio <= 0 || d.BlkioCount == 0 {
		t.Errorf("%+v: want reclaim and block I/O waits", d)
	}
	if _, _, err := parseTGIDReply(b[:len(b)-300]); err == nil {
		t.Error("a truncated struct taskstats decoded without an error")
	}
	// An exit's AGGR_PID message is not a TGID reply.
	if _, ok, err := parseTGIDReply(readNetlink(t, "taskstats-exit")); ok || err != nil {
		t.Errorf("taskstats-exit as a TGID reply: ok %v, %v", ok, err)
	}
}

// FuzzParseTGIDReply: no reply panics the decoder, and a decoded one has
// no negative delay.
func FuzzParseTGIDReply(f *testing.F) {
	f.Add(readNetlink(f, "taskstats-tgid-reply"))
	f.Add(readNetlink(f, "taskstats-exit"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, ok, err := parseTGIDReply(b)
		if err != nil || !ok {
			return
		}
		if d.Reclaim < 0 || d.Thrashing < 0 || d.Swapin < 0 || d.Compact < 0 || d.Blkio < 0 {
			t.Fatalf("negative delay: %+v", d)
		}
	})
}
