// Package diskio reads disk I/O per block device (/proc/diskstats) and per
// process (/proc/PID/io, /proc/PID/stat), and, by polling, notes the
// processes that started or exited between two samples as package
// process's events; a process's cgroup and unit come from package process
// (the one mapper).
//
// Sources: https://docs.kernel.org/admin-guide/iostats.html (diskstats),
// https://docs.kernel.org/filesystems/proc.html ("/proc/<pid>/io",
// "/proc/<pid>/stat"), https://docs.kernel.org/admin-guide/cgroup-v2.html.
package diskio

import (
	"time"

	"github.com/memdiag/memdiag/process"
)

// Disk is one whole block device's cumulative counters from
// /proc/diskstats, converted to bytes (sectors are always 512 bytes in that
// file, whatever the device's sector size) and durations (the file reports
// milliseconds).
type Disk struct {
	Name        string        `json:"name"`
	Reads       uint64        `json:"reads"`       // completed read requests
	Writes      uint64        `json:"writes"`      // completed write requests
	ReadBytes   uint64        `json:"read_bytes"`  // sectors read × 512
	WriteBytes  uint64        `json:"write_bytes"` // sectors written × 512
	IOTicks     time.Duration `json:"io_ticks_ns"` // time with I/O in flight ("io_ticks"); Δ/Δwall = busy share
	TimeInQueue time.Duration `json:"weighted_ns"` // weighted time doing I/O; Δ/Δwall = "disk I/O time/s"
	InFlight    uint64        `json:"in_flight"`   // requests in flight at read time
}

// ProcIO is one process's I/O as seen at one sample: cumulative counters
// from /proc/PID/io and the change since the previous sample.
type ProcIO struct {
	PID        int    `json:"pid"`
	PPID       int    `json:"ppid,omitempty"`
	StartTicks uint64 `json:"start_ticks"` // /proc/PID/stat field 22, clock ticks after boot; with PID it identifies a process across PID reuse
	Comm       string `json:"comm"`
	Exe        string `json:"exe,omitempty"`     // /proc/PID/exe: the program it runs, "" when unreadable; argv[0] and an interpreter's script are in Cmdline
	Cmdline    string `json:"cmdline,omitempty"` // redacted unless --keep-cmdline
	Cgroup     string `json:"cgroup,omitempty"`  // the path of the unified (or name=systemd) hierarchy
	Unit       string `json:"unit,omitempty"`    // systemd unit derived from Cgroup, e.g. "pmlogger_check.service"

	ReadBytes           uint64 `json:"read_bytes"`            // cumulative, /proc/PID/io read_bytes (storage layer)
	WriteBytes          uint64 `json:"write_bytes"`           // cumulative, /proc/PID/io write_bytes
	CancelledWriteBytes uint64 `json:"cancelled_write_bytes"` // cumulative

	DeltaReadBytes           uint64 `json:"d_read_bytes"`            // since the previous sample (or since start for a new process)
	DeltaWriteBytes          uint64 `json:"d_write_bytes"`           // since the previous sample
	DeltaCancelledWriteBytes uint64 `json:"d_cancelled_write_bytes"` // since the previous sample

	BlkioDelay time.Duration `json:"blkio_delay_ns,omitempty"` // /proc/PID/stat delayacct_blkio_ticks; zero unless kernel.task_delayacct=1

	DeltaBlkioDelay time.Duration `json:"d_blkio_delay_ns,omitempty"` // BlkioDelay since the previous sample
}

// EventKind, Exec, Exit and ProcEvent are package process's event, the
// one type the scanner here and the process-events connector produce.
//
// Deprecated: use process.EventKind, process.Exec, process.Exit and
// process.Event; the aliases stay while other branches use them.
type EventKind = process.EventKind

// Event kinds (process.Exec, process.Exit).
const (
	Exec = process.Exec
	Exit = process.Exit
)

// ProcEvent is process.Event.
type ProcEvent = process.Event

// ScanStats counts what one per-process scan saw, so permission problems
// and races are reported, not hidden.
type ScanStats struct {
	Processes int `json:"processes"`          // PIDs listed
	Denied    int `json:"denied,omitempty"`   // /proc/PID/io unreadable (EACCES/EPERM): another user's process and we are not root
	Vanished  int `json:"vanished,omitempty"` // exited between listing and reading
	Failed    int `json:"failed,omitempty"`   // other read or parse errors of one process's files (skipped)
}
