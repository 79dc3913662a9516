// Package sources adapts memdiag's collectors to record.Source, so that
// `watch` and `gate` sample through the same code: PSI (package psi),
// meminfo and vmstat (lru), a cgroup's memory counters (lru), disks and
// per-process I/O with process events (diskio, procevents). Each adapter
// only moves a collector's result into its part of a record.Sample.
package sources

import (
	"context"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/lru"
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
		s.PSI = &host
	}
	cg, _, ok, err := p.C.CollectCgroup(ctx)
	if err != nil {
		return err
	}
	if ok && (cg.Memory != nil || cg.IO != nil || cg.CPU != nil) {
		s.CgroupPSI = &cg
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
	s.Meminfo = m
	v, err := l.C.VMStat()
	if err != nil {
		return err
	}
	s.VMStat = v
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
	s.CgroupVMStat = v
	return nil
}

// Disks fills Sample.Disks from /proc/diskstats.
type Disks struct{ C *diskio.DiskCollector }

// Name implements record.Source.
func (Disks) Name() string { return "diskstats" }

// Fill implements record.Source.
func (d Disks) Fill(ctx context.Context, s *record.Sample) error {
	disks, err := d.C.Disks()
	s.Disks = disks
	return err
}

// Procs fills Sample.Procs and Sample.Scan from a diskio.ProcScanner,
// and Sample.Events: from the process-events listener when there is one
// (complete, with exit I/O; Sample.EventStats accounts for losses), else
// the scanner's polled exec/exit.
type Procs struct {
	Scanner *diskio.ProcScanner
	Events  *procevents.Listener // nil: polling only
	TopRSS  int                  // also fill Sample.RSS with this many processes by RSS
}

// Name implements record.Source.
func (Procs) Name() string { return "procs" }

// Fill implements record.Source.
func (p Procs) Fill(ctx context.Context, s *record.Sample) error {
	if p.Events != nil {
		// Drain first: the exits' exact I/O lets the scan take reaped
		// children's I/O off their parents.
		evs, es := p.Events.Drain()
		s.Events, s.EventStats = evs, &es
		p.Scanner.NoteExits(evs)
	}
	top, evs, st, err := p.Scanner.Scan(s.Time)
	if err != nil {
		return err
	}
	s.Procs, s.Scan = top, &st
	s.RSS = p.Scanner.TopRSS(p.TopRSS)
	if p.Events == nil {
		s.Events = evs
	}
	return nil
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
	s.VMStat = m
	return nil
}
