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

import "time"

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

	// ReadBytes, WriteBytes and CancelledWriteBytes are cumulative and,
	// like the deltas below, the process's own: /proc/PID/io's
	// read_bytes (storage layer), write_bytes and cancelled_write_bytes
	// less what the kernel added for children it reaped (exact for a
	// single-threaded process, from /proc/PID/task/PID/io; for others,
	// the known children's totals), as taskstats' exit totals are.
	ReadBytes           uint64 `json:"read_bytes"`
	WriteBytes          uint64 `json:"write_bytes"`
	CancelledWriteBytes uint64 `json:"cancelled_write_bytes"`

	DeltaReadBytes           uint64 `json:"d_read_bytes"`            // since the previous sample (or since start for a new process)
	DeltaWriteBytes          uint64 `json:"d_write_bytes"`           // since the previous sample
	DeltaCancelledWriteBytes uint64 `json:"d_cancelled_write_bytes"` // since the previous sample

	// DeltaReapedReadBytes and DeltaReapedWriteBytes are the bytes the
	// kernel added to this process's /proc/PID/io in the interval for
	// children it reaped that memdiag did not see to their end (started
	// and ended between two samples, or wrote after the last sample that
	// saw them) and for which no exit record gave the total: those
	// children's own I/O, which no other row holds — or the I/O of the
	// process's threads that exited in an interval in which it also
	// reaped a child: the kernel adds both to signal->ioac, and /proc
	// cannot tell them apart then (in an interval without a reap, exited
	// threads' I/O is the process's own, in the Delta*Bytes above). They
	// are not in the Delta*Bytes above, nor in ReadBytes/WriteBytes.
	// Known only for single-threaded processes (see [ProcScanner.Scan]);
	// 0 otherwise.
	DeltaReapedReadBytes  uint64 `json:"d_reaped_read_bytes,omitempty"`
	DeltaReapedWriteBytes uint64 `json:"d_reaped_write_bytes,omitempty"`

	BlkioDelay time.Duration `json:"blkio_delay_ns,omitempty"` // /proc/PID/stat delayacct_blkio_ticks; zero unless kernel.task_delayacct=1

	DeltaBlkioDelay time.Duration `json:"d_blkio_delay_ns,omitempty"` // BlkioDelay since the previous sample
}

// ScanStats counts what one per-process scan saw, so permission problems
// and races are reported, not hidden.
type ScanStats struct {
	Processes int `json:"processes"`          // PIDs listed
	Denied    int `json:"denied,omitempty"`   // /proc/PID/io unreadable (EACCES/EPERM): another user's process and we are not root
	Vanished  int `json:"vanished,omitempty"` // exited between listing and reading
	Failed    int `json:"failed,omitempty"`   // other read or parse errors of one process's files (skipped)
	// ReapedReadBytes and ReapedWriteBytes sum the processes'
	// DeltaReaped*Bytes: I/O of reaped children that no process row and
	// no exit record holds, counted once, attributed to no process.
	ReapedReadBytes  uint64 `json:"reaped_read_bytes,omitempty"`
	ReapedWriteBytes uint64 `json:"reaped_write_bytes,omitempty"`
}
