package record

// The JSON names [sampleDecoder] reads, per wire type, in the order of the
// type's fields (the order the writer writes them):
// TestSampleDecoderFields checks them against the struct tags.

// sampleFields are Sample's, less retention, chain and oom_kills (a line
// with one goes to the JSON decoder whole).
var sampleFields = []field[Sample]{
	{`"type":`, func(d *sampleDecoder, s *Sample) bool { return d.string(&s.Type) }},
	{`"seq":`, func(d *sampleDecoder, s *Sample) bool { return d.int(&s.Seq) }},
	{`"time":`, func(d *sampleDecoder, s *Sample) bool { return d.time(&s.Time) }},
	{`"psi":`, func(d *sampleDecoder, s *Sample) bool { return d.psi(&s.PSI) }},
	{`"cgroup_psi":`, func(d *sampleDecoder, s *Sample) bool { return d.psi(&s.CgroupPSI) }},
	{`"meminfo":`, func(d *sampleDecoder, s *Sample) bool {
		s.Meminfo = new(Meminfo)
		return object(d, s.Meminfo, meminfoFields)
	}},
	{`"vmstat":`, func(d *sampleDecoder, s *Sample) bool {
		s.VMStat = new(VMStat)
		return object(d, s.VMStat, vmstatFields)
	}},
	{`"disks":`, func(d *sampleDecoder, s *Sample) (ok bool) {
		s.Disks, ok = array(d, &d.disks, func(d *sampleDecoder, v *Disk) bool { return object(d, v, diskFields) })
		return ok
	}},
	{`"procs":`, func(d *sampleDecoder, s *Sample) (ok bool) {
		s.Procs, ok = d.procIOs()
		return ok
	}},
	{`"events":`, func(d *sampleDecoder, s *Sample) (ok bool) {
		s.Events, ok = array(d, &d.events, func(d *sampleDecoder, v *Event) bool { return object(d, v, eventFields) })
		return ok
	}},
	{`"scan":`, func(d *sampleDecoder, s *Sample) bool {
		s.Scan = new(ScanStats)
		return object(d, s.Scan, scanFields)
	}},
	{`"latency":`, func(d *sampleDecoder, s *Sample) bool {
		s.Latency = new(Latency)
		return object(d, s.Latency, latencyFields)
	}},
	{`"event_stats":`, func(d *sampleDecoder, s *Sample) bool {
		s.EventStats = new(EventStats)
		return object(d, s.EventStats, eventStatsFields)
	}},
	{`"onsets":`, func(d *sampleDecoder, s *Sample) (ok bool) {
		s.Onsets, ok = array(d, &d.onsets, func(d *sampleDecoder, v *StallOnset) bool { return object(d, v, onsetFields) })
		return ok
	}},
	{`"rss":`, func(d *sampleDecoder, s *Sample) (ok bool) {
		s.RSS, ok = array(d, &d.rss, func(d *sampleDecoder, v *ProcRSS) bool { return object(d, v, rssFields) })
		return ok
	}},
	{`"rss_left_out":`, func(d *sampleDecoder, s *Sample) bool { return d.int(&s.RSSLeftOut) }},
	{`"errors":`, func(d *sampleDecoder, s *Sample) (ok bool) {
		s.Errors, ok = array(d, &d.errs, (*sampleDecoder).string)
		return ok
	}},
	{`"cgroup_vmstat":`, func(d *sampleDecoder, s *Sample) bool {
		s.CgroupVMStat = new(VMStat)
		return object(d, s.CgroupVMStat, vmstatFields)
	}},
	{`"victim_delay":`, func(d *sampleDecoder, s *Sample) bool {
		s.VictimDelay = new(TaskDelays)
		return object(d, s.VictimDelay, taskDelaysFields)
	}},
}

// sampleLeftToDecoder are the JSON names of Sample that sampleFields
// leaves to the JSON decoder.
var sampleLeftToDecoder = []string{"retention", "oom_kills", "chain"}

// psiBlock holds a PSI snapshot with its resources and full lines in one
// allocation.
type psiBlock struct {
	p    PSI
	res  [3]PSIResource
	full [3]PSILine
}

// psi reads a PSI object: "memory", "io", "cpu", each {"some":…,"full":…}.
func (d *sampleDecoder) psi(p **PSI) bool {
	blk := new(psiBlock)
	*p = &blk.p
	return object(d, blk, psiFields)
}

