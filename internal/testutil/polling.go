package testutil

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// PollingOn reports whether a thread of process pid is blocked in
// ppoll(2) on two descriptors, the first of them fd, with no timeout:
// what rootfs.Stdin's reader does while it waits for input on standard
// input (fd) and on its wake pipe (unix.Poll(fds, -1) is ppoll with a
// NULL timeout on every Linux architecture). A memdiag process seen there
// has set its signal handler (cmd.Main does before it runs a command) and
// is blocked where Ctrl-C must wake it, which a test can wait for instead
// of sleeping a guess of a start's length.
//
// Source: /proc/PID/task/TID/syscall, "NR arg1 … arg6 SP PC" in hex for
// a thread blocked in a system call ("running" or "-1 SP PC" otherwise;
// fs/proc/base.c proc_pid_syscall, proc(5)); the first pollfd (int32 fd,
// int16 events, int16 revents) read at arg1's address from /proc/PID/mem.
// Both need ptrace read access to pid: the caller's own process or a
// child of the same user.
func PollingOn(pid, fd int) (bool, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	if err != nil {
		return false, err
	}
	if len(tasks) == 0 {
		return false, fmt.Errorf("process %d: %w", pid, fs.ErrNotExist)
	}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			continue // a thread that ended since the listing
		}
		if err != nil {
			return false, err
		}
		f := strings.Fields(string(b))
		if len(f) < 4 || f[0] != strconv.Itoa(unix.SYS_PPOLL) || f[2] != "0x2" || f[3] != "0x0" {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err != nil {
			return false, fmt.Errorf("%s: %w: %q", p, err, b)
		}
		polled, err := firstPollFd(pid, addr)
		if err != nil {
			return false, err
		}
		if polled == fd {
			return true, nil
		}
	}
	return false, nil
}

// firstPollFd reads the fd of the pollfd at addr in pid's memory.
func firstPollFd(pid int, addr uint64) (int, error) {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	var b [4]byte
	if _, err := mem.ReadAt(b[:], int64(addr)); err != nil {
		return 0, fmt.Errorf("%s at %#x: %w", mem.Name(), addr, err)
	}
	return int(int32(binary.NativeEndian.Uint32(b[:]))), nil
}

// FdOf is f's descriptor, read without f.Fd(), which would make it
// blocking: what a test passes to PollingOn for a file of its own.
func FdOf(t testing.TB, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// WaitPollingOn waits until PollingOn(pid, fd) holds, looking every 10
// ms, and fails t if it does not within bound (a hang bound: minutes on
// a starved host, not a timing) or if ended is closed first (the process
// ended before it got there; nil when the caller cannot tell). An error
// of a look is reported only at the bound, but for a permission error:
// a process that is ending leaves its files half gone for a moment
// before ended is closed.
func WaitPollingOn(t testing.TB, pid, fd int, bound time.Duration, ended <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ok, err := PollingOn(pid, fd)
		if ok {
			return
		}
		if errors.Is(err, fs.ErrPermission) {
			// Not an ending process: no ptrace read access to it (a
			// sandbox's policy), which waiting will not change.
			t.Fatalf("process %d waiting on fd %d: %v", pid, fd, err)
		}
		select {
		case <-ended:
			t.Fatalf("process %d ended before it waited on fd %d", pid, fd)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not blocked waiting on fd %d within %s (last look: %v)", pid, fd, bound, err)
		}
		select {
		case <-ended:
		case <-time.After(10 * time.Millisecond):
		}
	}
}
