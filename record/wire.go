package record

import (
	"encoding/json"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/swap"
	"github.com/memdiag/memdiag/timers"
)

// The wire types: every struct a recording line carries is declared here,
// in package record, with the JSON names of schema 1
// (testdata/v1/schema.txt), so that the collectors' own structs and tags
// can change without changing the file.
//
// A wire type mirrors its collector's struct field for field, and the
// conversions between them are Go conversions (VMStat(v)): the compiler
// accepts one only while both structs have the same fields, in the same
// order, with the same types, ignoring tags. So a field added, removed,
// renamed, retyped or moved in a collector's struct is a compile error
// here, and has to be decided on (a new field in the wire type, under a
// new JSON name, or left out by an explicit conversion); a JSON tag
// changed in a collector's struct changes nothing, because the recording
// is written and read with the tags below. PSI and ProcRetention are the
// exceptions: their nested types are converted field by field; TestWireConversions checks
// that every collector field survives a round trip through its wire type,
// and TestWireSchemaV1 that every path of schema 1 is still written.

// PSILine is one pressure line (psi.Line): avg10/avg60/avg300 in percent
// of wall time (kernel EWMAs), Total the cumulative stall time, written in
// µs ("total_us") as the kernel reports it.
// Source: /proc/pressure/* and <cgroup>/*.pressure,
// https://docs.kernel.org/accounting/psi.html.
type PSILine struct {
	Avg10  float64
	Avg60  float64
	Avg300 float64
	Total  time.Duration
}

type psiLineJSON struct {
	Avg10   float64 `json:"avg10"`
	Avg60   float64 `json:"avg60"`
	Avg300  float64 `json:"avg300"`
	TotalUS int64   `json:"total_us"`
}

