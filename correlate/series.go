package correlate

import (
	"encoding/binary"
	"math"
	"path"
	"sort"
	"strconv"
	"time"

	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// Series is what [Analyze] uses of a recording, gathered one sample at a
// time so that a long recording is never held whole: `memdiag analyze`
// of a day (86,400 samples of ~6 KB) keeps per interval the signal values
// of [record.Interval] it reads (~150 bytes), the latency summary, the
// top processes by I/O (~20 bytes each, packed, names interned) and the RSS
// points memstate.Growth fits (24 bytes a process), plus the rare process
// events, stall onsets and OOM kills.
//
//	s := correlate.NewSeries(h)
//	rec, err := record.ReadEach(path, s.Add) // after reading the header
//	res := s.Analyze(opts)
//
// Analyze(rec, opts) is NewSeries, Add for each sample, then Analyze.
type Series struct {
	Header record.Header

	// times is every sample's time: interval i is times[i]..times[i+1].
	times []time.Time
	// vals holds the values of the intervals not yet in ivs; cat their
	// catalogue rates (ival.Cat), one row an interval.
	vals column[ivalVals]
	cat  rows[float64]
	// ivs is the intervals as Analyze reads them, made from times, vals
	// and cat by intervals().
	ivs     []ival
	lat     []*latency.Summary // per interval: the Latency of the sample that ends it
	procs   rows[byte]         // per sample: its procIO fields as uvarints (packProc), ~20 bytes a process
	names   []procName
	nameIdx map[procName]uint32
	// strs interns the RSS holders' comms (rssHold.comm indexes it)
	// and the process events' strings (evRow's), one copy each.
	strs   []string
	strIdx map[string]uint32
	events []sampleEvents // samples with process events, in sample order
	onsets []record.StallOnset
	ooms   []OOMKill
	growth memstate.GrowthSeries
	// leftOutSamples counts the samples whose RSS left growing processes
	// out (Sample.RSSLeftOut), leftOutMax the most left out of one.
	leftOutSamples, leftOutMax int
	// retention is the allocator evidence recorded for growing
	// processes (Sample.Retention), the first per process.
	retention map[procKey]*memstate.Retention
	// retentionAt is the sample each retention entry came from (Trim).
	retentionAt map[procKey]int
	prev        *record.Sample
	samples     int
	// psiHost and psiCgroup check the host's and the group's PSI for
	// contradictions (nil until a sample has that PSI).
	psiHost, psiCgroup *signal.PSICheck

	// What only Trim needs, kept by a series from NewWindowSeries
	// (window true): the PSI readings of the host and the group, to
	// check the window's again; the samples that left RSS out and those
	// whose scan was denied, to count the window's again.
	window   bool
	psiReads [2][]signal.PSIReading
	leftOuts []leftOut
	denials  []denial
	// onsetAt is, per stall onset, the sample it came with.
	onsetAt []int

	rss rows[rssHold] // per sample: its rssKeep largest RSS holders
	// scratch rows for Add
	packBuf []byte
	catBuf  []float64
	rssBuf  []rssHold
	// lastCum is the last cumulative I/O seen of each live process, so an
	// exit event's life totals are credited only for what was not seen
	// before (exitPrior).
	lastCum map[int]cumSeen
	// execAt is each live process's exec time (exec events), for
	// reapedThroughTie; nil until needed.
	execAt map[int]execSeen
	// cgroups is, per PID, the cgroup each of its processes (by start
	// ticks, 0 unknown) was last seen in by a sample or an event: where
	// an episode saw a process only among the RSS holders, which carry
	// no cgroup.
	cgroups map[int][]seenCgroup
	sawProc bool // some sample had processes or process events
	// chains is, per interval, the page-cache chain traced in it (the
	// Chain of the sample that ends it), nil where none was; chainTraced
	// says whether any was.
	chains      []*record.Chain
	chainTraced bool
	// memcgs is each process's memory cgroup as the traced chain saw it
	// (the group its page-cache additions were charged to, its own when
	// it reclaimed, stalled or refaulted), by PID: on a hybrid host the v1
	// memory path, which need not mirror the v2 group the process
	// samples carry. nil until a chain names one.
	memcgs map[int]string
	// vdelays is, per interval, the rise of the victim's delay
	// accounting (record.Sample.VictimDelay), nil where an end lacks it;
	// victimDelays says whether any interval has it.
	vdelays      []*record.TaskDelays
	victimDelays bool
	// denied, listed: the sample where the most processes' /proc/PID/io
	// was unreadable (Sample.Scan), and how many processes it listed.
	denied, listed int
	kernelEvents   bool // some process event came from the kernel (not "poll")

	// parts holds, per episode start, every recorded process's activity
	// in it (filled by Analyze).
	parts map[time.Time][]procPart
}

type leftOut struct{ sample, n int }

type denial struct{ sample, denied, listed int }

// procKey tells a process from a later one that reuses its PID.
type procKey struct {
	pid   int
	start uint64
}

// rssHold is one of a sample's largest RSS holders.
type rssHold struct {
	pid        int
	start      uint64
	comm       uint32 // indexes Series.strs: no pointer for the GC to scan
	cgroup     uint32 // indexes Series.strs: the cgroup recorded ("" none), for Trim
	anon, file uint64 // bytes
}

// rssKeep is how many RSS holders of each sample the series keeps (fewer
// when the recording's --top is smaller: Header.TopN).
const rssKeep = 5

type cumSeen struct {
	start  uint64
	cum    [2]uint64 // read, write bytes
	sample int       // the sample that saw it
}

// ival is the part of a record.Interval that Analyze reads; the fields
// keep their names, units and NaN for unknown.
type ival struct {
	Start, End time.Time
	ivalVals
	// Cat is every signal.Catalogue entry's rate in the interval, in its
	// RateUnit (record.Interval.PerSec), NaN when unknown.
	Cat []float64
}

// ivalVals are an ival's fixed-size values: what the series stores of an
// interval besides its times and catalogue rates, with no pointer.
type ivalVals struct {
	Dt time.Duration

	MemSome, MemFull, CgMemSome, CgMemFull  float64
	FileLRUBytes, FileLRUDeltaBytes         float64
	RefaultFilePerSec, RefaultAnonPerSec    float64
	DirectReclaimPerSec, LimitReclaimPerSec float64
	DiskReadBytesPerSec                     float64
	DiskWriteBytesPerSec                    float64
	DiskIOTimePerSec                        float64
	SwapOutBytesPerSec                      float64
	// The --cgroup group's own reclaim, from its memory.stat (NaN when
	// not recorded): refaults pages/s (file+anon), reclaim scans pages/s
	// (allocation and limit reclaim), swap-out bytes/s.
	CgRefaultPerSec, CgReclaimPerSec, CgSwapOutBytesPerSec float64
}

func lean(iv *record.Interval) ivalVals {
	return ivalVals{
		Dt:      iv.Dt,
		MemSome: iv.MemSome, MemFull: iv.MemFull, CgMemSome: iv.CgMemSome, CgMemFull: iv.CgMemFull,
		FileLRUBytes: iv.FileLRUBytes, FileLRUDeltaBytes: iv.FileLRUDeltaBytes,
		RefaultFilePerSec: iv.RefaultFilePerSec, RefaultAnonPerSec: iv.RefaultAnonPerSec,
		DirectReclaimPerSec: iv.PerSec(signal.DirectReclaim), LimitReclaimPerSec: iv.PerSec(signal.LimitReclaim),
		DiskReadBytesPerSec: iv.DiskReadBytesPerSec, DiskWriteBytesPerSec: iv.DiskWriteBytesPerSec,
		DiskIOTimePerSec: iv.DiskIOTimePerSec, SwapOutBytesPerSec: iv.SwapOutBytesPerSec,
		CgRefaultPerSec:      sumKnown(iv.CgPerSec(signal.RefaultFile), iv.CgPerSec(signal.RefaultAnon)),
		CgReclaimPerSec:      iv.CgPerSec(signal.AllocReclaim),
		CgSwapOutBytesPerSec: iv.CgPerSec(signal.SwapOut), // pages/s until Add scales it
	}
}

// catalogueRates appends iv.PerSec of every signal.Catalogue entry, in
// order, to out.
func catalogueRates(out []float64, iv *record.Interval) []float64 {
	for _, sig := range signal.Catalogue {
		out = append(out, iv.PerSec(sig))
	}
	return out
}

// intervals is every interval added so far, as Analyze reads them: the
// ones added since the last call are made from the columns then.
func (sr *Series) intervals() []ival {
	n := len(sr.ivs) + sr.vals.len()
	if sr.vals.len() == 0 {
		return sr.ivs
	}
	ivs := sr.ivs
	if cap(ivs) < n {
		ivs = make([]ival, len(sr.ivs), n)
		copy(ivs, sr.ivs)
	}
	for i := len(ivs); i < n; i++ {
		ivs = append(ivs, ival{Start: sr.times[i], End: sr.times[i+1], ivalVals: *sr.vals.at(i - len(sr.ivs)), Cat: sr.cat.row(i)})
	}
	sr.ivs, sr.vals = ivs, column[ivalVals]{}
	return ivs
}

// sumKnown is a+b, or the known one of them, NaN when neither is known.
func sumKnown(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return a + b
}

// procIO is what the episodes and the culprit ranking read of a
// diskio.ProcIO; name indexes Series.names.
type procIO struct {
	pid, ppid              int
	name                   uint32
	start                  uint64
	readBytes, writeBytes  uint64 // cumulative
	dReadBytes, dWriteByte uint64 // since the previous sample
	// Since the previous sample, I/O of children it reaped that no scan
	// saw (record.ProcIO.DeltaReaped*Bytes).
	rReadBytes, rWriteBytes uint64
}

// procName is a process's names, interned: they repeat every sample.
type procName struct{ comm, cmdline, unit, cgroup string }

type sampleEvents struct {
	sample int
	kernel bool // some event came from the kernel (Source not "poll")
	events []evRow
	// prior[j] is, for an exit event j, the cumulative read/write bytes
	// last seen of that process in an earlier sample (ok false: never
	// seen).
	prior []cumPrior
}

type cumPrior struct {
	cum    [2]uint64
	ok     bool
	sample int // the sample that saw it
}

// NewSeries starts an empty series for a recording with header h.
func NewSeries(h record.Header) *Series {
	return &Series{Header: h, nameIdx: map[procName]uint32{}, lastCum: map[int]cumSeen{}, cgroups: map[int][]seenCgroup{}}
}

// NewWindowSeries starts an empty series that can be trimmed (Trim): it
// keeps besides what NewSeries's does each sample's PSI readings (~800
// bytes a sample and scope, host and group), to check the window's
// again.
func NewWindowSeries(h record.Header) *Series {
	sr := NewSeries(h)
	sr.window = true
	return sr
}

// Add folds in the next sample, which must be later than the previous
// one. s is not kept; the previous sample is, until the next Add.
func (sr *Series) Add(s *record.Sample) {
	i := sr.samples
	sr.samples++
	sr.checkPSI(s)
	sr.times = append(sr.times, s.Time)
	if sr.prev != nil {
		sr.addInterval(s)
	}
	sr.addProcs(i, s)
	sr.addMemory(s)
	// Between needs the previous sample's counters; nothing else of it
	// is kept.
	sr.prev = s
}

// addInterval adds the interval from the previous sample to s: its
// rates, traced chain, victim waits, latency summary and OOM kills.
func (sr *Series) addInterval(s *record.Sample) {
	iv := record.Between(&sr.Header, sr.prev, s)
	li := lean(&iv)
	ps := float64(sr.Header.PageSize)
	if ps <= 0 {
		ps = 4096
	}
	li.CgSwapOutBytesPerSec *= ps
	sr.vals.add(li)
	sr.catBuf = catalogueRates(sr.catBuf[:0], &iv)
	sr.cat.add(sr.catBuf)
	sr.chains = append(sr.chains, s.Chain)
	if s.Chain != nil {
		sr.chainTraced = true
		sr.noteMemcgs(s.Chain)
	}
	vd := waitDelta(sr.prev.VictimDelay, s.VictimDelay, s.Time.Sub(sr.prev.Time))
	sr.vdelays = append(sr.vdelays, vd)
	sr.victimDelays = sr.victimDelays || vd != nil
	var l *latency.Summary
	if s.Latency != nil && s.Latency.Count > 0 {
		c := *s.Latency
		l = c.Summary()
	}
	sr.lat = append(sr.lat, l)
	if k := sr.oomBetween(s); k != nil {
		sr.ooms = append(sr.ooms, *k)
	}
}

// oomBetween is the OOM kills vmstat's oom_kill counted between the
// previous sample and s, with the kernel log's victims and the processes
// that exited then; nil for none.
func (sr *Series) oomBetween(s *record.Sample) *OOMKill {
	p, c := sr.prev.VMStat, s.VMStat
	if p == nil || c == nil || p.OOMKill == nil || c.OOMKill == nil || *c.OOMKill <= *p.OOMKill {
		return nil
	}
	k := OOMKill{Time: s.Time, Count: int(*c.OOMKill - *p.OOMKill), Group: sr.Header.Cgroup}
	if pg, cg := sr.prev.CgroupVMStat, s.CgroupVMStat; k.Group != "" && pg != nil && cg != nil && pg.OOMKill != nil && cg.OOMKill != nil {
		n := int(*cg.OOMKill) - int(*pg.OOMKill)
		k.InGroup = &n
	}
	named := 0
	for _, v := range s.OOMKills {
		k.Victims = append(k.Victims, OOMVictim{PID: v.PID, Comm: v.Comm, Cgroup: v.Cgroup, OOMCgroup: v.OOMCgroup,
			Constraint: v.Constraint, OutsideScope: k.Group != "" && v.Cgroup != "" && !cgroupRelated(k.Group, v.Cgroup)})
		if k.Group != "" && cgroupWithin(k.Group, v.Cgroup) {
			named++
		}
	}
	// A v1 memory group's oom_kill (memory.oom_control) counts
	// only its own tasks, not its children's: a victim the
	// kernel log places in the group or below it is in it.
	if k.Group != "" && named > 0 && (k.InGroup == nil || *k.InGroup < named) {
		k.InGroup = &named
	}
	for _, e := range s.Events {
		if e.Kind == "exit" {
			comm := e.Comm
			if comm == "" {
				comm = "?" // exited before any scan or event named it
			}
			k.Exited = append(k.Exited, comm+" "+strconv.Itoa(e.PID))
		}
	}
	return &k
}

// addProcs adds sample i's processes (their I/O, less what reapedThroughTie
// finds counted twice) and process events, and the cgroups they were seen in.
func (sr *Series) addProcs(i int, s *record.Sample) {
	kernel := false
	for j := range s.Events {
		if s.Events[j].Source != "poll" {
			kernel = true
			break
		}
	}
	sr.kernelEvents = sr.kernelEvents || kernel
	if st := s.Scan; st != nil && st.Denied > 0 {
		if st.Denied > sr.denied {
			sr.denied, sr.listed = st.Denied, st.Processes
		}
		if sr.window {
			sr.denials = append(sr.denials, denial{i, st.Denied, st.Processes})
		}
	}
	var evs []process.Event
	if len(s.Events) > 0 {
		evs = record.ProcessEvents(s.Events)
	}
	lost := sr.reapedThroughTie(s, evs)
	pack := sr.packBuf[:0]
	for j := range s.Procs {
		pack = packProc(pack, sr.procRow(&s.Procs[j], lost))
	}
	sr.procs.add(pack)
	sr.packBuf = pack
	if len(s.Events) > 0 {
		sr.addEvents(i, evs, kernel)
	}
	// After the exits of this sample were matched: processes seen now.
	for j := range s.Procs {
		p := &s.Procs[j]
		sr.lastCum[p.PID] = cumSeen{p.StartTicks, [2]uint64{p.ReadBytes, p.WriteBytes}, i}
	}
	for _, ev := range s.Events {
		if ev.Kind == process.Exit {
			if c, ok := sr.lastCum[ev.PID]; ok && !slicesHasPID(s.Procs, ev.PID, c.start) {
				delete(sr.lastCum, ev.PID)
			}
		}
	}
	if len(s.Procs) > 0 {
		sr.sawProc = true
	}
	for j := range s.Events {
		if ev := &s.Events[j]; ev.Cgroup != "" {
			sr.sawCgroup(ev.PID, ev.StartTicks, ev.Cgroup)
		}
	}
	for j := range s.Procs {
		if p := &s.Procs[j]; p.Cgroup != "" {
			sr.sawCgroup(p.PID, p.StartTicks, p.Cgroup)
		}
	}
}

// procRow is p as a packed row, its deltas less lost (reapedThroughTie):
// off the reaped delta first (a single-threaded parent's exact split),
// the rest off its own (a multi-threaded one's).
func (sr *Series) procRow(p *record.ProcIO, lost map[int][2]uint64) procIO {
	r := [2]uint64{p.DeltaReapedReadBytes, p.DeltaReapedWriteBytes}
	d := [2]uint64{p.DeltaReadBytes, p.DeltaWriteBytes}
	if l, ok := lost[p.PID]; ok {
		for k := range 2 {
			c := min(r[k], l[k])
			r[k] -= c
			d[k] -= min(d[k], l[k]-c)
		}
	}
	return procIO{
		pid: p.PID, ppid: p.PPID, name: sr.intern(p.Comm, p.Cmdline, p.Unit, p.Cgroup), start: p.StartTicks,
		readBytes: p.ReadBytes, writeBytes: p.WriteBytes, dReadBytes: d[0], dWriteByte: d[1],
		rReadBytes: r[0], rWriteBytes: r[1],
	}
}

// addEvents adds sample i's process events, each exit with the
// cumulative I/O last seen of its process in an earlier sample.
func (sr *Series) addEvents(i int, evs []process.Event, kernel bool) {
	prior := make([]cumPrior, len(evs))
	for j, ev := range evs {
		if ev.Kind != process.Exit {
			continue
		}
		if c, ok := sr.lastCum[ev.PID]; ok && (ev.StartTicks == 0 || c.start == 0 || c.start == ev.StartTicks) {
			prior[j] = cumPrior{c.cum, true, c.sample}
		}
	}
	rows := make([]evRow, len(evs))
	for j := range evs {
		rows[j] = sr.eventRow(&evs[j])
	}
	sr.events = append(sr.events, sampleEvents{i, kernel, rows, prior})
	sr.sawProc = true
}

// evRow is a process event as the series keeps it: the fields the
// analysis reads, its strings as indexes into Series.strs. A busy build
// host's hour holds ~155,000 exec and exit events (bench/replayanalyze,
// docs/benchmarks.md): as process.Event, 264 bytes each and their
// strings, half of the series' heap; as rows, 80 bytes and one copy of
// each string (~120,000 command lines, ~19,000 distinct).
type evRow struct {
	time                          int64 // Unix ns; evNoTime when the event had none
	start                         uint64
	read, write                   uint64
	pid, ppid, parentPPID         int32
	kind, comm, cmdline, unit     uint32
	cgroup, parentComm, parentCmd uint32
}

// evNoTime marks an event without a time (process.Event.Time zero).
const evNoTime = math.MinInt64

// eventRow is ev as a row, its strings interned.
func (sr *Series) eventRow(ev *process.Event) evRow {
	t := int64(evNoTime)
	if n := ev.Time.UnixNano(); !ev.Time.IsZero() && time.Unix(0, n).Equal(ev.Time) {
		t = n // a time past what int64 nanoseconds hold (years before 1678, after 2262) is none
	}
	return evRow{time: t, start: ev.StartTicks, read: ev.ReadBytes, write: ev.WriteBytes,
		pid: int32(ev.PID), ppid: int32(ev.PPID), parentPPID: int32(ev.ParentPPID),
		kind: sr.internStr(string(ev.Kind)), comm: sr.internStr(ev.Comm), cmdline: sr.internStr(ev.Cmdline), unit: sr.internStr(ev.Unit),
		cgroup: sr.internStr(ev.Cgroup), parentComm: sr.internStr(ev.ParentComm), parentCmd: sr.internStr(ev.ParentCmdline)}
}

// event is row r as a process.Event (Source, Exe and BlkioDelay, which
// the analysis does not read, left out).
func (sr *Series) event(r *evRow) process.Event {
	ev := process.Event{Kind: process.EventKind(sr.strs[r.kind]), StartTicks: r.start, ReadBytes: r.read, WriteBytes: r.write,
		PID: int(r.pid), PPID: int(r.ppid), ParentPPID: int(r.parentPPID),
		Comm: sr.strs[r.comm], Cmdline: sr.strs[r.cmdline], Unit: sr.strs[r.unit], Cgroup: sr.strs[r.cgroup],
		ParentComm: sr.strs[r.parentComm], ParentCmdline: sr.strs[r.parentCmd]}
	if r.time != evNoTime {
		ev.Time = time.Unix(0, r.time).UTC()
	}
	return ev
}

// addMemory adds s's largest RSS holders, stall onsets, RSS growth and
// retention.
func (sr *Series) addMemory(s *record.Sample) {
	// Sample.RSS holds the --top largest, then the growth candidates:
	// with --top below rssKeep, only the top are the largest holders.
	// (0: not said, as in recordings built by hand: all count.)
	keep := rssKeep
	if sr.Header.TopN > 0 && sr.Header.TopN < keep {
		keep = sr.Header.TopN
	}
	hold := sr.rssBuf[:0]
	for j := 0; j < len(s.RSS) && j < keep; j++ {
		r := &s.RSS[j]
		hold = append(hold, rssHold{r.PID, r.StartTicks, sr.internStr(r.Comm), sr.internStr(r.Cgroup), r.AnonBytes, r.FileBytes})
		if r.Cgroup != "" {
			sr.sawCgroup(r.PID, r.StartTicks, r.Cgroup)
		}
	}
	sr.rss.add(hold)
	sr.rssBuf = hold
	sr.onsets = append(sr.onsets, s.Onsets...)
	for range s.Onsets {
		sr.onsetAt = append(sr.onsetAt, sr.samples-1)
	}
	if len(s.RSS) > 0 {
		sr.growth.Add(s.Time, record.MemstateRSS(s.RSS))
	}
	if s.RSSLeftOut > 0 {
		sr.leftOutSamples++
		sr.leftOutMax = max(sr.leftOutMax, s.RSSLeftOut)
		if sr.window {
			sr.leftOuts = append(sr.leftOuts, leftOut{sr.samples - 1, s.RSSLeftOut})
		}
	}
	for i := range s.Retention {
		r := &s.Retention[i]
		k := procKey{r.PID, r.StartTicks}
		if sr.retention == nil {
			sr.retention, sr.retentionAt = map[procKey]*memstate.Retention{}, map[procKey]int{}
		}
		if sr.retention[k] == nil {
			sr.retention[k] = r.Retention.Memstate()
			sr.retentionAt[k] = sr.samples - 1
		}
	}
}

// internStr is str's index in sr.strs, added when new.
func (sr *Series) internStr(str string) uint32 {
	if i, ok := sr.strIdx[str]; ok {
		return i
	}
	if sr.strIdx == nil {
		sr.strIdx = map[string]uint32{}
	}
	i := uint32(len(sr.strs))
	sr.strs = append(sr.strs, str)
	sr.strIdx[str] = i
	return i
}

func (sr *Series) intern(comm, cmdline, unit, cgroup string) uint32 {
	k := procName{comm, cmdline, unit, cgroup}
	if i, ok := sr.nameIdx[k]; ok {
		return i
	}
	i := uint32(len(sr.names))
	sr.names = append(sr.names, k)
	sr.nameIdx[k] = i
	return i
}

type seenCgroup struct {
	start  uint64
	cgroup string
}

// sawCgroup notes that process pid (start ticks start, 0 unknown) was in
// cgroup.
func (sr *Series) sawCgroup(pid int, start uint64, cgroup string) {
	cs := sr.cgroups[pid]
	for i := range cs {
		if cs[i].start == start || start == 0 || cs[i].start == 0 {
			cs[i].cgroup = cgroup
			if cs[i].start == 0 {
				cs[i].start = start
			}
			return
		}
	}
	sr.cgroups[pid] = append(cs, seenCgroup{start, cgroup})
}

// noteMemcgs keeps the memory cgroup of each process ch names.
func (sr *Series) noteMemcgs(ch *record.Chain) {
	note := func(pid int, memcg string) {
		if pid <= 0 || memcg == "" {
			return
		}
		if sr.memcgs == nil {
			sr.memcgs = map[int]string{}
		}
		sr.memcgs[pid] = memcg
	}
	for _, a := range ch.Adds {
		note(a.PID, a.Memcg)
	}
	for _, e := range ch.Evictions {
		if e.Reclaimer != record.ReclaimKswapd {
			note(e.PID, e.ReclMemcg)
		}
	}
	for _, st := range ch.Stalls {
		note(st.PID, st.Memcg)
	}
	for _, r := range ch.Refaults {
		note(r.PID, r.Memcg)
	}
}

// inScope says whether process pid, in cgroup v2 group cg, can cause the
// recorded scope's reclaim (package-level inScope), or — on a hybrid
// host, where a process's v1 memory cgroup need not mirror its v2 group
// — whether the traced chain saw its memory charged within the victim's
// limit domain (record.Victim.Domain): a job moved into the service's
// v1 memory group but left at the v2 root competes under its limit.
func (sr *Series) inScope(pid int, cg string) bool {
	if inScope(&sr.Header, cg) {
		return true
	}
	v := sr.Header.Victim
	if v == nil || v.Domain() == "" {
		return false
	}
	m, ok := sr.memcgs[pid]
	return ok && memcgWithin(path.Clean("/"+v.Domain()), m)
}

// cgroupOf is the cgroup process pid (start ticks start, 0 any) was last
// seen in anywhere in the recording, "" if never.
func (sr *Series) cgroupOf(pid int, start uint64) string {
	for _, c := range sr.cgroups[pid] {
		if c.start == start || start == 0 || c.start == 0 {
			return c.cgroup
		}
	}
	return ""
}

// procsOf appends the processes of sample i to buf.
func (sr *Series) procsOf(i int, buf []procIO) []procIO {
	b := sr.procs.row(i)
	for len(b) > 0 {
		var p procIO
		p, b = unpackProc(b)
		buf = append(buf, p)
	}
	return buf
}

// packProc appends p to b as eight uvarints: a day's 864,000 entries take
// ~22 MB instead of 49 MB as structs.
func packProc(b []byte, p procIO) []byte {
	for _, v := range [...]uint64{uint64(p.pid), uint64(p.name), p.start, p.readBytes, p.writeBytes, p.dReadBytes, p.dWriteByte, uint64(p.ppid), p.rReadBytes, p.rWriteBytes} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// unpackProc reads what packProc wrote at the start of b and returns the
// rest of b.
func unpackProc(b []byte) (procIO, []byte) {
	var v [10]uint64
	for i := range v {
		x, n := binary.Uvarint(b)
		v[i], b = x, b[n:]
	}
	return procIO{pid: int(v[0]), name: uint32(v[1]), start: v[2], readBytes: v[3], writeBytes: v[4], dReadBytes: v[5], dWriteByte: v[6], ppid: int(v[7]),
		rReadBytes: v[8], rWriteBytes: v[9]}, b
}

// Span is the time the recording's intervals cover, (from, to]: its
// first and last sample; ok is false with fewer than two samples.
func (sr *Series) Span() (from, to time.Time, ok bool) {
	if len(sr.times) < 2 {
		return from, to, false
	}
	return sr.times[0], sr.times[len(sr.times)-1], true
}

// eventsWithPrior returns the process events of sample i, made in buf
// (its contents replaced), and, per exit event, the cumulative I/O last
// seen of that process before it.
func (sr *Series) eventsWithPrior(i int, buf []process.Event) ([]process.Event, []cumPrior) {
	j := sort.Search(len(sr.events), func(j int) bool { return sr.events[j].sample >= i })
	if j < len(sr.events) && sr.events[j].sample == i {
		buf = buf[:0]
		for k := range sr.events[j].events {
			buf = append(buf, sr.event(&sr.events[j].events[k]))
		}
		return buf, sr.events[j].prior
	}
	return buf[:0], nil
}

// sampleTime is the time of sample i (i ≥ 1, or 0 with one interval).
func (sr *Series) sampleTime(i int) time.Time {
	return sr.times[i]
}

// slicesHasPID reports whether procs holds the process pid (start ticks
// start, or any when 0) after it exited: a PID reused within the sample.
func slicesHasPID(procs []record.ProcIO, pid int, start uint64) bool {
	for i := range procs {
		if procs[i].PID == pid && start != 0 && procs[i].StartTicks != start {
			return true
		}
	}
	return false
}

// rssOf returns the largest RSS holders kept of sample i.
func (sr *Series) rssOf(i int) []rssHold {
	if i >= sr.rss.len() {
		return nil
	}
	return sr.rss.row(i)
}

// reapedThroughTie is, for a recording made before
// record.ProcIOAccountingDepth, the I/O that sample s's deltas hold a
// second time, by the PID of the live ancestor whose delta holds it: the
// kernel adds a reaped child's I/O to its parent, and the old scanner
// failed to take it off in two cases.
//   - It took exited processes' totals off their parents in start-time
//     order; a script and the cat it runs at once share a start tick, and
//     when the script came first, cat's total — recorded in its own rows
//     and exit — stayed in the reaped delta of the loop that reaped the
//     script. Only when both were seen alive by an earlier scan (exec
//     before the previous sample, or no exec recorded) and both exited
//     before this one, cat's exec within two clock ticks of the script's;
//     the exit's bytes are what was lost.
//   - It took taskstats' exit totals as a child's whole I/O; for a
//     multi-threaded child they are its last task's (a go test binary:
//     12 KiB at exit, 1.5 GiB in its rows), so the rest stayed in the
//     parent's delta: what an earlier sample saw of the child beyond its
//     exit's bytes is what was lost.
func (sr *Series) reapedThroughTie(s *record.Sample, evs []process.Event) map[int][2]uint64 {
	if sr.Header.ProcIOAccounting >= record.ProcIOAccountingDepth || len(evs) == 0 {
		return nil
	}
	if sr.execAt == nil {
		sr.execAt = map[int]execSeen{}
	}
	type exit struct {
		ppid int
		rw   [2]uint64
	}
	var exits map[int]exit
	for _, ev := range evs {
		switch ev.Kind {
		case process.Exec:
			sr.execAt[ev.PID] = execSeen{ev.Time, sr.samples - 1}
		case process.Exit:
			if exits == nil {
				exits = map[int]exit{}
			}
			exits[ev.PID] = exit{ev.PPID, [2]uint64{ev.ReadBytes, ev.WriteBytes}}
		}
	}
	seenAlive := func(pid int) bool {
		x, ok := sr.execAt[pid]
		return sr.prev != nil && (!ok || x.t.IsZero() || x.t.Before(sr.prev.Time))
	}
	hz := sr.Header.ClockTicks
	if hz <= 0 {
		hz = 100 // USER_HZ on every Linux architecture memdiag runs on
	}
	tick := 2 * time.Second / time.Duration(hz)
	// The first ancestor that did not exit in this interval reaped it.
	liveAncestor := func(a int) int {
		for n := 0; n < len(exits); n++ {
			up, ok := exits[a]
			if !ok {
				break
			}
			a = up.ppid
		}
		return a
	}
	var lost map[int][2]uint64
	addLost := func(pid int, rw [2]uint64) {
		if lost == nil {
			lost = map[int][2]uint64{}
		}
		l := lost[pid]
		lost[pid] = [2]uint64{l[0] + rw[0], l[1] + rw[1]}
	}
	for _, ev := range evs {
		if ev.Kind != process.Exit || ev.Source != "taskstats" {
			continue
		}
		c, ok := sr.lastCum[ev.PID]
		if !ok || (ev.StartTicks != 0 && c.start != 0 && c.start != ev.StartTicks) {
			continue
		}
		if rw := [2]uint64{c.cum[0] - min(c.cum[0], ev.ReadBytes), c.cum[1] - min(c.cum[1], ev.WriteBytes)}; rw != [2]uint64{} {
			addLost(liveAncestor(ev.PPID), rw)
		}
	}
	for pid, x := range exits {
		m, ok := exits[x.ppid]
		if !ok || x.ppid == pid || x.rw == [2]uint64{} || !seenAlive(pid) || !seenAlive(x.ppid) {
			continue
		}
		if ex, okx := sr.execAt[pid]; okx {
			if em, okm := sr.execAt[x.ppid]; okm && (ex.t.Sub(em.t) >= tick || em.t.Sub(ex.t) >= tick) {
				continue // started in different ticks: the old order was right
			}
		}
		addLost(liveAncestor(m.ppid), x.rw)
	}
	for pid := range exits {
		delete(sr.execAt, pid)
	}
	return lost
}

// checkPSI feeds the sample's PSI to the host's and the group's checks.
func (sr *Series) checkPSI(s *record.Sample) {
	if s.PSI != nil {
		if sr.psiHost == nil {
			sr.psiHost = signal.NewPSICheck(signal.PSICheckOptions{})
		}
		r := signal.NewPSIReading(s.Time, s.PSI.Snapshot(), s.VMStat.LRU())
		sr.psiHost.AddReading(&r)
		if sr.window {
			sr.psiReads[0] = append(sr.psiReads[0], r)
		}
	}
	if s.CgroupPSI != nil {
		if sr.psiCgroup == nil {
			sr.psiCgroup = signal.NewPSICheck(signal.PSICheckOptions{})
		}
		r := signal.NewPSIReading(s.Time, s.CgroupPSI.Snapshot(), s.VMStat.LRU(), s.CgroupVMStat.LRU())
		sr.psiCgroup.AddReading(&r)
		if sr.window {
			sr.psiReads[1] = append(sr.psiReads[1], r)
		}
	}
}

// suspectPSI are the contradictions found in the recording's PSI, the
// host's first.
func (sr *Series) suspectPSI() []Warning {
	var ws []Warning
	for _, c := range []struct {
		chk    *signal.PSICheck
		cgroup string
	}{{sr.psiHost, ""}, {sr.psiCgroup, sr.Header.Cgroup}} {
		if c.chk == nil {
			continue
		}
		for _, x := range c.chk.Findings() {
			ws = append(ws, Warning{Kind: WarnSuspectPSI, SuspectPSI: &x, Cgroup: c.cgroup, Kernel: sr.Header.Kernel})
		}
	}
	return ws
}
