package record

import (
	"math"
	"sort"
	"time"
)

// Summary is what `memdiag watch` prints when it ends: the run's peaks,
// totals and top writers, accumulated one sample at a time so a long
// recording needs no second pass.
type Summary struct {
	Samples  int
	Start    time.Time
	End      time.Time
	Duration time.Duration

	MemSomePeak, MemFullPeak float64       // highest per-interval stall share (0..1)
	MemSomeMean, MemFullMean float64       // whole-run share: Σstall / Σwall
	MemSomeStall             time.Duration // total stall time (Δ of PSI total over the run)
	MemFullStall             time.Duration
	IOSomeStall              time.Duration
	CgMemSomeStall           time.Duration // the --cgroup group's, when recorded
	CgMemFullStall           time.Duration
	HasPSI, HasCgroupPSI     bool

	SwapOutBytes      float64 // pswpout over the run × page size; NaN if unknown
	FileLRUMinBytes   float64 // lowest Active(file)+Inactive(file) seen; NaN if unknown
	FileLRUStartBytes float64
	OOMKills          float64
	DirectReclaimPgs  float64 // pages scanned by direct reclaim over the run

	wall    time.Duration
	writers map[procKey]*ProcTotal
	reaped  map[procKey]*ProcTotal // by parent: its unseen children's I/O
	lastKey map[int]procKey        // PID -> its latest process, to join exit events
	started map[int]bool           // PIDs exec'd during the recording
	prev    *Sample
	header  *Header
}

// ProcTotal is one process's I/O over a run, summed from the per-sample
// deltas of the samples in which it was among the top N, and, for a
// process that started and ended in the run, its exit record's total.
// Both are the process's own I/O: what its reaped children did is not
// in them (diskio splits it off; see [Summary.UnseenChildren]).
type ProcTotal struct {
	PID int
	// StartTicks is when the process started, in clock ticks after boot
	// (/proc/PID/stat field 22): with PID, who it is, as a PID is reused
	// in a long run. 0 when its rows and exit record did not carry it.
	StartTicks uint64
	Comm       string
	Unit       string
	ReadBytes  uint64
	WriteBytes uint64
}

type procKey struct {
	pid   int
	start uint64
}

// NewSummary starts an empty summary for a recording with header h.
func NewSummary(h *Header) *Summary {
	return &Summary{header: h, writers: map[procKey]*ProcTotal{}, reaped: map[procKey]*ProcTotal{}, lastKey: map[int]procKey{}, started: map[int]bool{},
		SwapOutBytes: math.NaN(), FileLRUMinBytes: math.NaN(), FileLRUStartBytes: math.NaN(), OOMKills: math.NaN(),
		DirectReclaimPgs: math.NaN()}
}

// Add folds in the next sample.
func (sm *Summary) Add(s *Sample) {
	sm.Samples++
	if sm.Samples == 1 {
		sm.Start = s.Time
		if f, ok := s.Meminfo.LRU().FileLRU(); ok {
			sm.FileLRUStartBytes = float64(f)
		}
	}
	sm.End = s.Time
	sm.Duration = sm.End.Sub(sm.Start)
	if f, ok := s.Meminfo.LRU().FileLRU(); ok && (math.IsNaN(sm.FileLRUMinBytes) || float64(f) < sm.FileLRUMinBytes) {
		sm.FileLRUMinBytes = float64(f)
	}
	sm.addProcs(s.Procs)
	sm.addExits(s.Events)
	if sm.prev != nil {
		sm.addInterval(Between(sm.header, sm.prev, s))
	}
	sm.prev = s
}

// addProcs adds each process row's deltas to its total (its reaped
// children's to theirs) and keeps the row as its PID's latest.
func (sm *Summary) addProcs(procs []ProcIO) {
	for i := range procs {
		p := &procs[i]
		k := procKey{p.PID, p.StartTicks}
		addTotal(sm.writers, k, p, p.DeltaReadBytes, p.DeltaWriteBytes)
		sm.lastKey[p.PID] = k
		if p.DeltaReapedReadBytes+p.DeltaReapedWriteBytes > 0 {
			addTotal(sm.reaped, k, p, p.DeltaReapedReadBytes, p.DeltaReapedWriteBytes)
		}
	}
}

// addExits gives a process that started during the recording and exited
// what its exit record (life-time totals: exact with taskstats) has
// beyond the deltas it got while among the top N, including all of a
// child that lived between two samples.
func (sm *Summary) addExits(events []Event) {
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case "exec":
			sm.started[e.PID] = true
		case "exit":
			if !sm.started[e.PID] {
				continue // its life-time totals include I/O before the recording
			}
			delete(sm.started, e.PID)
			// Its latest row, unless that was an earlier process of
			// its PID: the exit record's start time says which.
			k, ok := sm.lastKey[e.PID]
			if !ok || (e.StartTicks != 0 && k.start != 0 && k.start != e.StartTicks) {
				k = procKey{e.PID, e.StartTicks}
			}
			w := sm.writers[k]
			if w == nil {
				w = &ProcTotal{PID: e.PID, StartTicks: k.start, Comm: e.Comm, Unit: e.Unit}
				sm.writers[k] = w
			}
			if e.ReadBytes > w.ReadBytes {
				w.ReadBytes = e.ReadBytes
			}
			if e.WriteBytes > w.WriteBytes {
				w.WriteBytes = e.WriteBytes
			}
			if w.Unit == "" {
				w.Unit = e.Unit
			}
			delete(sm.lastKey, e.PID)
		}
	}
}