// MarshalJSON writes the line with its total in µs ("total_us").
func (l PSILine) MarshalJSON() ([]byte, error) {
	return json.Marshal(psiLineJSON{l.Avg10, l.Avg60, l.Avg300, l.Total.Microseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes, with the recording
// reader's decoder (github.com/goccy/go-json: six lines a sample). The
// line exactly as MarshalJSON writes it is read by hand ([parsePSILine]),
// anything else by the decoder.
func (l *PSILine) UnmarshalJSON(b []byte) error {
	if p, ok := parsePSILine(b); ok {
		*l = p
		return nil
	}
	var j psiLineJSON
	if err := gojson.Unmarshal(b, &j); err != nil {
		return err
	}
	*l = PSILine{j.Avg10, j.Avg60, j.Avg300, time.Duration(j.TotalUS) * time.Microsecond}
	return nil
}

// PSIResource is one pressure file (psi.Resource). Full is nil where the
// kernel has no "full" line (cpu before 5.13).
type PSIResource struct {
	Some PSILine  `json:"some"`
	Full *PSILine `json:"full,omitempty"`
}

// PSI is one read of a scope's pressure files (psi.Snapshot); a resource
// the kernel lacks is nil.
type PSI struct {
	Memory *PSIResource `json:"memory,omitempty"`
	IO     *PSIResource `json:"io,omitempty"`
	CPU    *PSIResource `json:"cpu,omitempty"`
}

// Get returns the resource by name ("memory", "io", "cpu"), or nil.
func (p *PSI) Get(resource string) *PSIResource {
	if p == nil {
		return nil
	}
	switch resource {
	case "memory":
		return p.Memory
	case "io":
		return p.IO
	case "cpu":
		return p.CPU
	}
	return nil
}

// FromPSI is the wire form of a PSI snapshot; nil for nil.
func FromPSI(s *psi.Snapshot) *PSI {
	if s == nil {
		return nil
	}
	res := func(r *psi.Resource) *PSIResource {
		if r == nil {
			return nil
		}
		return &PSIResource{Some: PSILine(r.Some), Full: (*PSILine)(r.Full)}
	}
	return &PSI{Memory: res(s.Memory), IO: res(s.IO), CPU: res(s.CPU)}
}

// Snapshot is p as package psi's type, for psi's and signal's functions;
// nil for nil. The full lines are shared, not copied.
func (p *PSI) Snapshot() *psi.Snapshot {
	if p == nil {
		return nil
	}
	c := new(psiSnapshot)
	return p.snapshot(c)
}

// psiSnapshot holds a converted snapshot and its resources in one
// allocation (a sample's readings are built for every interval).
type psiSnapshot struct {
	s   psi.Snapshot
	res [3]psi.Resource
}

// snapshot converts p into c and returns c's snapshot; nil for nil.
func (p *PSI) snapshot(c *psiSnapshot) *psi.Snapshot {
	if p == nil {
		return nil
	}
	res := func(i int, r *PSIResource) *psi.Resource {
		if r == nil {
			return nil
		}
		c.res[i] = psi.Resource{Some: psi.Line(r.Some), Full: (*psi.Line)(r.Full)}
		return &c.res[i]
	}
	c.s = psi.Snapshot{Memory: res(0, p.Memory), IO: res(1, p.IO), CPU: res(2, p.CPU)}
	return &c.s
}

// Meminfo is the recorded subset of /proc/meminfo in bytes (lru.Meminfo:
// the file's kB × 1024). A nil field was absent on the recording's
// kernel, which is not zero.
type Meminfo struct {
	MemTotal     *uint64 `json:"mem_total_bytes,omitempty"`
	MemFree      *uint64 `json:"mem_free_bytes,omitempty"`
	MemAvailable *uint64 `json:"mem_available_bytes,omitempty"` // since 3.14
	Buffers      *uint64 `json:"buffers_bytes,omitempty"`
	Cached       *uint64 `json:"cached_bytes,omitempty"`
	SwapCached   *uint64 `json:"swap_cached_bytes,omitempty"`
	ActiveAnon   *uint64 `json:"active_anon_bytes,omitempty"`
	InactiveAnon *uint64 `json:"inactive_anon_bytes,omitempty"`
	ActiveFile   *uint64 `json:"active_file_bytes,omitempty"`
	InactiveFile *uint64 `json:"inactive_file_bytes,omitempty"`
	Unevictable  *uint64 `json:"unevictable_bytes,omitempty"`
	Dirty        *uint64 `json:"dirty_bytes,omitempty"`
	Writeback    *uint64 `json:"writeback_bytes,omitempty"`
	Shmem        *uint64 `json:"shmem_bytes,omitempty"`
	SwapTotal    *uint64 `json:"swap_total_bytes,omitempty"`
	SwapFree     *uint64 `json:"swap_free_bytes,omitempty"`
}

// FromMeminfo is the wire form of m, sharing its values; nil for nil.
func FromMeminfo(m *lru.Meminfo) *Meminfo { return (*Meminfo)(m) }

// LRU is m as package lru's type (the same memory), for the signal
// catalogue and lru's methods; nil for nil.
func (m *Meminfo) LRU() *lru.Meminfo { return (*lru.Meminfo)(m) }

// VMStat holds the recorded /proc/vmstat counters (lru.VMStat), each
// cumulative since boot and mapped to one meaning across kernel versions
// (Header.VMStatMapping says from which counters). A nil field had no
// counter on the recording's kernel. For a cgroup (Sample.CgroupVMStat)
// the same meanings come from its memory.stat and memory.events.
type VMStat struct {
	PgscanKswapd          *uint64 `json:"pgscan_kswapd_pages,omitempty"`
	PgscanDirect          *uint64 `json:"pgscan_direct_pages,omitempty"`
	PgstealKswapd         *uint64 `json:"pgsteal_kswapd_pages,omitempty"`
	PgstealDirect         *uint64 `json:"pgsteal_direct_pages,omitempty"`
	WorkingsetRefaultFile *uint64 `json:"workingset_refault_file_pages,omitempty"` // workingset_refault before 5.9
	WorkingsetRefaultAnon *uint64 `json:"workingset_refault_anon_pages,omitempty"` // since 5.9
	WorkingsetActivate    *uint64 `json:"workingset_activate_pages,omitempty"`     // file+anon since 5.9
	Pgmajfault            *uint64 `json:"pgmajfault,omitempty"`                    // events
	Allocstall            *uint64 `json:"allocstall,omitempty"`                    // direct reclaim entries; sum of allocstall_* zones
	OOMKill               *uint64 `json:"oom_kill,omitempty"`                      // since 4.13
	Pswpin                *uint64 `json:"pswpin_pages,omitempty"`
	Pswpout               *uint64 `json:"pswpout_pages,omitempty"`
	PgscanAnon            *uint64 `json:"pgscan_anon_pages,omitempty"` // all reclaim, also at cgroup limits; since 5.8
	PgscanFile            *uint64 `json:"pgscan_file_pages,omitempty"`
	PgstealAnon           *uint64 `json:"pgsteal_anon_pages,omitempty"`
	PgstealFile           *uint64 `json:"pgsteal_file_pages,omitempty"`
	WorkingsetRestore     *uint64 `json:"workingset_restore_pages,omitempty"` // file+anon since 5.9; since 4.20
}

// FromVMStat is the wire form of v, sharing its values; nil for nil.
func FromVMStat(v *lru.VMStat) *VMStat { return (*VMStat)(v) }

// LRU is v as package lru's type (the same memory); nil for nil.
func (v *VMStat) LRU() *lru.VMStat { return (*lru.VMStat)(v) }

// Disk is one whole block device's cumulative counters (diskio.Disk,
// from /proc/diskstats): bytes are sectors × 512, durations the file's
// milliseconds.
type Disk struct {
	Name        string        `json:"name"`
	Reads       uint64        `json:"reads"`
	Writes      uint64        `json:"writes"`
	ReadBytes   uint64        `json:"read_bytes"`
	WriteBytes  uint64        `json:"write_bytes"`
	IOTicks     time.Duration `json:"io_ticks_ns"` // time with I/O in flight; Δ/Δwall = busy share
	TimeInQueue time.Duration `json:"weighted_ns"` // weighted time doing I/O; Δ/Δwall = "disk I/O time/s"
	InFlight    uint64        `json:"in_flight"`
}

// FromDisks is the wire form of ds.
func FromDisks(ds []diskio.Disk) []Disk {
	return convert(ds, func(d diskio.Disk) Disk { return Disk(d) })
}

// diskioDisks is ds as package diskio's type, for diskio's and signal's
// functions.
func diskioDisks(ds []Disk) []diskio.Disk {
	return convert(ds, func(d Disk) diskio.Disk { return diskio.Disk(d) })
}

// ProcIO is one process's I/O at a sample (diskio.ProcIO): cumulative
// /proc/PID/io counters and their change since the previous sample.
type ProcIO struct {
	PID        int    `json:"pid"`
	PPID       int    `json:"ppid,omitempty"`
	StartTicks uint64 `json:"start_ticks"` // /proc/PID/stat field 22; with PID, identity across PID reuse
	Comm       string `json:"comm"`
	Exe        string `json:"exe,omitempty"`
	Cmdline    string `json:"cmdline,omitempty"` // redacted unless --no-redact
	Cgroup     string `json:"cgroup,omitempty"`
	Unit       string `json:"unit,omitempty"`

	ReadBytes           uint64 `json:"read_bytes"`
	WriteBytes          uint64 `json:"write_bytes"`
	CancelledWriteBytes uint64 `json:"cancelled_write_bytes"`

	DeltaReadBytes           uint64 `json:"d_read_bytes"`
	DeltaWriteBytes          uint64 `json:"d_write_bytes"`
	DeltaCancelledWriteBytes uint64 `json:"d_cancelled_write_bytes"`

	// I/O the kernel added to this process's counters in the interval for
	// children it reaped that no other row or exit record holds; not in
	// the Delta*Bytes above (added after schema 1 was frozen).
	DeltaReapedReadBytes  uint64 `json:"d_reaped_read_bytes,omitempty"`
	DeltaReapedWriteBytes uint64 `json:"d_reaped_write_bytes,omitempty"`

	BlkioDelay time.Duration `json:"blkio_delay_ns,omitempty"` // zero unless kernel.task_delayacct=1

	DeltaBlkioDelay time.Duration `json:"d_blkio_delay_ns,omitempty"`
}

// FromProcs is the wire form of ps.
func FromProcs(ps []diskio.ProcIO) []ProcIO {
	return convert(ps, func(p diskio.ProcIO) ProcIO { return ProcIO(p) })
}

// Event is a process that started or exited (process.Event). Kind is
// process.Exec or process.Exit, written as the strings "exec" and "exit".
type Event struct {
	Kind       process.EventKind `json:"kind"`
	Time       time.Time         `json:"time"`
	Source     string            `json:"source"` // "poll", "connector", "taskstats"
	PID        int               `json:"pid"`
	PPID       int               `json:"ppid,omitempty"`
	StartTicks uint64            `json:"start_ticks,omitempty"`
	Comm       string            `json:"comm"`
	Exe        string            `json:"exe,omitempty"`
	Cmdline    string            `json:"cmdline,omitempty"`
	Cgroup     string            `json:"cgroup,omitempty"`
	Unit       string            `json:"unit,omitempty"`
	ReadBytes  uint64            `json:"read_bytes,omitempty"`  // over the process's life, as far as seen
	WriteBytes uint64            `json:"write_bytes,omitempty"` // over the process's life, as far as seen
	BlkioDelay time.Duration     `json:"blkio_delay_ns,omitempty"`
	// ParentComm, ParentCmdline, ParentPPID: on an exec whose parent's own
	// exec was not recorded (it started before the recorder, like a
	// loop's shell), the parent's identity from /proc/PPID at that exec,
	// once per parent PID (process.Event; docs/recording.md).
	ParentComm    string `json:"parent_comm,omitempty"`
	ParentCmdline string `json:"parent_cmdline,omitempty"`
	ParentPPID    int    `json:"parent_ppid,omitempty"`
}

// FromEvents is the wire form of es.
func FromEvents(es []process.Event) []Event {
	return convert(es, func(e process.Event) Event { return Event(e) })
}

// ProcessEvents is es as package process's type.
func ProcessEvents(es []Event) []process.Event {
	return convert(es, func(e Event) process.Event { return process.Event(e) })
}

// ScanStats counts what one per-process scan saw (diskio.ScanStats).
type ScanStats struct {
	Processes int `json:"processes"`
	Denied    int `json:"denied,omitempty"`   // /proc/PID/io unreadable (not root)
	Vanished  int `json:"vanished,omitempty"` // exited while being read
	Failed    int `json:"failed,omitempty"`   // other read or parse errors
	// The processes' DeltaReaped*Bytes summed: reaped children's I/O
	// attributed to no process (added after schema 1 was frozen).
	ReapedReadBytes  uint64 `json:"reaped_read_bytes,omitempty"`
	ReapedWriteBytes uint64 `json:"reaped_write_bytes,omitempty"`
}

// FromScan is the wire form of s; nil for nil.
func FromScan(s *diskio.ScanStats) *ScanStats { return (*ScanStats)(s) }

// EventStats accounts for one interval's process events
// (process.EventStats).
type EventStats struct {
	Received         uint64 `json:"received"`
	LostKernel       uint64 `json:"lost_kernel,omitempty"`
	LostBuffer       uint64 `json:"lost_buffer,omitempty"`
	Overruns         uint64 `json:"overruns,omitempty"`
	TaskstatsMissing uint64 `json:"taskstats_missing,omitempty"`
	Error            string `json:"error,omitempty"`
}

// FromEventStats is the wire form of s; nil for nil.
func FromEventStats(s *process.EventStats) *EventStats { return (*EventStats)(s) }

// Latency summarises the requests of one interval (latency.Summary):
// Count all, Errors the failed; Mean and the percentiles cover the
// successful ones, or all when WithFailed.
type Latency struct {
	Count      int           `json:"count"`
	Errors     int           `json:"errors,omitempty"`
	WithFailed bool          `json:"with_failed,omitempty"`
	Mean       time.Duration `json:"mean_ns"`
	P50        time.Duration `json:"p50_ns"`
	P95        time.Duration `json:"p95_ns"`
	P99        time.Duration `json:"p99_ns"`
	Max        time.Duration `json:"max_ns"`
}

// FromLatency is the wire form of s; nil for nil.
func FromLatency(s *latency.Summary) *Latency { return (*Latency)(s) }

// Summary is l as package latency's type (the same memory); nil for nil.
func (l *Latency) Summary() *latency.Summary { return (*latency.Summary)(l) }

// ProcRSS is one process's resident memory split by kind (process.RSS,
// from /proc/PID/status RssAnon, RssFile, RssShmem).
type ProcRSS struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	Comm       string `json:"comm"`
	AnonBytes  uint64 `json:"anon_bytes"`
	FileBytes  uint64 `json:"file_bytes"`
	ShmemBytes uint64 `json:"shmem_bytes"`
	// Cgroup is the holder's cgroup path (/proc/PID/cgroup), so a
	// cgroup-scoped analysis can tell another tenant's memory from the
	// group's; absent in recordings made before it was added.
	Cgroup string `json:"cgroup,omitempty"`
	// Threads is its thread count (/proc/PID/status Threads) at the
	// sample; absent (0) in recordings made before it was added.
	Threads int `json:"threads,omitempty"`
}

// FromRSS is the wire form of ps.
func FromRSS(ps []process.RSS) []ProcRSS {
	return convert(ps, func(p process.RSS) ProcRSS { return ProcRSS(p) })
}

// MemstateRSS is ps as package memstate's type, for memstate.GrowthSeries.
func MemstateRSS(ps []ProcRSS) []memstate.ProcRSS {
	return convert(ps, func(p ProcRSS) memstate.ProcRSS { return memstate.ProcRSS(p) })
}

// Retention is one process's allocator evidence (memstate.Retention): the
// allocators mapped into it, whether it is a Go program, its threads, the
// allocator variables of its environment, the CPUs and CPU quota glibc
// sizes its arenas by, and the recorder's reading of them.
type Retention struct {
	Allocators []string          `json:"allocators,omitempty"` // "glibc", "jemalloc", "tcmalloc", "mimalloc"
	Go         bool              `json:"go,omitempty"`
	Threads    int               `json:"threads"`
	Env        map[string]string `json:"env,omitempty"` // only the allocator variables memstate reads
	CPUsOnline int               `json:"cpus_online"`
	CPUQuota   float64           `json:"cpu_quota,omitempty"` // CPUs; 0 when none
	ArenasMax  int               `json:"glibc_arenas_max,omitempty"`
	// Reading is the recorder's plain reading of the evidence
	// (report/mem.RetentionReading), or, when it could not be read,
	// memstate.UnreadPrefix and why.
	Reading string `json:"reading"`
	Unread  string `json:"-"` // memstate.Retention.Unread: not in the recording but in its reading
}

// Memstate is a copy of r as package memstate's type, with Unread read
// back from a reading that says the evidence could not be read.
func (r *Retention) Memstate() *memstate.Retention {
	m := memstate.Retention(*r)
	if why, ok := strings.CutPrefix(m.Reading, memstate.UnreadPrefix); ok && m.Unread == "" {
		m.Unread = why
	}
	return &m
}

// ProcRetention is the retention evidence of a process that became a
// growth candidate in the interval (memstate.ProcRetention), read once
// per process.
type ProcRetention struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	Comm       string `json:"comm"`
	Retention
}

// FromRetention is the wire form of p. p.Reading is what is recorded as
// its reading; evidence that could not be read is recorded as
// memstate.UnreadPrefix and why when p has no reading.
func FromRetention(p memstate.ProcRetention) ProcRetention {
	r := Retention(p.Retention)
	if r.Reading == "" && r.Unread != "" {
		r.Reading = memstate.UnreadPrefix + r.Unread
	}
	return ProcRetention{PID: p.PID, StartTicks: p.StartTicks, Comm: p.Comm, Retention: r}
}

// SwapDevice is one line of /proc/swaps at the start (swap.Device), sizes
// in bytes.
type SwapDevice struct {
	Filename  string `json:"filename"`
	Type      string `json:"type"` // "partition" or "file"
	SizeBytes uint64 `json:"size_bytes"`
	UsedBytes uint64 `json:"used_bytes"`
	Priority  int    `json:"priority"`
}

// FromSwaps is the wire form of ds.
func FromSwaps(ds []swap.Device) []SwapDevice {
	return convert(ds, func(d swap.Device) SwapDevice { return SwapDevice(d) })
}

// Job is one periodic job on the host at the start (timers.Job): a
// systemd timer, a cron line or an anacron job, with its schedule and the
// service it runs. Its fields mean what timers.Job documents.
type Job struct {
	Name   string        `json:"name"`
	Source timers.Source `json:"source"` // "systemd", "cron", "anacron"
	File   string        `json:"file"`
	Line   int           `json:"line,omitempty"`

	Schedule   []string `json:"schedule"`
	Normalized []string `json:"normalized,omitempty"`

	OnActiveSec        time.Duration `json:"on_active_ns,omitempty"`
	OnBootSec          time.Duration `json:"on_boot_ns,omitempty"`
	OnStartupSec       time.Duration `json:"on_startup_ns,omitempty"`
	OnUnitActiveSec    time.Duration `json:"on_unit_active_ns,omitempty"`
	OnUnitInactiveSec  time.Duration `json:"on_unit_inactive_ns,omitempty"`
	AccuracySec        time.Duration `json:"accuracy_ns,omitempty"`
	RandomizedDelaySec time.Duration `json:"randomized_delay_ns,omitempty"`
	FixedRandomDelay   bool          `json:"fixed_random_delay,omitempty"`
	Persistent         bool          `json:"persistent,omitempty"`
	TimeZone           string        `json:"time_zone,omitempty"`

	Trigger         []string      `json:"trigger,omitempty"`
	Delay           time.Duration `json:"delay_ns,omitempty"`
	StartHoursRange string        `json:"start_hours_range,omitempty"`
	LastRun         string        `json:"last_run,omitempty"`

	PeriodSeconds *float64 `json:"period_seconds"`

	Unit          string   `json:"unit,omitempty"`
	Cgroup        string   `json:"cgroup,omitempty"`
	Command       string   `json:"command"`
	Scripts       []string `json:"scripts,omitempty"`
	IdleScripts   []string `json:"idle_scripts,omitempty"`
	IdleIOScripts []string `json:"idle_io_scripts,omitempty"`
	User          string   `json:"user,omitempty"`

	Nice              string `json:"nice,omitempty"`
	IOSchedulingClass string `json:"io_scheduling_class,omitempty"`
	CPUQuota          string `json:"cpu_quota,omitempty"`
	MemoryMax         string `json:"memory_max,omitempty"`

	Conditions []string `json:"conditions,omitempty"`

	LastTrigger *time.Time  `json:"last_trigger,omitempty"`
	NextElapse  *time.Time  `json:"next_elapse,omitempty"`
	PastStarts  []time.Time `json:"past_starts,omitempty"`
	// LiveActive is not recorded (the v1 wire format is frozen): what it
	// decides is, in RunsNow and LiveNote.
	LiveActive *bool `json:"-"`

	Active     bool     `json:"active"`
	ActiveVia  []string `json:"active_via,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	StepsAside bool     `json:"-"` // timers.Job.StepsAside: not recorded; the reason says it
	IdleNow    bool     `json:"idle_now,omitempty"`
	LiveNote   string   `json:"live_note,omitempty"`
	RunsNow    *bool    `json:"runs_now,omitempty"`
	Note       string   `json:"note,omitempty"`
	Errors     []string `json:"errors,omitempty"`
}

// FromJobs is the wire form of js.
func FromJobs(js []timers.Job) []Job { return convert(js, func(j timers.Job) Job { return Job(j) }) }

// Timers is j as package timers' type, for projecting its firings.
func (j *Job) Timers() timers.Job { return timers.Job(*j) }

// TimersJobs is js as package timers' type, for projecting their firings.
func TimersJobs(js []Job) []timers.Job {
	return convert(js, func(j Job) timers.Job { return timers.Job(j) })
}

// convert maps a slice; nil stays nil, so an absent list stays absent.
func convert[F, T any](in []F, f func(F) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i := range in {
		out[i] = f(in[i])
	}
	return out
}

// ABReport is what ab's report on its standard output counted
// (latency.ABSummary; End.AB): ab -g's rows carry no status.
type ABReport struct {
	Complete   int           `json:"complete"`
	Failed     int           `json:"failed"`
	Connect    int           `json:"connect"`
	Receive    int           `json:"receive"`
	Length     int           `json:"length"`
	Exceptions int           `json:"exceptions"`
	Non2xx     int           `json:"non2xx"`
	HasNon2xx  bool          `json:"has_non2xx"`
	TimeTaken  time.Duration `json:"time_taken_ns"`
}

// FromABSummary is the wire form of s; nil for nil.
func FromABSummary(s *latency.ABSummary) *ABReport { return (*ABReport)(s) }

// Summary is r as latency reads it.
func (r *ABReport) Summary() latency.ABSummary { return latency.ABSummary(*r) }
