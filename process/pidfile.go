package process

// The per-process files memdiag reads outside the per-second scanner
// (package diskio's ProcScanner keeps its own reused buffers): `mem`'s
// top processes, a victim's identity, the stall snapshot at an onset, the
// live host's init and cron daemon. Each file is read through package
// rootfs inside the proc root — a regular file only (procfs files are
// regular; a FIFO, socket or device such as a link to /dev/zero is
// refused), opened O_NONBLOCK, a link never leaving the root, at most
// PIDFileLimit bytes, stopped when the context is done — and parsed here
// with errors that name the file and line, so that a fixture tree or an
// image given to --root cannot hang memdiag, fill its memory or panic
// it. prometheus/procfs's Proc methods open with a plain os.Open (a FIFO
// blocks it, a link is followed out of the root) and say only "could not
// parse", so memdiag no longer calls them for per-process files.
//
// Source: proc(5) and https://docs.kernel.org/filesystems/proc.html
// (Table 1-2 status, Table 1-4 stat, "1.1 Process-Specific Subdirectories").

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// PIDFileLimit bounds one /proc/PID file read whole, as prometheus/procfs
// bounds them (util.ReadFileNoStat, 1 MiB): a kernel's stat is under
// 1 KiB, status under 2 KiB, smaps_rollup under 1 KiB; a cmdline is
// capped by its caller.
const PIDFileLimit = 1 << 20

// ErrParse is wrapped when a per-process file is not in the kernel's
// format: a field missing, not a number, or out of range.
var ErrParse = errors.New("malformed line")

// ReadPIDFile reads <procRoot>/<pid>/<name> inside procRoot (see the
// package comment), at most limit bytes (PIDFileLimit when limit ≤ 0).
// A process that exited gives an fs.ErrNotExist or ESRCH error; a file
// over the limit an error wrapping rootfs.ErrTooLarge.
func ReadPIDFile(ctx context.Context, procRoot string, pid int, name string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = PIDFileLimit
	}
	return rootfs.ReadFile(ctx, procRoot, strconv.Itoa(pid)+"/"+name, limit)
}

// pidPath is the path errors name: <procRoot>/<pid>/<name>.
func pidPath(procRoot string, pid int, name string) string {
	return strings.TrimSuffix(procRoot, "/") + "/" + strconv.Itoa(pid) + "/" + name
}

// Stat is the fields of /proc/PID/stat memdiag uses (proc(5), "stat"):
// "15706 (python3) S 15700 ... ".
type Stat struct {
	PID        int    // field 1
	Comm       string // field 2 without its parentheses; it may hold spaces and ')'
	State      string // field 3: R, S, D (uninterruptible sleep), Z, T, t, X, I
	PPID       int    // field 4
	NumThreads int    // field 20
	StartTicks uint64 // field 22: start time in clock ticks (USER_HZ) after boot
}

// ParseStat parses /proc/PID/stat. The comm ends at the last ')' (it may
// contain spaces and parentheses). A file without the 22 fields it reads,
// or with a field that is not a number in range, is an error wrapping
// ErrParse that begins with the line number ("1: ...").
func ParseStat(b []byte) (Stat, error) {
	var s Stat
	line := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		if rest := bytes.TrimSpace(b[i+1:]); len(rest) > 0 {
			return s, fmt.Errorf("2: %w: stat is one line, more follows", ErrParse)
		}
		line = b[:i]
	}
	open := bytes.IndexByte(line, '(')
	closing := bytes.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return s, fmt.Errorf("1: %w: no (comm)", ErrParse)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line[:open])))
	if err != nil || pid <= 0 || pid > maxPID {
		return s, fmt.Errorf("1: %w: pid %q", ErrParse, clip(line[:open]))
	}
	s.PID = pid
	s.Comm = string(line[open+1 : closing])
	f := bytes.Fields(line[closing+1:]) // f[0] is field 3
	if len(f) < 20 {
		return s, fmt.Errorf("1: %w: %d fields, want at least 22", ErrParse, len(f)+2)
	}
	s.State = string(f[0])
	num := func(field int, max uint64) (uint64, error) {
		v, err := strconv.ParseUint(string(f[field-3]), 10, 64)
		if err != nil || v > max {
			return 0, fmt.Errorf("1: %w: field %d %q", ErrParse, field, clip(f[field-3]))
		}
		return v, nil
	}
	ppid, err := num(4, maxPID)
	if err != nil {
		return s, err
	}
	threads, err := num(20, maxPID)
	if err != nil {
		return s, err
	}
	start, err := num(22, ^uint64(0))
	if err != nil {
		return s, err
	}
	s.PPID, s.NumThreads, s.StartTicks = int(ppid), int(threads), start
	return s, nil
}