var psiFields = []field[psiBlock]{
	{`"memory":`, func(d *sampleDecoder, b *psiBlock) bool { return d.psiResource(b, 0, &b.p.Memory) }},
	{`"io":`, func(d *sampleDecoder, b *psiBlock) bool { return d.psiResource(b, 1, &b.p.IO) }},
	{`"cpu":`, func(d *sampleDecoder, b *psiBlock) bool { return d.psiResource(b, 2, &b.p.CPU) }},
}

// psiResource reads a PSIResource into b's i-th and points r at it.
func (d *sampleDecoder) psiResource(b *psiBlock, i int, r **PSIResource) bool {
	*r = &b.res[i]
	return object(d, &psiSlot{&b.res[i], &b.full[i]}, psiResourceFields)
}

// psiSlot is a PSIResource being read and the line its Full points to.
type psiSlot struct {
	r    *PSIResource
	full *PSILine
}

var psiResourceFields = []field[psiSlot]{
	{`"some":`, func(d *sampleDecoder, s *psiSlot) bool { return d.psiLine(&s.r.Some) }},
	{`"full":`, func(d *sampleDecoder, s *psiSlot) bool { s.r.Full = s.full; return d.psiLine(s.full) }},
}

// psiLine reads a PSI line as [parsePSILine] does.
func (d *sampleDecoder) psiLine(l *PSILine) bool {
	for j := d.i; j < len(d.b); j++ {
		if d.b[j] == '}' {
			v, ok := parsePSILine(d.b[d.i : j+1])
			*l, d.i = v, j+1
			return ok
		}
	}
	return false
}

// procIOs reads a JSON array of ProcIO.
func (d *sampleDecoder) procIOs() ([]ProcIO, bool) {
	return array(d, &d.procs, func(d *sampleDecoder, v *ProcIO) bool { return object(d, v, procIOFields) })
}

