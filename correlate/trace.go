package correlate

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Trace is a recording's quantities per interval as the correlator read
// them, for charts: the latency statistic spikes were detected on, each
// signal's value ([Signal.Unit], the same function that raised it), the
// PSI of host and cgroup side by side, and the file LRU's size. Values
// are NaN where the recording lacks them. A trace of a day at 1 s holds 86,400 intervals of ~150 bytes.
// The culprits' firings are in their [Proof] (FiringsMatched,
// FiringsMissed).
type Trace struct {
	// End is each interval's end (the sample that closes it); Start the
	// first interval's start.
	Start time.Time
	End   []time.Time
	// Latency is the latency statistic of the result (Result.Stat) per
	// interval, -1 without requests; Requests and Errors count them.
	Latency  []time.Duration
	Requests []int
	Errors   []int
	// Columns hold the other quantities, by [TraceColumn].
	Columns [numTraceColumns][]float64

	sr *Series
}

// TraceColumn names one quantity of a [Trace].
type TraceColumn int

// The quantities of a trace, with their units.
const (
	TraceMemSome       TraceColumn = iota // host memory PSI some, share 0..1 (record.Interval.MemSome)
	TraceMemFull                          // host memory PSI full, share 0..1
	TraceCgMemSome                        // the recorded cgroup's memory PSI some, share 0..1
	TraceCgMemFull                        // the recorded cgroup's memory PSI full, share 0..1
	TraceFileLRU                          // Active(file)+Inactive(file) at the interval's end, bytes
	TraceLRUDrop                          // signal lru_drop: file LRU shrink rate, B/s (negative: grew)
	TraceRefault                          // signal refault: workingset refaults, pages/s
	TraceDirectReclaim                    // signal direct_reclaim: pages/s
	TraceLimitReclaim                     // signal limit_reclaim: pages/s
	TraceDiskRead                         // disk read, B/s, summed over recorded devices
	TraceDiskWrite                        // disk write, B/s
	TraceIOTime                           // signal io_time: weighted I/O time, s/s
	TraceSwapOut                          // signal swap_out: B/s
	numTraceColumns
)

// Trace returns the per-interval quantities behind res, which
// [Series.Analyze] computed from sr with opts. Latency is recomputed from
// the same summaries Analyze used (Options.Requests, IntervalStats or the
// recording's own).
func (sr *Series) Trace(res *Result, opts Options) *Trace {
	o := opts.withDefaults()
	ivs := sr.intervals()
	t := &Trace{sr: sr}
	if len(ivs) == 0 {
		return t
	}
	t.Start = ivs[0].Start
	n := len(ivs)
	t.End = make([]time.Time, n)
	t.Latency = make([]time.Duration, n)
	t.Requests = make([]int, n)
	t.Errors = make([]int, n)
	for c := range t.Columns {
		t.Columns[c] = make([]float64, n)
	}
	sums := summaries(sr, ivs, o)
	for i := range ivs {
		iv := &ivs[i]
		t.End[i] = iv.End
		t.Latency[i] = -1
		if s := sums[i]; s != nil && s.Count > 0 {
			t.Latency[i] = statOf(*s, res.Stat)
			t.Requests[i], t.Errors[i] = s.Count, s.Errors
		}
		col := &t.Columns
		col[TraceMemSome][i], col[TraceMemFull][i] = iv.MemSome, iv.MemFull
		col[TraceCgMemSome][i], col[TraceCgMemFull][i] = iv.CgMemSome, iv.CgMemFull
		col[TraceFileLRU][i] = iv.FileLRUBytes
		col[TraceLRUDrop][i] = signalValue(LRUDrop, iv, res.PSIScope)
		col[TraceRefault][i] = signalValue(Refault, iv, res.PSIScope)
		col[TraceDirectReclaim][i] = signalValue(DirectReclaim, iv, res.PSIScope)
		col[TraceLimitReclaim][i] = signalValue(LimitReclaim, iv, res.PSIScope)
		col[TraceDiskRead][i], col[TraceDiskWrite][i] = iv.DiskReadBytesPerSec, iv.DiskWriteBytesPerSec
		col[TraceIOTime][i] = signalValue(IOTime, iv, res.PSIScope)
		col[TraceSwapOut][i] = signalValue(SwapOut, iv, res.PSIScope)
	}
	return t
}

// Len is the number of intervals.
func (t *Trace) Len() int { return len(t.End) }

// HasLatency reports whether interval i had requests.
func (t *Trace) HasLatency(i int) bool { return t.Latency[i] >= 0 }

// Known reports whether column c has a value in any interval.
func (t *Trace) Known(c TraceColumn) bool {
	return slices.ContainsFunc(t.Columns[c], func(v float64) bool { return !math.IsNaN(v) })
}

// Top returns the n processes that did the most I/O (read plus write) in
// intervals from..to-1, most first, counted as an episode counts them
// ([Series.activity]): a row's deltas, and the part of an exit's life
// totals no row held — a process that lived between two samples is
// there by its exit record alone. The children a process reaped that no
// scan saw are one row, as in an episode (reapedPart): named by
// [ReapedComm], PID 0, PPID the parent, Reaped.
func (t *Trace) Top(from, to, n int) []ProcActivity {
	if t.sr == nil || from >= to {
		return nil
	}
	// Interval i ends at sample i+1, whose events and deltas cover it.
	to = min(to, t.sr.procs.len()-1)
	if from+1 > to {
		return nil
	}
	order, _, _ := t.sr.activity(from+1, from+1, to)
	out := make([]ProcActivity, 0, len(order))
	for _, e := range order {
		a := ProcActivity{PID: e.p.PID, Comm: e.p.Comm, Cmdline: e.p.Cmdline, Unit: e.p.Unit, ReadBytes: e.p.ReadBytes, WriteBytes: e.p.WriteBytes}
		if a.Bytes() > 0 {
			out = append(out, a)
		}
		if e.reaped != [2]uint64{} {
			out = append(out, ProcActivity{PPID: e.p.PID, Comm: ReapedComm(e.p.Comm), Unit: e.p.Unit,
				ReadBytes: e.reaped[0], WriteBytes: e.reaped[1], Reaped: true})
		}
	}
	slices.SortFunc(out, func(a, b ProcActivity) int {
		if c := cmp.Compare(b.Bytes(), a.Bytes()); c != 0 {
			return c
		}
		if c := cmp.Compare(a.PID, b.PID); c != 0 {
			return c
		}
		return cmp.Compare(a.PPID, b.PPID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
