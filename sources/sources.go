// Package sources adapts memdiag's collectors to record.Source, so that
// `watch` and `gate` sample through the same code: PSI (package psi),
// meminfo and vmstat (lru), a cgroup's memory counters (lru), disks and
// per-process I/O with process events (diskio, procevents). Each adapter
// only moves a collector's result into its part of a record.Sample,
// converted to record's wire types (record.FromPSI, …), so what a
// collector's struct looks like never decides what the recording holds.
package sources

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/procevents"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
)

// PSI fills Sample.PSI (host, /proc/pressure/*) and, when the collector
// has a cgroup, Sample.CgroupPSI. Resources the kernel lacks stay nil.
type PSI struct{ C *psi.Collector }

// Name implements record.Source.
func (PSI) Name() string { return "psi" }

// Fill implements record.Source.
func (p PSI) Fill(ctx context.Context, s *record.Sample) error {
	host, _, err := p.C.Collect(ctx)
	if err != nil {
		return err
	}
	if host.Memory != nil || host.IO != nil || host.CPU != nil {
		s.PSI = record.FromPSI(&host)
	}
	cg, _, ok, err := p.C.CollectCgroup(ctx)
	if err != nil {
		return err
	}
	if ok && (cg.Memory != nil || cg.IO != nil || cg.CPU != nil) {
		s.CgroupPSI = record.FromPSI(&cg)
	}
	return nil
}

// LRU fills Sample.Meminfo (/proc/meminfo) and Sample.VMStat (/proc/vmstat).
type LRU struct{ C *lru.Collector }

// Name implements record.Source.
func (LRU) Name() string { return "lru" }

// Fill implements record.Source.
func (l LRU) Fill(ctx context.Context, s *record.Sample) error {
	m, err := l.C.Meminfo()
	if err != nil {
		return err
	}
	s.Meminfo = record.FromMeminfo(m)
	v, err := l.C.VMStat()
	if err != nil {
		return err
	}
	s.VMStat = record.FromVMStat(v)
	return nil
}

// CgroupCounters fills Sample.CgroupVMStat from a cgroup v2 group's
// memory.stat and memory.events (lru.ReadCgroupCounters).
type CgroupCounters struct{ Dir string }

// Name implements record.Source.
func (CgroupCounters) Name() string { return "cgroup-counters" }

// Fill implements record.Source.
func (c CgroupCounters) Fill(ctx context.Context, s *record.Sample) error {
	v, err := lru.ReadCgroupCounters(c.Dir)
	if err != nil {
		return err
	}
	s.CgroupVMStat = record.FromVMStat(v)
	return nil
}

// CgroupCountersV1 fills Sample.CgroupVMStat from a cgroup v1 memory
// group's memory.stat and memory.oom_control (lru.ReadCgroupCountersV1):
// the victim's memory cgroup on a hybrid host. Its refaults, major faults
// and OOM kills have VMStat fields; its file LRU, memory.failcnt and
// limit have none in the recording and are not recorded.
type CgroupCountersV1 struct{ Dir string }

// Name implements record.Source.
func (CgroupCountersV1) Name() string { return "cgroup-counters" }

// Fill implements record.Source.
func (c CgroupCountersV1) Fill(ctx context.Context, s *record.Sample) error {
	cg, err := lru.ReadCgroupCountersV1(c.Dir)
	if err != nil {
		return err
	}
	s.CgroupVMStat = record.FromVMStat(cg.VMStat)
	return nil
}

// OOMKills fills Sample.OOMKills when /proc/vmstat oom_kill rose since
// the previous sample: it reads the kernel log (memstate.ReadKmsg) and
// keeps the kills stamped after the previous sample that it has not
// recorded yet. It must come after LRU, which fills Sample.VMStat.
type OOMKills struct {
	Root string    // --root: <Root>/dev/kmsg is read inside it (memstate.ReadKmsg)
	Boot time.Time // turns the log's stamps into wall time

	last     *uint64 // oom_kill at the previous sample
	prevTime time.Time
	seen     map[[2]int64]bool // PID and stamp of the kills recorded
}

// Name implements record.Source.
func (*OOMKills) Name() string { return "oom-kills" }

