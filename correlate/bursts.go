package correlate

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// IOBurst is a run of intervals that raised disk or reclaim signals but no
// memory stall of the scope: activity that stalled nobody, reported as
// what it is and never as a memory-pressure episode or its culprit.
type IOBurst struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Signals are the signals it raised, with their peaks.
	Signals []SignalPeak `json:"signals"`
	// Processes did the most I/O in it (most first).
	Processes []ProcActivity `json:"processes"`
}

// Sustained is memory pressure that lasts: the scope's PSI memory "some"
// share at or above Thresholds.Sustained in at least SustainedFrac of the
// recording's intervals. It is a finding of its own: the recording's
// baseline, so only stalls that rise above it further are episodes.
type Sustained struct {
	Scope PSIScope  `json:"scope"`
	Start time.Time `json:"start"` // start of the first interval at or above Level
	End   time.Time `json:"end"`   // end of the last one
	// Level is the share the intervals were compared with; Above of
	// Intervals (those with PSI known) reached it.
	Level     float64 `json:"level_share"`
	Intervals int     `json:"intervals"`
	Above     int     `json:"intervals_above"`
	// MeanShare is the stall time over Start..End divided by its length;
	// Stall the stall time itself.
	MeanShare float64       `json:"mean_share"`
	Stall     time.Duration `json:"stall_ns"`
	// IO are the processes that did the most I/O from Start to End (the
	// reclaim-driving I/O), most first; Memory the largest RSS holders
	// seen then (largest peak first).
	IO     []ProcActivity `json:"io"`
	Memory []MemHolder    `json:"memory"`
	// OutsideLeftOut is how many processes a --cgroup analysis left out
	// of IO and Memory because the recording places them outside the
	// group: they cannot cause its reclaim.
	OutsideLeftOut int `json:"outside_left_out,omitempty"`
}

// MemHolder is a process holding memory during sustained pressure: its
// largest RSS (anon + file) in a sample, from Sample.RSS.
type MemHolder struct {
	PID       int    `json:"pid"`
	Comm      string `json:"comm"`
	AnonBytes uint64 `json:"anon_bytes"`
	FileBytes uint64 `json:"file_bytes"`
}

// ioBursts returns the runs of intervals that raised signals but none of
// the required ones, outside episodes and not next to one.
func ioBursts(sr *Series, ivs []ival, raised [][]Signal, lat []float64, step time.Duration, o Options,
	baselines map[Signal]float64, eps []Episode) []IOBurst {
	in := make([]bool, len(ivs))
	ep := 0
	for k := range ivs {
		for ep < len(eps) && eps[ep].End.Before(ivs[k].End) {
			ep++
		}
		in[k] = ep < len(eps) && !ivs[k].Start.Before(eps[ep].Start) && !ivs[k].End.After(eps[ep].End)
	}
	// An interval next to an episode is its edge (the I/O that began
	// or ended the stall), not a burst of its own.
	inEp := func(i int) bool {
		return in[i] || (i > 0 && in[i-1]) || (i+1 < len(in) && in[i+1])
	}
	none := make([]bool, len(ivs))
	var out []IOBurst
	first, last := -1, -1
	flush := func() {
		if first < 0 {
			return
		}
		e := episode(sr, ivs, raised, none, lat, make([]int, len(ivs)), first, last, o, baselines)
		out = append(out, IOBurst{Start: e.Start, End: e.End, Signals: e.Signals, Processes: e.Processes})
		first = -1
	}
	for i := range ivs {
		other := len(raised[i]) >= o.MinSignals && !hasAny(raised[i], o.Require) && !inEp(i)
		if !other {
			continue
		}
		if first >= 0 && ivs[i].Start.Sub(ivs[last].End) <= step+step/4 {
			last = i
			continue
		}
		flush()
		first, last = i, i
	}
	flush()
	return out
}

// sustained finds pressure that lasts most of the recording (see
// [Sustained]); nil when there is none or the scope has no PSI. Its
// steps: sustainedSpan (how long the stall stayed above the level),
// then who did the I/O (sustainedIO) and held the memory
// (sustainedMemory) while it lasted.
func sustained(sr *Series, ivs []ival, o Options) *Sustained {
	s, first, last := sustainedSpan(ivs, o)
	if s == nil {
		return nil
	}
	// A --cgroup analysis lists the group's processes (and those of no
	// known cgroup) only: another tenant's I/O or memory cannot cause the
	// group's reclaim.
	sc := &scopeMemo{sr: sr, scoped: o.PSIScope == PSICgroup && sr.Header.Cgroup != "", outside: map[procKey]bool{}}
	s.IO = sr.sustainedIO(first, last, sc)
	s.Memory = sr.sustainedMemory(first, last, sc)
	for _, out := range sc.outside {
		if out {
			s.OutsideLeftOut++
		}
	}
	return s
}