// addInterval adds the interval since the previous sample: the stall,
// swap-out, direct reclaim and OOM kills in it.
func (sm *Summary) addInterval(iv Interval) {
	sm.wall += iv.Dt
	if Known(iv.MemSome) {
		sm.HasPSI = true
		sm.MemSomePeak = math.Max(sm.MemSomePeak, iv.MemSome)
		sm.MemSomeStall += time.Duration(iv.MemSome * float64(iv.Dt))
	}
	if Known(iv.MemFull) {
		sm.MemFullPeak = math.Max(sm.MemFullPeak, iv.MemFull)
		sm.MemFullStall += time.Duration(iv.MemFull * float64(iv.Dt))
	}
	if Known(iv.IOSome) {
		sm.IOSomeStall += time.Duration(iv.IOSome * float64(iv.Dt))
	}
	if Known(iv.CgMemSome) {
		sm.HasCgroupPSI = true
		sm.CgMemSomeStall += time.Duration(iv.CgMemSome * float64(iv.Dt))
	}
	if Known(iv.CgMemFull) {
		sm.CgMemFullStall += time.Duration(iv.CgMemFull * float64(iv.Dt))
	}
	addRate := func(acc *float64, perSec float64) {
		if !Known(perSec) {
			return
		}
		if math.IsNaN(*acc) {
			*acc = 0
		}
		*acc += perSec * iv.Dt.Seconds()
	}
	addRate(&sm.SwapOutBytes, iv.SwapOutBytesPerSec)
	addRate(&sm.DirectReclaimPgs, iv.DirectReclaimPerSec)
	if Known(iv.OOMKills) {
		if math.IsNaN(sm.OOMKills) {
			sm.OOMKills = 0
		}
		sm.OOMKills += iv.OOMKills
	}
	if sm.wall > 0 {
		sm.MemSomeMean = float64(sm.MemSomeStall) / float64(sm.wall)
		sm.MemFullMean = float64(sm.MemFullStall) / float64(sm.wall)
	}
}

// TopIO returns the n processes (n < 0: all) with the most I/O, read +
// written, most first (ties broken by PID for a stable order); below
// 64 KiB a process is left out as noise.
func (sm *Summary) TopIO(n int) []ProcTotal {
	return topTotals(sm.writers, n)
}

// UnseenChildren returns, for the n parents (n < 0: all) whose children
// did the most I/O memdiag could not name, that I/O, most first, below
// 64 KiB left out: the ProcTotal is the parent's (PID, Comm, Unit) with
// the bytes its children read and wrote that the kernel added to the
// parent's counters when it reaped them, and that no process row or exit
// record holds (children that started and ended between two samples
// with no exit record, or wrote after the last sample that saw them;
// diskio.ProcIO.DeltaReaped*Bytes).
func (sm *Summary) UnseenChildren(n int) []ProcTotal {
	return topTotals(sm.reaped, n)
}

// addTotal adds read and written bytes to p's total in m under k,
// starting it with k's PID and start time and p's comm and unit.
func addTotal(m map[procKey]*ProcTotal, k procKey, p *ProcIO, read, written uint64) {
	t := m[k]
	if t == nil {
		t = &ProcTotal{PID: p.PID, StartTicks: k.start, Comm: p.Comm, Unit: p.Unit}
		m[k] = t
	}
	t.ReadBytes += read
	t.WriteBytes += written
}

// topTotals is the n totals (n < 0: all) with the most I/O, read +
// written, most first, ties broken by PID; below 64 KiB a total is noise
// in a summary and left out.
func topTotals(m map[procKey]*ProcTotal, n int) []ProcTotal {
	ps := make([]ProcTotal, 0, len(m))
	for _, t := range m {
		if t.ReadBytes+t.WriteBytes >= 64<<10 {
			ps = append(ps, *t)
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i].ReadBytes+ps[i].WriteBytes, ps[j].ReadBytes+ps[j].WriteBytes
		if a != b {
			return a > b
		}
		return ps[i].PID < ps[j].PID
	})
	if n >= 0 && len(ps) > n {
		ps = ps[:n]
	}
	return ps
}

// TopWriters returns the n processes that wrote the most, most first
// (ties broken by PID for a stable order).
func (sm *Summary) TopWriters(n int) []ProcTotal {
	ws := make([]ProcTotal, 0, len(sm.writers))
	for _, w := range sm.writers {
		if w.WriteBytes+w.ReadBytes >= 64<<10 { // below 64 KiB a process is noise in a summary
			ws = append(ws, *w)
		}
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].WriteBytes != ws[j].WriteBytes {
			return ws[i].WriteBytes > ws[j].WriteBytes
		}
		return ws[i].PID < ws[j].PID
	})
	if len(ws) > n {
		ws = ws[:n]
	}
	return ws
}