// Fill implements record.Source.
func (o *OOMKills) Fill(ctx context.Context, s *record.Sample) error {
	var cur *uint64
	if s.VMStat != nil {
		cur = s.VMStat.OOMKill
	}
	last, prev := o.last, o.prevTime
	o.last, o.prevTime = cur, s.Time
	if cur == nil || last == nil || *cur <= *last {
		return nil
	}
	b, err := memstate.ReadKmsg(ctx, o.Root)
	if err != nil {
		return err
	}
	kills, err := memstate.ParseKernelLogWith(strings.NewReader(string(b)), filepath.Join(o.Root, "dev/kmsg"), memstate.LogOptions{Boot: o.Boot, Now: s.Time})
	if err != nil {
		return err
	}
	if o.seen == nil {
		o.seen = map[[2]int64]bool{}
	}
	for _, k := range kills {
		key := [2]int64{int64(k.PID), int64(k.SinceBoot)}
		// The boot time is whole seconds: a kill up to 2 s before the
		// previous sample may be this interval's.
		if o.seen[key] || k.Time.IsZero() || k.Time.Before(prev.Add(-2*time.Second)) {
			continue
		}
		o.seen[key] = true
		s.OOMKills = append(s.OOMKills, record.OOMVictim{Time: k.Time, PID: k.PID, Comm: k.Comm,
			Cgroup: k.TaskCgroup, OOMCgroup: k.OOMCgroup, Constraint: k.Constraint})
	}
	return nil
}

// Disks fills Sample.Disks from /proc/diskstats.
type Disks struct{ C *diskio.DiskCollector }

// Name implements record.Source.
func (Disks) Name() string { return "diskstats" }

// Fill implements record.Source.
func (d Disks) Fill(ctx context.Context, s *record.Sample) error {
	disks, err := d.C.Disks()
	s.Disks = record.FromDisks(disks)
	return err
}

// Procs fills Sample.Procs and Sample.Scan from a diskio.ProcScanner,
// and Sample.Events: from the process-events listener when there is one
// (complete, with exit I/O; Sample.EventStats accounts for losses), else
// the scanner's polled exec/exit. Per-process files the scan left out
// (diskio.ProcScanner.Fault) are its error, with the sample filled.
type Procs struct {
	Scanner *diskio.ProcScanner
	Events  *procevents.Listener // nil: polling only
	TopRSS  int                  // also fill Sample.RSS with this many processes by RSS
	// Growth adds to Sample.RSS every process whose RSS is growing
	// (diskio.ProcScanner.RSS), and, when Evidence is set, the
	// retention evidence of each new one to Sample.Retention.
	Growth   bool
	Evidence RetentionReader
}

// RetentionReader reads one process's allocator evidence
// (memstate.Collector.RetentionOf), its Reading filled as the recording
// keeps it.
type RetentionReader interface {
	RetentionOf(pid int, startTicks uint64) (*memstate.Retention, error)
}

// Name implements record.Source.
func (Procs) Name() string { return "procs" }

// Fill implements record.Source.
func (p Procs) Fill(ctx context.Context, s *record.Sample) error {
	if p.Events != nil {
		// Drain first: the exits' exact I/O lets the scan take reaped
		// children's I/O off their parents.
		evs, es := p.Events.Drain()
		s.Events, s.EventStats = record.FromEvents(evs), record.FromEventStats(&es)
		p.Scanner.NoteExits(evs)
	}
	top, evs, st, err := p.Scanner.Scan(s.Time)
	if err != nil {
		return err
	}
	s.Procs, s.Scan = record.FromProcs(top), record.FromScan(&st)
	if !p.Growth {
		s.RSS = record.FromRSS(p.Scanner.TopRSS(p.TopRSS))
	} else {
		rss, fresh := p.Scanner.RSS(p.TopRSS)
		s.RSS, s.RSSLeftOut = record.FromRSS(rss), p.Scanner.GrowthLeftOut()
		for _, i := range fresh {
			if p.Evidence == nil {
				break
			}
			r := &rss[i]
			// Once per grower: it has exited, or the read failed, and no
			// evidence is recorded (analyze then says none was read).
			if ev, err := p.Evidence.RetentionOf(r.PID, r.StartTicks); err == nil {
				s.Retention = append(s.Retention, record.FromRetention(memstate.ProcRetention{PID: r.PID, StartTicks: r.StartTicks, Comm: r.Comm, Retention: *ev}))
			}
		}
	}
	if p.Events == nil {
		s.Events = record.FromEvents(evs)
	}
	// Files left out (a FIFO, a malformed io under --root): the sample
	// keeps the other processes; the Sampler says the first once and
	// records each in the sample's errors.
	return p.Scanner.Fault()
}

// VMStat fills only Sample.VMStat (/proc/vmstat), for callers that need
// the counters but not /proc/meminfo (`gate`).
type VMStat struct{ C *lru.Collector }

// Name implements record.Source.
func (VMStat) Name() string { return "vmstat" }

// Fill implements record.Source.
func (v VMStat) Fill(ctx context.Context, s *record.Sample) error {
	m, err := v.C.VMStat()
	if err != nil {
		return err
	}
	s.VMStat = record.FromVMStat(m)
	return nil
}