// maxPID is PID_MAX_LIMIT (2^22, include/linux/threads.h): no PID, and
// no count of a process's threads, is above it.
const maxPID = 1 << 22

// clip is b for an error message: at most 32 bytes, quoted by the caller.
func clip(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "…"
	}
	return string(b)
}

// ReadStat reads and parses <procRoot>/<pid>/stat (see [ParseStat]); a
// parse error begins with the file's path and line ("…/12/stat:1: …").
func ReadStat(ctx context.Context, procRoot string, pid int) (Stat, error) {
	b, err := ReadPIDFile(ctx, procRoot, pid, "stat", 0)
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(b)
	if err != nil {
		return s, fmt.Errorf("%s:%w", pidPath(procRoot, pid, "stat"), err)
	}
	return s, nil
}

// ParseCmdline splits /proc/PID/cmdline, arguments ended by NUL bytes,
// into its arguments; a kernel thread's empty file gives none. A last
// argument without its NUL (a file cut at a read limit) is kept as read.
func ParseCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// ReadCmdline reads <procRoot>/<pid>/cmdline, its first limit bytes
// (the kernel's is at most ARG_MAX, 2 MiB by default): a longer command
// line is cut there, not refused.
func ReadCmdline(ctx context.Context, procRoot string, pid int, limit int64) ([]string, error) {
	f, err := rootfs.Open(procRoot, strconv.Itoa(pid)+"/cmdline")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := make([]byte, limit)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("read %s: %w", pidPath(procRoot, pid, "cmdline"), err)
	}
	return ParseCmdline(b[:n]), nil
}

// commMax is the longest comm memdiag takes: the kernel's is at most 15
// bytes (TASK_COMM_LEN 16); workqueue threads show up to 63 since 6.x.
const commMax = 64

// ParseComm parses /proc/PID/comm: one line, the name without its
// newline. A name over 64 bytes, or holding a NUL or a second line, is an
// error wrapping ErrParse that begins with the line number.
func ParseComm(b []byte) (string, error) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return "", fmt.Errorf("2: %w: comm is one line, more follows", ErrParse)
	}
	if len(b) > commMax || bytes.IndexByte(b, 0) >= 0 {
		return "", fmt.Errorf("1: %w: not a task name (%d bytes)", ErrParse, len(b))
	}
	return string(b), nil
}

// ReadComm reads and parses <procRoot>/<pid>/comm (see [ParseComm]).
func ReadComm(ctx context.Context, procRoot string, pid int) (string, error) {
	b, err := ReadPIDFile(ctx, procRoot, pid, "comm", 4<<10)
	if err != nil {
		return "", err
	}
	c, err := ParseComm(b)
	if err != nil {
		return "", fmt.Errorf("%s:%w", pidPath(procRoot, pid, "comm"), err)
	}
	return c, nil
}

// IO is the fields of /proc/PID/io memdiag uses, in bytes
// (Documentation/filesystems/proc.rst, "1.6 /proc/<pid>/io").
type IO struct {
	ReadBytes           uint64 // read_bytes: bytes this process caused to be fetched from storage
	WriteBytes          uint64 // write_bytes: bytes this process caused to be sent to storage
	CancelledWriteBytes uint64 // cancelled_write_bytes: dirty page cache truncated before writeback
}

// ParseIO parses /proc/PID/io ("read_bytes: 4096" lines). read_bytes and
// write_bytes must be there; a value that is not a number, or a line
// without a colon, is an error wrapping ErrParse that begins with its
// line number.
func ParseIO(b []byte) (IO, error) {
	var out IO
	var seen int
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return out, fmt.Errorf("%d: %w: no colon", i+1, ErrParse)
		}
		var dst *uint64
		switch k {
		case "read_bytes":
			dst, seen = &out.ReadBytes, seen|1
		case "write_bytes":
			dst, seen = &out.WriteBytes, seen|2
		case "cancelled_write_bytes":
			dst = &out.CancelledWriteBytes
		default:
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return out, fmt.Errorf("%d: %w: %s %q", i+1, ErrParse, k, clip([]byte(strings.TrimSpace(v))))
		}
		*dst = n
	}
	if seen != 3 {
		return out, fmt.Errorf("1: %w: no read_bytes and write_bytes", ErrParse)
	}
	return out, nil
}

// ReadIO reads and parses <procRoot>/<pid>/io (see [ParseIO]).
func ReadIO(ctx context.Context, procRoot string, pid int) (IO, error) {
	b, err := ReadPIDFile(ctx, procRoot, pid, "io", 0)
	if err != nil {
		return IO{}, err
	}
	v, err := ParseIO(b)
	if err != nil {
		return v, fmt.Errorf("%s:%w", pidPath(procRoot, pid, "io"), err)
	}
	return v, nil
}

