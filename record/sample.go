// Package record defines the Sample that collectors fill once per interval,
// the JSON Lines recording that `memdiag watch` writes and every other
// command reads, and the Sampler that drives the collectors.
//
// A recording is JSON Lines (https://jsonlines.org): the first line is the
// [Header] ("type":"header"), then one [Sample] per line ("type":"sample"),
// and, when the recorder ended cleanly, an [End] line ("type":"end").
// Every line is written and flushed to the kernel as soon as it exists, so
// a SIGKILL loses nothing already sampled; a file ending in ".gz" is gzip
// compressed and flushed at least every 10 s. docs/recording.md documents
// the schema.
package record

import (
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/memview"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/swap"
	"github.com/memdiag/memdiag/timers"
)

// SchemaVersion is the version of the recording format written by this
// build. Readers accept recordings with the same major version.
const SchemaVersion = 1

// FormatName is the value of Header.Format.
const FormatName = "memdiag-recording"

// Line types.
const (
	TypeHeader = "header"
	TypeSample = "sample"
	TypeEnd    = "end"
)

// CollectorStatus says whether a collector could run on this host, and if
// not, why and what to do.
type CollectorStatus struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// Header is the first line of a recording.
type Header struct {
	Type           string            `json:"type"`           // "header"
	Format         string            `json:"format"`         // "memdiag-recording"
	SchemaVersion  int               `json:"schema_version"` // SchemaVersion
	MemdiagVersion string            `json:"memdiag_version"`
	Host           string            `json:"host"`
	Kernel         string            `json:"kernel"` // uname release
	BootTime       time.Time         `json:"boot_time"`
	Start          time.Time         `json:"start"`
	Interval       time.Duration     `json:"interval_ns"`
	TimeZone       string            `json:"time_zone"`      // IANA name of the host's local zone, "" if unknown
	UTCOffset      int               `json:"utc_offset_s"`   // the local zone's offset at Start
	PageSize       int               `json:"page_size"`      // bytes; converts *_pages counters
	ClockTicks     int               `json:"clock_ticks"`    // USER_HZ; converts *_ticks fields
	Root           string            `json:"root,omitempty"` // filesystem root the collectors read, "/" normally
	Cgroup         string            `json:"cgroup,omitempty"`
	Command        []string          `json:"command,omitempty"` // the --exec command
	Collectors     []CollectorStatus `json:"collectors"`
	Swaps          []swap.Device     `json:"swaps,omitempty"`
	Jobs           []timers.Job      `json:"jobs,omitempty"` // periodic jobs on the host at Start
	TopN           int               `json:"top_n"`
	DelayAcct      *bool             `json:"task_delayacct,omitempty"` // kernel.task_delayacct at Start
}

// Sample is one interval's reading of every collector. Counters are
// cumulative as the kernel reports them; rates come from the difference
// of two samples (see Rates), so any later analysis can re-derive them.
type Sample struct {
	Type      string             `json:"type"` // "sample"
	Seq       int                `json:"seq"`
	Time      time.Time          `json:"time"`
	PSI       *psi.Snapshot      `json:"psi,omitempty"`        // host, /proc/pressure/*
	CgroupPSI *psi.Snapshot      `json:"cgroup_psi,omitempty"` // the --cgroup group's *.pressure
	Meminfo   *lru.Meminfo       `json:"meminfo,omitempty"`
	VMStat    *lru.VMStat        `json:"vmstat,omitempty"`
	Disks     []diskio.Disk      `json:"disks,omitempty"`
	Procs     []diskio.ProcIO    `json:"procs,omitempty"`  // top N by I/O in the interval
	Events    []diskio.ProcEvent `json:"events,omitempty"` // processes started/exited since the previous sample
	Scan      *diskio.ScanStats  `json:"scan,omitempty"`
	Latency   *latency.Summary   `json:"latency,omitempty"` // requests that started in (previous sample, this sample]
	RSS       []memview.ProcRSS  `json:"rss,omitempty"`     // top N processes by RSS: anon/file/shmem (memview.Collector.TopRSS); memview.Growth fits them
	Errors    []string           `json:"errors,omitempty"`  // collectors that failed this time, "name: error"
}

// End is the last line of a cleanly ended recording.
type End struct {
	Type    string    `json:"type"` // "end"
	Time    time.Time `json:"time"`
	Samples int       `json:"samples"`
	Reason  string    `json:"reason"` // "duration", "signal: interrupt", "command exited: 0", ...
}