// sustainedSpan is the stall above Thresholds.Sustained (PSI some of the
// scope) in at least SustainedFrac of the intervals with PSI, from the
// first such interval to the last, with its stall time and mean share;
// nil when there is none.
func sustainedSpan(ivs []ival, o Options) (s *Sustained, first, last int) {
	t := o.Thresholds
	if t.Sustained < 0 {
		return nil, 0, 0
	}
	known, above := 0, 0
	first, last = -1, -1
	for i := range ivs {
		v := signalValue(PSISome, &ivs[i], o.PSIScope)
		if math.IsNaN(v) {
			continue
		}
		known++
		if v >= t.Sustained {
			above++
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if known == 0 || above == 0 || float64(above) < t.SustainedFrac*float64(known) {
		return nil, 0, 0
	}
	s = &Sustained{Scope: o.PSIScope, Start: ivs[first].Start, End: ivs[last].End, Level: t.Sustained,
		Intervals: known, Above: above}
	var stall float64
	for i := first; i <= last; i++ {
		if v := signalValue(PSISome, &ivs[i], o.PSIScope); !math.IsNaN(v) {
			stall += v * float64(ivs[i].Dt)
		}
	}
	s.Stall = time.Duration(stall)
	if d := s.End.Sub(s.Start); d > 0 {
		s.MeanShare = math.Round(stall/float64(d)*1e4) / 1e4
	}
	return s, first, last
}

// sustainedTop is how many I/O processes and memory holders
// [Sustained] lists.
const sustainedTop = 5

// scopeMemo says, once per process, whether it ran outside a cgroup
// scope (never when not scoped).
type scopeMemo struct {
	sr      *Series
	scoped  bool
	outside map[procKey]bool
}

func (m *scopeMemo) isOutside(pid int, start uint64) bool {
	if !m.scoped {
		return false
	}
	k := procKey{pid, start}
	if v, ok := m.outside[k]; ok {
		return v
	}
	cg := m.sr.cgroupOf(pid, start)
	m.outside[k] = cg != "" && !m.sr.inScope(pid, cg)
	return m.outside[k]
}

// sustainedIO is who did the I/O while sustained pressure lasted
// (intervals first..last): the procs deltas of samples first+1..last+1
// (sample k ends interval k-1), the sustainedTop largest, in scope.
func (sr *Series) sustainedIO(first, last int, sc *scopeMemo) []ProcActivity {
	io := map[procKey]*ProcActivity{}
	var buf []procIO
	for k := first + 1; k <= last+1; k++ {
		buf = sr.procsOf(k, buf[:0])
		for _, p := range buf {
			if sc.isOutside(p.pid, p.start) {
				continue
			}
			n := &sr.names[p.name]
			a := io[procKey{p.pid, p.start}]
			if a == nil {
				a = &ProcActivity{PID: p.pid, Comm: n.comm, Cmdline: n.cmdline, Unit: n.unit}
				a.Program = programOf(n.comm, n.cmdline)
				io[procKey{p.pid, p.start}] = a
			}
			a.ReadBytes += p.dReadBytes
			a.WriteBytes += p.dWriteByte
		}
	}
	var out []ProcActivity
	for _, a := range io {
		if a.Bytes() > 0 {
			out = append(out, *a)
		}
	}
	slices.SortFunc(out, func(a, b ProcActivity) int {
		if c := cmp.Compare(b.Bytes(), a.Bytes()); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	if len(out) > sustainedTop {
		out = out[:sustainedTop]
	}
	return out
}

// sustainedMemory is who held the memory while sustained pressure
// lasted: the largest RSS holders of samples first..last+1, each at its
// peak, the sustainedTop largest, in scope.
func (sr *Series) sustainedMemory(first, last int, sc *scopeMemo) []MemHolder {
	mem := map[procKey]*MemHolder{}
	for k := first; k <= last+1; k++ {
		for _, r := range sr.rssOf(k) {
			if sc.isOutside(r.pid, r.start) {
				continue
			}
			m := mem[procKey{r.pid, r.start}]
			if m == nil {
				m = &MemHolder{PID: r.pid, Comm: sr.strs[r.comm]}
				mem[procKey{r.pid, r.start}] = m
			}
			if r.anon+r.file > m.AnonBytes+m.FileBytes {
				m.AnonBytes, m.FileBytes = r.anon, r.file
			}
		}
	}
	var out []MemHolder
	for _, m := range mem {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b MemHolder) int {
		if c := cmp.Compare(b.AnonBytes+b.FileBytes, a.AnonBytes+a.FileBytes); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	if len(out) > sustainedTop {
		out = out[:sustainedTop]
	}
	return out
}