var meminfoFields = []field[Meminfo]{
	{`"mem_total_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.MemTotal) }},
	{`"mem_free_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.MemFree) }},
	{`"mem_available_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.MemAvailable) }},
	{`"buffers_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.Buffers) }},
	{`"cached_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.Cached) }},
	{`"swap_cached_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.SwapCached) }},
	{`"active_anon_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.ActiveAnon) }},
	{`"inactive_anon_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.InactiveAnon) }},
	{`"active_file_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.ActiveFile) }},
	{`"inactive_file_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.InactiveFile) }},
	{`"unevictable_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.Unevictable) }},
	{`"dirty_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.Dirty) }},
	{`"writeback_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.Writeback) }},
	{`"shmem_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.Shmem) }},
	{`"swap_total_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.SwapTotal) }},
	{`"swap_free_bytes":`, func(d *sampleDecoder, m *Meminfo) bool { return d.uint64p(&m.SwapFree) }},
}

var vmstatFields = []field[VMStat]{
	{`"pgscan_kswapd_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgscanKswapd) }},
	{`"pgscan_direct_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgscanDirect) }},
	{`"pgsteal_kswapd_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgstealKswapd) }},
	{`"pgsteal_direct_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgstealDirect) }},
	{`"workingset_refault_file_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.WorkingsetRefaultFile) }},
	{`"workingset_refault_anon_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.WorkingsetRefaultAnon) }},
	{`"workingset_activate_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.WorkingsetActivate) }},
	{`"pgmajfault":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.Pgmajfault) }},
	{`"allocstall":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.Allocstall) }},
	{`"oom_kill":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.OOMKill) }},
	{`"pswpin_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.Pswpin) }},
	{`"pswpout_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.Pswpout) }},
	{`"pgscan_anon_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgscanAnon) }},
	{`"pgscan_file_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgscanFile) }},
	{`"pgsteal_anon_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgstealAnon) }},
	{`"pgsteal_file_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.PgstealFile) }},
	{`"workingset_restore_pages":`, func(d *sampleDecoder, v *VMStat) bool { return d.uint64p(&v.WorkingsetRestore) }},
}

var diskFields = []field[Disk]{
	{`"name":`, func(d *sampleDecoder, k *Disk) bool { return d.string(&k.Name) }},
	{`"reads":`, func(d *sampleDecoder, k *Disk) bool { return d.uint64(&k.Reads) }},
	{`"writes":`, func(d *sampleDecoder, k *Disk) bool { return d.uint64(&k.Writes) }},
	{`"read_bytes":`, func(d *sampleDecoder, k *Disk) bool { return d.uint64(&k.ReadBytes) }},
	{`"write_bytes":`, func(d *sampleDecoder, k *Disk) bool { return d.uint64(&k.WriteBytes) }},
	{`"io_ticks_ns":`, func(d *sampleDecoder, k *Disk) bool { return d.duration(&k.IOTicks) }},
	{`"weighted_ns":`, func(d *sampleDecoder, k *Disk) bool { return d.duration(&k.TimeInQueue) }},
	{`"in_flight":`, func(d *sampleDecoder, k *Disk) bool { return d.uint64(&k.InFlight) }},
}

var procIOFields = []field[ProcIO]{
	{`"pid":`, func(d *sampleDecoder, p *ProcIO) bool { return d.int(&p.PID) }},
	{`"ppid":`, func(d *sampleDecoder, p *ProcIO) bool { return d.int(&p.PPID) }},
	{`"start_ticks":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.StartTicks) }},
	{`"comm":`, func(d *sampleDecoder, p *ProcIO) bool { return d.string(&p.Comm) }},
	{`"exe":`, func(d *sampleDecoder, p *ProcIO) bool { return d.string(&p.Exe) }},
	{`"cmdline":`, func(d *sampleDecoder, p *ProcIO) bool { return d.string(&p.Cmdline) }},
	{`"cgroup":`, func(d *sampleDecoder, p *ProcIO) bool { return d.string(&p.Cgroup) }},
	{`"unit":`, func(d *sampleDecoder, p *ProcIO) bool { return d.string(&p.Unit) }},
	{`"read_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.ReadBytes) }},
	{`"write_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.WriteBytes) }},
	{`"cancelled_write_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.CancelledWriteBytes) }},
	{`"d_read_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.DeltaReadBytes) }},
	{`"d_write_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.DeltaWriteBytes) }},
	{`"d_cancelled_write_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.DeltaCancelledWriteBytes) }},
	{`"d_reaped_read_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.DeltaReapedReadBytes) }},
	{`"d_reaped_write_bytes":`, func(d *sampleDecoder, p *ProcIO) bool { return d.uint64(&p.DeltaReapedWriteBytes) }},
	{`"blkio_delay_ns":`, func(d *sampleDecoder, p *ProcIO) bool { return d.duration(&p.BlkioDelay) }},
	{`"d_blkio_delay_ns":`, func(d *sampleDecoder, p *ProcIO) bool { return d.duration(&p.DeltaBlkioDelay) }},
}

var eventFields = []field[Event]{
	{`"kind":`, func(d *sampleDecoder, e *Event) bool { return d.string((*string)(&e.Kind)) }},
	{`"time":`, func(d *sampleDecoder, e *Event) bool { return d.time(&e.Time) }},
	{`"source":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.Source) }},
	{`"pid":`, func(d *sampleDecoder, e *Event) bool { return d.int(&e.PID) }},
	{`"ppid":`, func(d *sampleDecoder, e *Event) bool { return d.int(&e.PPID) }},
	{`"start_ticks":`, func(d *sampleDecoder, e *Event) bool { return d.uint64(&e.StartTicks) }},
	{`"comm":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.Comm) }},
	{`"exe":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.Exe) }},
	{`"cmdline":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.Cmdline) }},
	{`"cgroup":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.Cgroup) }},
	{`"unit":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.Unit) }},
	{`"read_bytes":`, func(d *sampleDecoder, e *Event) bool { return d.uint64(&e.ReadBytes) }},
	{`"write_bytes":`, func(d *sampleDecoder, e *Event) bool { return d.uint64(&e.WriteBytes) }},
	{`"blkio_delay_ns":`, func(d *sampleDecoder, e *Event) bool { return d.duration(&e.BlkioDelay) }},
	{`"parent_comm":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.ParentComm) }},
	{`"parent_cmdline":`, func(d *sampleDecoder, e *Event) bool { return d.string(&e.ParentCmdline) }},
	{`"parent_ppid":`, func(d *sampleDecoder, e *Event) bool { return d.int(&e.ParentPPID) }},
}

var scanFields = []field[ScanStats]{
	{`"processes":`, func(d *sampleDecoder, s *ScanStats) bool { return d.int(&s.Processes) }},
	{`"denied":`, func(d *sampleDecoder, s *ScanStats) bool { return d.int(&s.Denied) }},
	{`"vanished":`, func(d *sampleDecoder, s *ScanStats) bool { return d.int(&s.Vanished) }},
	{`"failed":`, func(d *sampleDecoder, s *ScanStats) bool { return d.int(&s.Failed) }},
	{`"reaped_read_bytes":`, func(d *sampleDecoder, s *ScanStats) bool { return d.uint64(&s.ReapedReadBytes) }},
	{`"reaped_write_bytes":`, func(d *sampleDecoder, s *ScanStats) bool { return d.uint64(&s.ReapedWriteBytes) }},
}

var latencyFields = []field[Latency]{
	{`"count":`, func(d *sampleDecoder, l *Latency) bool { return d.int(&l.Count) }},
	{`"errors":`, func(d *sampleDecoder, l *Latency) bool { return d.int(&l.Errors) }},
	{`"with_failed":`, func(d *sampleDecoder, l *Latency) bool { return d.bool(&l.WithFailed) }},
	{`"mean_ns":`, func(d *sampleDecoder, l *Latency) bool { return d.duration(&l.Mean) }},
	{`"p50_ns":`, func(d *sampleDecoder, l *Latency) bool { return d.duration(&l.P50) }},
	{`"p95_ns":`, func(d *sampleDecoder, l *Latency) bool { return d.duration(&l.P95) }},
	{`"p99_ns":`, func(d *sampleDecoder, l *Latency) bool { return d.duration(&l.P99) }},
	{`"max_ns":`, func(d *sampleDecoder, l *Latency) bool { return d.duration(&l.Max) }},
}

var eventStatsFields = []field[EventStats]{
	{`"received":`, func(d *sampleDecoder, s *EventStats) bool { return d.uint64(&s.Received) }},
	{`"lost_kernel":`, func(d *sampleDecoder, s *EventStats) bool { return d.uint64(&s.LostKernel) }},
	{`"lost_buffer":`, func(d *sampleDecoder, s *EventStats) bool { return d.uint64(&s.LostBuffer) }},
	{`"overruns":`, func(d *sampleDecoder, s *EventStats) bool { return d.uint64(&s.Overruns) }},
	{`"taskstats_missing":`, func(d *sampleDecoder, s *EventStats) bool { return d.uint64(&s.TaskstatsMissing) }},
	{`"error":`, func(d *sampleDecoder, s *EventStats) bool { return d.string(&s.Error) }},
}

var onsetFields = []field[StallOnset]{
	{`"time":`, func(d *sampleDecoder, o *StallOnset) bool { return d.time(&o.Time) }},
	{`"scope":`, func(d *sampleDecoder, o *StallOnset) bool { return d.string(&o.Scope) }},
	{`"resource":`, func(d *sampleDecoder, o *StallOnset) bool { return d.string(&o.Resource) }},
	{`"kind":`, func(d *sampleDecoder, o *StallOnset) bool { return d.string(&o.Kind) }},
	{`"stall_ns":`, func(d *sampleDecoder, o *StallOnset) bool { return d.duration(&o.Stall) }},
	{`"window_ns":`, func(d *sampleDecoder, o *StallOnset) bool { return d.duration(&o.Window) }},
	{`"mode":`, func(d *sampleDecoder, o *StallOnset) bool { return d.string(&o.Mode) }},
	{`"procs":`, func(d *sampleDecoder, o *StallOnset) (ok bool) {
		// Not d.procIOs: its scratch may hold the sample's own processes.
		var scratch []ProcIO
		o.Procs, ok = array(d, &scratch, func(d *sampleDecoder, v *ProcIO) bool { return object(d, v, procIOFields) })
		return ok
	}},
}

var rssFields = []field[ProcRSS]{
	{`"pid":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.int(&p.PID) }},
	{`"start_ticks":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.uint64(&p.StartTicks) }},
	{`"comm":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.string(&p.Comm) }},
	{`"anon_bytes":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.uint64(&p.AnonBytes) }},
	{`"file_bytes":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.uint64(&p.FileBytes) }},
	{`"shmem_bytes":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.uint64(&p.ShmemBytes) }},
	{`"cgroup":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.string(&p.Cgroup) }},
	{`"threads":`, func(d *sampleDecoder, p *ProcRSS) bool { return d.int(&p.Threads) }},
}

var taskDelaysFields = []field[TaskDelays]{
	{`"pid":`, func(d *sampleDecoder, t *TaskDelays) bool { return d.int(&t.PID) }},
	{`"reclaim_ns":`, func(d *sampleDecoder, t *TaskDelays) bool { return d.uint64(&t.ReclaimNS) }},
	{`"thrashing_ns":`, func(d *sampleDecoder, t *TaskDelays) bool { return d.uint64(&t.ThrashingNS) }},
	{`"swapin_ns":`, func(d *sampleDecoder, t *TaskDelays) bool { return d.uint64(&t.SwapinNS) }},
	{`"compact_ns":`, func(d *sampleDecoder, t *TaskDelays) bool { return d.uint64(&t.CompactNS) }},
	{`"blkio_ns":`, func(d *sampleDecoder, t *TaskDelays) bool { return d.uint64(&t.BlkioNS) }},
}
