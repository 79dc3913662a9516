package confirm

import (
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/psi"
)

// Measurement is what one block measured.
type Measurement struct {
	Block
	Start time.Time     `json:"start"`
	Wall  time.Duration `json:"wall_ns"` // the block's length, start to end of the load

	// Latencies are the successful probe requests' latencies, ascending;
	// Errors counts the failed ones. Both are empty without a probe.
	Latencies []time.Duration `json:"latencies_ns,omitempty"`
	Errors    int             `json:"errors,omitempty"`

	// MemorySome and MemoryFull are the growth of /proc/pressure/memory's
	// "some" and "full" total over the block (the file reports µs);
	// HasPSI is false where the kernel has no PSI.
	MemorySome time.Duration `json:"memory_some_stall_ns"`
	MemoryFull time.Duration `json:"memory_full_stall_ns"`
	HasPSI     bool          `json:"has_psi"`

	// Settled is how long the block waited before it began for the
	// job's instances running then to end (Experiment.Running): a B
	// block, once the job was held off, for those started before the
	// hold; an A block right after a hold, for the run systemd starts at
	// once when a timer is started again after missing an elapse
	// (Experiment.Run). StillRunning lists those that had not ended when
	// the wait's bound passed (the block then measures part of that run).
	Settled      time.Duration `json:"settled_ns,omitempty"`
	StillRunning []int         `json:"still_running,omitempty"`
}

// Measure builds a block's Measurement from the probe's requests started
// in the block, the PSI memory files read at its start and end (nil when
// unavailable), and its wall time.
func Measure(b Block, start time.Time, wall time.Duration, reqs []latency.Request, before, after *psi.Resource) Measurement {
	m := Measurement{Block: b, Start: start, Wall: wall}
	s := latency.SummarizeRequests(reqs, false)
	m.Errors = s.Errors
	for _, r := range reqs {
		if !r.Err {
			m.Latencies = append(m.Latencies, r.Latency)
		}
	}
	sortDurations(m.Latencies)
	if before != nil && after != nil {
		m.HasPSI = true
		m.MemorySome = max(0, after.Some.Total-before.Some.Total)
		if before.Full != nil && after.Full != nil {
			m.MemoryFull = max(0, after.Full.Total-before.Full.Total)
		}
	}
	return m
}

// P99 is the block's 99th percentile latency (nearest rank), 0 without
// requests.
func (m Measurement) P99() time.Duration { return quantile(m.Latencies, 99) }

// Spikes counts the block's requests slower than over.
func (m Measurement) Spikes(over time.Duration) int {
	n := 0
	for _, l := range m.Latencies {
		if l > over {
			n++
		}
	}
	return n
}

// StallShare is the share of the block's wall time some task stalled on
// memory (0..1), from the delta of PSI's "some" total.
func (m Measurement) StallShare() float64 {
	if m.Wall <= 0 {
		return 0
	}
	return float64(m.MemorySome) / float64(m.Wall)
}
