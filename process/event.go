// Package process is memdiag's model of a process as the lists and the
// culprit search see it: the unit it runs under, from the one parser of
// /proc/PID/cgroup and the one mapper from a cgroup to systemd units, cron
// sessions and container scopes ([ParseCgroupFile], [ControllerPath]);
// and the exec/exit [Event] that the polling scanner (package diskio) and
// the process-events connector (package procevents) both produce, which
// identifies a process across PID reuse by its PID and start time; and
// its resident memory at a sample ([RSS]).
//
// Sources: cgroups(7) "/proc/[pid]/cgroup", proc(5) /proc/PID/stat field
// 22 (starttime), https://docs.kernel.org/admin-guide/cgroup-v2.html,
// https://systemd.io/CGROUP_DELEGATION/.
package process

import "time"

// EventKind says what happened to a process between two samples.
type EventKind string

// Event kinds.
const (
	Exec EventKind = "exec" // the process was first seen (polling) or exec'd (connector)
	Exit EventKind = "exit" // the process was gone (polling) or exited (connector)
)

// Event is a process that started or exited. With polling, Time is the
// sample at which it was first or last missed, and the I/O is the last seen;
// with the process-events connector and taskstats Time is exact and the
// I/O is the task's total at exit.
type Event struct {
	Kind       EventKind     `json:"kind"`
	Time       time.Time     `json:"time"`
	Source     string        `json:"source"` // "poll", "connector", "taskstats"
	PID        int           `json:"pid"`
	PPID       int           `json:"ppid,omitempty"`
	StartTicks uint64        `json:"start_ticks,omitempty"` // /proc/PID/stat field 22, clock ticks after boot; with PID it identifies a process across PID reuse
	Comm       string        `json:"comm"`
	Exe        string        `json:"exe,omitempty"` // /proc/PID/exe at exec (or first sight); see diskio.ProcIO.Exe
	Cmdline    string        `json:"cmdline,omitempty"`
	Cgroup     string        `json:"cgroup,omitempty"`
	Unit       string        `json:"unit,omitempty"`        // unitFromCgroup(Cgroup)
	ReadBytes  uint64        `json:"read_bytes,omitempty"`  // total over the process's life, as far as seen; its own, without its reaped children's
	WriteBytes uint64        `json:"write_bytes,omitempty"` // total over the process's life, as far as seen; its own, without its reaped children's
	BlkioDelay time.Duration `json:"blkio_delay_ns,omitempty"`
	// ParentComm, ParentCmdline and ParentPPID describe the parent
	// (PPID) of an exec when its own exec was not recorded (it started
	// before the recorder, like a loop's shell): read from
	// /proc/PPID/{comm,cmdline,stat} at this exec, once per parent PID.
	// Empty otherwise.
	ParentComm    string `json:"parent_comm,omitempty"`
	ParentCmdline string `json:"parent_cmdline,omitempty"`
	ParentPPID    int    `json:"parent_ppid,omitempty"`
}

// EventStats accounts for the process events of one interval, so that a
// loss is reported, never silent.
type EventStats struct {
	Received         uint64 `json:"received"`                    // connector events read
	LostKernel       uint64 `json:"lost_kernel,omitempty"`       // gaps in the connector's per-CPU sequence numbers: dropped by the kernel (socket buffer full)
	LostBuffer       uint64 `json:"lost_buffer,omitempty"`       // events memdiag dropped because its own buffer between samples was full
	Overruns         uint64 `json:"overruns,omitempty"`          // ENOBUFS returned by a socket: events were dropped; LostKernel then counts them only in part (not on a CPU none of whose events was read before the overflow)
	TaskstatsMissing uint64 `json:"taskstats_missing,omitempty"` // process exits seen by the connector without a taskstats record
	Error            string `json:"error,omitempty"`             // a reader stopped on an unexpected error: events after it are missing
}