// Rollup is what memdiag reads of /proc/PID/smaps_rollup (Linux ≥ 4.14,
// fs/proc/task_mmu.c), in bytes: the resident and proportional set
// sizes of one walk of the process's mappings, so Pss ≤ Rss (status's
// VmRSS, read at another moment, may be below a growing process's Pss).
type Rollup struct {
	Rss uint64 // "Rss:": resident pages, whoever else maps them
	Pss uint64 // "Pss:": each resident page divided by the processes mapping it
}

// ParseRollup returns the Rss and Pss of /proc/PID/smaps_rollup, from
// their "Rss:" and "Pss:" lines, in kB (KiB). A file without one of
// them, or with a value that is not "N kB" or past 2^64 bytes, is an
// error wrapping ErrParse that begins with the line number.
func ParseRollup(b []byte) (Rollup, error) {
	var r Rollup
	lines := strings.Split(string(b), "\n")
	var err error
	if r.Rss, err = kBLine(lines, "Rss"); err != nil {
		return Rollup{}, err
	}
	if r.Pss, err = kBLine(lines, "Pss"); err != nil {
		return Rollup{}, err
	}
	return r, nil
}

// kBLine is the value of the first "NAME: N kB" line of lines, in bytes.
func kBLine(lines []string, name string) (uint64, error) {
	for i, line := range lines {
		v, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%d: %w: %s %q, want N kB", i+1, ErrParse, name, clip([]byte(v)))
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || n > ^uint64(0)>>10 {
			return 0, fmt.Errorf("%d: %w: %s %q", i+1, ErrParse, name, clip([]byte(f[0])))
		}
		return n << 10, nil // kB here is KiB (fs/proc/task_mmu.c, SEQ_PUT_DEC ... " kB")
	}
	return 0, fmt.Errorf("1: %w: no %s line", ErrParse, name)
}

// ReadRollup reads <procRoot>/<pid>/smaps_rollup once and returns its Rss
// and Pss in bytes (see [ParseRollup]).
func ReadRollup(ctx context.Context, procRoot string, pid int) (Rollup, error) {
	b, err := ReadPIDFile(ctx, procRoot, pid, "smaps_rollup", 0)
	if err != nil {
		return Rollup{}, err
	}
	r, err := ParseRollup(b)
	if err != nil {
		return Rollup{}, fmt.Errorf("%s:%w", pidPath(procRoot, pid, "smaps_rollup"), err)
	}
	return r, nil
}

// OpenExe opens the program of process pid (<procRoot>/<pid>/exe) for
// reading its build information, as a regular file. When procRoot is a
// procfs mount (statfs PROC_SUPER_MAGIC), exe is the kernel's "magic"
// link (which openat2's RESOLVE_NO_MAGICLINKS refuses): it is opened by
// its path, non-blocking. In a fixture tree it is opened inside procRoot
// (rootfs), so that a link to a FIFO or device is refused and one out of
// the root leads nowhere.
func OpenExe(procRoot string, pid int) (*os.File, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(procRoot, &st); err != nil || st.Type != unix.PROC_SUPER_MAGIC {
		// A fixture tree: its exe is an ordinary link or file, opened
		// inside the root.
		return rootfs.Open(procRoot, strconv.Itoa(pid)+"/exe")
	}
	// A real procfs: the kernel's magic link, by its path. (Trying the
	// jailed open first and falling back on its ELOOP failed once in CI
	// as nobody with another error, and the build information was not
	// read: the procfs case no longer depends on that error.)
	p := pidPath(procRoot, pid, "exe")
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: rootfs.ErrNotRegular}
	}
	return f, nil
}

// Exe is the target of <procRoot>/<pid>/exe (the program the process
// runs since its last exec), read with the folders before it resolved
// inside procRoot.
func Exe(procRoot string, pid int) (string, error) {
	return rootfs.Readlink(procRoot, strconv.Itoa(pid)+"/exe")
}

// FDTargets returns the targets of the links in <procRoot>/<pid>/fd
// ("socket:[1234]", "/var/log/x.log"), the folder opened inside procRoot
// and each link read relative to it (readlinkat(2)), so a fixture's fd
// folder that is a link out of the root, or a FIFO, is never listed or
// waited on. A descriptor closed while listing is skipped.
func FDTargets(procRoot string, pid int) ([]string, error) {
	d, err := rootfs.OpenDir(procRoot, strconv.Itoa(pid)+"/fd")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: pidPath(procRoot, pid, "fd"), Err: err}
	}
	out := make([]string, 0, len(names))
	buf := make([]byte, 4096)
	for _, n := range names {
		k, err := unix.Readlinkat(int(d.Fd()), n, buf)
		if err != nil {
			continue // closed since the listing, or not a link
		}
		out = append(out, string(buf[:k]))
	}
	return out, nil
}
