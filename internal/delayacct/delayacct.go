// Package delayacct turns the kernel's per-task delay accounting
// (kernel.task_delayacct, /proc/sys/kernel/task_delayacct; needed for
// delayacct_blkio_ticks in /proc/PID/stat and taskstats' blkio delay,
// https://docs.kernel.org/accounting/delay-accounting.html) on for a
// recording and back off after it, and remembers that it did so.
//
// Before the switch is written, a state file (<root>/run/memdiag/
// task_delayacct.json) records the old value, the new one, memdiag's PID
// with its start time, and the boot; restoring removes it. A run that
// ended without restoring (SIGKILL, a crash) leaves the file, and the next
// run of watch or record reads it ([Leftover]): it says the switch was
// left on and restores the old value. A PID since reused by another
// process does not pass for the run (its start time differs), and a
// state file of an earlier boot is dropped (the switch was reset then).
package delayacct

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/internal/outfile"
	"github.com/memdiag/memdiag/internal/rootfs"
)

// state is the content of the state file.
type state struct {
	PID   int       `json:"pid"`
	Start time.Time `json:"start"`
	Old   string    `json:"old"` // the value before memdiag wrote New
	New   string    `json:"new"`
	// PIDStart is field 22 of /proc/PID/stat (starttime, clock ticks
	// after boot) of the run that wrote the file: with BootID, what tells
	// it from a later process given the same PID. Empty when unread.
	PIDStart string `json:"pid_start,omitempty"`
	// BootID is /proc/sys/kernel/random/boot_id when the file was
	// written: the switch is 0 again after a reboot.
	BootID string `json:"boot_id,omitempty"`
}

// Paths are the sysctl file and the state file under a root.
type Paths struct {
	Sysctl string // <proc>/sys/kernel/task_delayacct
	State  string // <root>/run/memdiag/task_delayacct.json
	Proc   string // <proc>: PIDs' start times and the boot ID
}

// PathsFor returns the paths for the filesystem root (and its proc).
func PathsFor(root, procRoot string) Paths {
	return Paths{
		Sysctl: filepath.Join(procRoot, "sys/kernel/task_delayacct"),
		State:  filepath.Join(root, "run/memdiag/task_delayacct.json"),
		Proc:   procRoot,
	}
}

// pidStart is the starttime field of <proc>/PID/stat, "" when unreadable.
// The command (field 2) may hold spaces and parentheses: fields are
// counted after its last ')'.
func (p Paths) pidStart(pid int) string {
	if p.Proc == "" {
		return ""
	}
	b, err := rootfs.ReadPath(context.Background(), filepath.Join(p.Proc, strconv.Itoa(pid), "stat"), rootfs.ProcLimit)
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	// After the command: state is field 3, starttime field 22.
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// bootID is <proc>/sys/kernel/random/boot_id, "" when unreadable.
func (p Paths) bootID() string {
	if p.Proc == "" {
		return ""
	}
	b, err := rootfs.ReadPath(context.Background(), filepath.Join(p.Proc, "sys/kernel/random/boot_id"), rootfs.ProcLimit)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// running reports whether the run that wrote st is still alive: its PID
// exists and, where both are known, has the start time recorded.
func (p Paths) running(st state) bool {
	if st.PID <= 0 || !alive(st.PID) {
		return false
	}
	if st.PIDStart == "" {
		return true // an older state file: the PID alone
	}
	now := p.pidStart(st.PID)
	return now == "" || now == st.PIDStart
}

// Leftover checks for a state file left by a memdiag run that did not
// restore the switch. If that run is gone and the switch still has the
// value it set, the old value is written back. The note says what was
// found and done ("" when there was nothing to say).
func Leftover(p Paths) (note string) {
	b, err := readState(p.State)
	if err != nil {
		return ""
	}
	var st state
	if json.Unmarshal(b, &st) != nil || st.Old == "" {
		_ = os.Remove(p.State)
		return ""
	}
	if st.BootID != "" {
		if b := p.bootID(); b != "" && b != st.BootID {
			_ = os.Remove(p.State)
			return "" // written before a reboot, which reset the switch
		}
	}
	if st.PID != os.Getpid() && p.running(st) {
		return "" // that run is still recording; it restores the switch itself
	}
	cur, err := rootfs.ReadPath(context.Background(), p.Sysctl, rootfs.ProcLimit)
	if err != nil {
		return ""
	}
	left := fmt.Sprintf("kernel.task_delayacct was left at %s by a memdiag run (pid %d, started %s) that ended without restoring it (killed?); it was %s before",
		st.New, st.PID, st.Start.Local().Format("2006-01-02 15:04:05"), st.Old)
	if strings.TrimSpace(string(cur)) != st.New {
		_ = os.Remove(p.State)
		return "" // changed since by someone else: theirs now
	}
	if err := os.WriteFile(p.Sysctl, []byte(st.Old), 0o644); err != nil {
		return left + fmt.Sprintf("; could not restore it (%v): run sysctl kernel.task_delayacct=%s as root", err, st.Old)
	}
	_ = os.Remove(p.State)
	return left + "; restored it to " + st.Old
}

// Set writes on (1) or off (0) to the switch and returns the function
// that restores the old value. The state file is written first, so a run
// killed before restore leaves a record for [Leftover].
func Set(p Paths, on bool, now time.Time) (restore func(), err error) {
	oldB, err := rootfs.ReadPath(context.Background(), p.Sysctl, rootfs.ProcLimit)
	if err != nil {
		return nil, err
	}
	old := strings.TrimSpace(string(oldB))
	v := "0"
	if on {
		v = "1"
	}
	if old == v {
		return func() {}, nil // nothing to restore
	}
	b, err := json.Marshal(state{PID: os.Getpid(), Start: now, Old: old, New: v,
		PIDStart: p.pidStart(os.Getpid()), BootID: p.bootID()})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p.State), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Dir(p.State), err)
	}
	if err := writeState(p.State, b); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.Sysctl, []byte(v), 0o644); err != nil {
		_ = os.Remove(p.State)
		return nil, fmt.Errorf("%s: %w (needs root)", p.Sysctl, err)
	}
	done := false
	return func() {
		if done {
			return
		}
		done = true
		if os.WriteFile(p.Sysctl, []byte(old), 0o644) == nil {
			_ = os.Remove(p.State)
		}
	}, nil
}

// stateLimit bounds the state file read back (a real one is ~120 bytes).
const stateLimit = 64 << 10

// writeState writes the state file the way memdiag writes every file
// (outfile): 0600, never through a symbolic link planted at the path
// (memdiag runs as root: a link to /etc/shadow must not be truncated),
// never into a FIFO or device, never truncating a file with other hard
// links.
func writeState(path string, b []byte) error {
	f, err := outfile.Create(path, outfile.Options{Overwrite: true})
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readState reads the state file if it is a regular file, not through a
// symbolic link, without blocking on a FIFO, at most stateLimit bytes.
func readState(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, stateLimit))
}

// alive reports whether a process with pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
