package correlate

import (
	"slices"
	"sort"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// execSeen is a live process's exec time and the sample whose events
// held the exec (reapedThroughTie).
type execSeen struct {
	t      time.Time
	sample int
}

// Trim drops the samples taken before from, and all that is indexed by
// them, so that the series holds a sliding window (`record --listen`'s
// in-process analysis, issue 28): its intervals, latency summaries,
// chains, victim waits and OOM kills; the samples' processes, RSS
// holders, process events, stall onsets, RSS growth points and
// retention evidence; the names and strings no kept row uses; what it
// knew of processes seen only before from (their last cumulative I/O,
// exec time, cgroup). The columns are copied into arrays of the kept
// length, so memory follows the window. The series must come from
// NewWindowSeries.
//
// The analysis of the trimmed series is that of a series made by
// NewWindowSeries and fed only the kept samples (TestTrimIsFresh): the
// interval that ends at the first kept sample goes too, as a fresh
// series has no interval before its first sample; an exit event's
// prior I/O counts only when a kept sample saw it; the next Add makes
// its interval from the last sample added, as before the trim. One
// exception: for a recording made before record.ProcIOAccountingDepth
// (never the recorder's own), the I/O a kept sample's deltas counted
// twice (reapedThroughTie) was found with what the dropped samples
// showed, where a fresh series would not see it.
//
// Trim costs one pass over the kept samples: call it in chunks (the
// exporter trims when the oldest sample is Window/8 past the window),
// not at every Add.
func (sr *Series) Trim(from time.Time) {
	if !sr.window {
		panic("correlate: Trim of a series not made by NewWindowSeries")
	}
	n := len(sr.times)
	k := sort.Search(n, func(i int) bool { return !sr.times[i].Before(from) })
	if k == 0 {
		return
	}
	sr.trimIntervals(k)
	sr.trimProcs(k)
	sr.trimMemory(k, from)
	sr.trimPSI(from)
	sr.times = slices.Clone(sr.times[k:])
	sr.samples = n - k
	if sr.samples == 0 {
		sr.times, sr.prev = nil, nil // as fresh: the next sample starts no interval
	}
	sr.parts = nil
}

// trimIntervals drops the intervals that end at sample k or before.
func (sr *Series) trimIntervals(k int) {
	ivs := sr.intervals()
	if k > len(ivs) {
		k = len(ivs)
	}
	kept := ivs[k:]
	var vals column[ivalVals]
	var cat rows[float64]
	for i := range kept {
		vals.add(kept[i].ivalVals)
		cat.add(kept[i].Cat)
	}
	sr.ivs, sr.vals, sr.cat = nil, vals, cat
	sr.lat = slices.Clone(sr.lat[k:])
	sr.chains = slices.Clone(sr.chains[k:])
	sr.vdelays = slices.Clone(sr.vdelays[k:])
	sr.chainTraced = slices.ContainsFunc(sr.chains, func(c *record.Chain) bool { return c != nil })
	// The processes' memory cgroups, from the kept chains only: a
	// recorder's window does not keep every PID it ever saw.
	sr.memcgs = nil
	for _, c := range sr.chains {
		if c != nil {
			sr.noteMemcgs(c)
		}
	}
	sr.victimDelays = slices.ContainsFunc(sr.vdelays, func(d *record.TaskDelays) bool { return d != nil })
	// An OOM kill is dated by the sample that ends its interval.
	var first time.Time
	if k < len(sr.times) {
		first = sr.times[k]
	}
	sr.ooms = slices.DeleteFunc(slices.Clone(sr.ooms), func(o OOMKill) bool { return !o.Time.After(first) })
}

// trimProcs drops samples before k's processes, process events and RSS
// holders, interns the kept ones' names and strings again in the order
// a fresh series would have, and forgets the processes last seen before
// k.
func (sr *Series) trimProcs(k int) {
	n := len(sr.times)
	old := sr.resetProcs()
	ev := sort.Search(len(old.events), func(j int) bool { return old.events[j].sample >= k })
	var buf []procIO
	// The old rows' chunks are let go as the pass leaves them, and the
	// events are remapped in place: the pass holds little more than the
	// window, not two of it.
	procsFreed, rssFreed := 0, 0
	for i := k; i < n; i++ {
		procsFreed = old.procs.release(i, procsFreed)
		rssFreed = old.rss.release(i, rssFreed)
		// As Add: the processes' names, the events' strings, then the RSS
		// holders'; cgroups seen by the events, the processes, the holders.
		buf = sr.keepProcs(old, i, buf[:0])
		if ev < len(old.events) && old.events[ev].sample == i {
			sr.keepEvents(old, old.events[ev], k)
			ev++
		}
		for j := range buf {
			if c := sr.names[buf[j].name].cgroup; c != "" {
				sr.sawCgroup(buf[j].pid, buf[j].start, c)
			}
		}
		sr.keepRSS(old, i)
	}
	shiftSamples(sr.lastCum, k, func(c *cumSeen) *int { return &c.sample })
	shiftSamples(sr.execAt, k, func(x *execSeen) *int { return &x.sample })
}

// resetProcs empties sr's processes, events, RSS holders, names and
// strings, and returns a copy of sr as it was to take the kept ones from.
func (sr *Series) resetProcs() *Series {
	old := *sr
	sr.names, sr.nameIdx = nil, map[procName]uint32{}
	sr.strs, sr.strIdx = nil, nil
	sr.procs, sr.rss = rows[byte]{}, rows[rssHold]{}
	sr.events = nil
	sr.cgroups = map[int][]seenCgroup{}
	sr.sawProc, sr.kernelEvents = false, false
	return &old
}

// reintern is old's string i interned in sr.
func (sr *Series) reintern(old *Series, i uint32) uint32 { return sr.internStr(old.strs[i]) }

// keepProcs adds old's processes of sample i to sr, their names interned
// in sr, and returns them (in buf).
func (sr *Series) keepProcs(old *Series, i int, buf []procIO) []procIO {
	buf = old.procsOf(i, buf)
	pack := sr.packBuf[:0]
	for j := range buf {
		nm := old.names[buf[j].name]
		buf[j].name = sr.intern(nm.comm, nm.cmdline, nm.unit, nm.cgroup)
		pack = packProc(pack, buf[j])
	}
	sr.procs.add(pack)
	sr.packBuf = pack
	sr.sawProc = sr.sawProc || len(buf) > 0
	return buf
}

// keepEvents adds old's process events se to sr, remapped in place: their
// strings interned in sr, their samples numbered from k.
func (sr *Series) keepEvents(old *Series, se sampleEvents, k int) {
	rows := se.events
	for j := range rows {
		r := &rows[j]
		r.kind, r.comm, r.cmdline, r.unit = sr.reintern(old, r.kind), sr.reintern(old, r.comm), sr.reintern(old, r.cmdline), sr.reintern(old, r.unit)
		r.cgroup, r.parentComm, r.parentCmd = sr.reintern(old, r.cgroup), sr.reintern(old, r.parentComm), sr.reintern(old, r.parentCmd)
		if c := sr.strs[r.cgroup]; c != "" {
			sr.sawCgroup(int(r.pid), r.start, c)
		}
	}
	prior := se.prior
	for j := range prior {
		if prior[j].sample < k {
			prior[j] = cumPrior{} // seen only by a dropped sample
		} else {
			prior[j].sample -= k
		}
	}
	sr.events = append(sr.events, sampleEvents{se.sample - k, se.kernel, rows, prior})
	sr.sawProc = true
	sr.kernelEvents = sr.kernelEvents || se.kernel
}

// keepRSS adds old's RSS holders of sample i to sr, their strings
// interned in sr.
func (sr *Series) keepRSS(old *Series, i int) {
	hold := sr.rssBuf[:0]
	for _, h := range old.rssOf(i) {
		h.comm, h.cgroup = sr.reintern(old, h.comm), sr.reintern(old, h.cgroup)
		hold = append(hold, h)
		if c := sr.strs[h.cgroup]; c != "" {
			sr.sawCgroup(h.pid, h.start, c)
		}
	}
	sr.rss.add(hold)
	sr.rssBuf = hold
}

// shiftSamples drops m's entries whose sample (at) is before k and
// numbers the others' from k.
func shiftSamples[K comparable, V any](m map[K]V, k int, at func(*V) *int) {
	for key, v := range m {
		if p := at(&v); *p < k {
			delete(m, key)
		} else {
			*p -= k
			m[key] = v
		}
	}
}

// trimMemory drops the stall onsets, RSS growth points, retention
// evidence and left-out RSS that came with samples before k (at from).
func (sr *Series) trimMemory(k int, from time.Time) {
	j := sort.SearchInts(sr.onsetAt, k)
	sr.onsets = slices.Clone(sr.onsets[j:])
	sr.onsetAt = slices.Clone(sr.onsetAt[j:])
	for i := range sr.onsetAt {
		sr.onsetAt[i] -= k
	}
	sr.growth.Trim(from)
	shiftSamples(sr.retentionAt, k, func(at *int) *int { return at })
	for key := range sr.retention {
		if _, ok := sr.retentionAt[key]; !ok {
			delete(sr.retention, key)
		}
	}
	sr.leftOutSamples, sr.leftOutMax = 0, 0
	sr.leftOuts = slices.DeleteFunc(slices.Clone(sr.leftOuts), func(l leftOut) bool { return l.sample < k })
	for i := range sr.leftOuts {
		sr.leftOuts[i].sample -= k
		sr.leftOutSamples++
		sr.leftOutMax = max(sr.leftOutMax, sr.leftOuts[i].n)
	}
	sr.denied, sr.listed = 0, 0
	sr.denials = slices.DeleteFunc(slices.Clone(sr.denials), func(d denial) bool { return d.sample < k })
	for i := range sr.denials {
		d := &sr.denials[i]
		d.sample -= k
		if d.denied > sr.denied {
			sr.denied, sr.listed = d.denied, d.listed
		}
	}
}

// trimPSI checks the PSI readings from from on again.
func (sr *Series) trimPSI(from time.Time) {
	for i, chk := range []**signal.PSICheck{&sr.psiHost, &sr.psiCgroup} {
		rs := sr.psiReads[i]
		j := sort.Search(len(rs), func(j int) bool { return !rs[j].Time().Before(from) })
		rs = slices.Clone(rs[j:])
		sr.psiReads[i] = rs
		*chk = nil
		for j := range rs {
			if *chk == nil {
				*chk = signal.NewPSICheck(signal.PSICheckOptions{})
			}
			(*chk).AddReading(&rs[j])
		}
	}
}

// Slide keeps the series a sliding window of the last window of sample
// time: once its oldest sample is window/8 past that, it trims it to the
// last window (Trim), so that it holds between window and window+window/8
// and a trim's pass over the window comes once every window/8 of samples.
// It reports whether it trimmed.
func (sr *Series) Slide(window time.Duration) bool {
	from, to, ok := sr.Span()
	if !ok || to.Sub(from) <= window+window/8 {
		return false
	}
	sr.Trim(to.Add(-window))
	return true
}
