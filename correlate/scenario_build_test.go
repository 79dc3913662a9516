package correlate

import (
	"fmt"
	"math"
	"time"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// A scenario is a synthetic recording built interval by interval: the
// stall share of the host (and of a cgroup, when set), the disk and
// refault rates, and processes with a parent, a command line, a unit and
// an I/O rate over their life. Each failure of the old culprit model has
// one scenario (scenarios_test.go); the recordings are kept under
// testdata/scenarios so the released binary of any version can be run on
// them.
type scenario struct {
	interval time.Duration
	dur      time.Duration
	start    time.Time
	// hostSome and cgSome give the PSI memory "some" share (0..1) of
	// the interval that ends at offset t; full is a quarter of it. nil
	// cgSome: no --cgroup group recorded.
	hostSome func(t time.Duration) float64
	cgSome   func(t time.Duration) float64
	// diskBps adds device I/O beyond the processes'; refault gives the
	// workingset refaults per second.
	diskBps func(t time.Duration) float64
	refault func(t time.Duration) float64
	// cgRefault gives the --cgroup group's own refaults per second
	// (Sample.CgroupVMStat); nil: the group's counters not recorded.
	cgRefault func(t time.Duration) float64
	procs     []sproc
	jobs      []record.Job
	noProcs   bool // a recording without per-process data
	// describeParents: an exec event carries its parent's identity
	// (process.Event.ParentComm …) when the parent started before the
	// recording (from 0), once per parent, as watch's listener does.
	describeParents bool
	// chain gives the traced page-cache chain of the interval that ends
	// at offset t (Sample.Chain); nil: not traced. victim is the
	// recorded victim (Header.Victim), nil: none.
	chain  func(t time.Duration) *record.Chain
	victim *record.Victim
}

// sproc is one process of a scenario, alive in [from, to).
type sproc struct {
	pid, ppid           int
	comm, cmdline, unit string
	cgroup              string        // its /proc/PID/cgroup path, "" not recorded
	from, to            time.Duration // to 0: alive to the end
	bps                 func(t time.Duration) float64
	// hideAfter: /proc no longer lists it after this offset (it did
	// its I/O between samples); its exit event carries the totals.
	hideAfter time.Duration
	// rss is its anon RSS in bytes (0: not among the RSS holders);
	// rssAt, when set, gives it over time instead.
	rss   uint64
	rssAt func(t time.Duration) float64
	// reads: its I/O is reads (disk reads), not writes.
	reads bool
	// start is its start time in clock ticks (/proc/PID/stat field 22);
	// 0: its PID, so that a PID reused in a scenario needs one.
	start uint64
}

// startTicks is p's recorded start time.
func (p *sproc) startTicks() uint64 {
	if p.start != 0 {
		return p.start
	}
	return uint64(p.pid)
}

// every returns a rate function: rate bps for dur starting at each of
// the offsets.
func every(bps float64, dur time.Duration, at ...time.Duration) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		for _, a := range at {
			if t > a && t <= a+dur {
				return bps
			}
		}
		return 0
	}
}

// steady is a constant rate.
func steady(v float64) func(time.Duration) float64 { return func(time.Duration) float64 { return v } }

func (s scenario) build() *record.Recording {
	if s.interval == 0 {
		s.interval = time.Second
	}
	if s.start.IsZero() {
		s.start = t0
	}
	rec := &record.Recording{Header: record.Header{
		Type: record.TypeHeader, Format: record.FormatName, SchemaVersion: record.SchemaVersion,
		Host: "scenario", Start: s.start, Interval: s.interval, PageSize: 4096, TimeZone: "UTC", Jobs: s.jobs,
	}}
	if s.cgSome != nil {
		rec.Header.Cgroup = "/sys/fs/cgroup/unified/service"
	}
	rec.Header.Victim = s.victim
	rec.Header.Collectors = []record.CollectorStatus{{Name: "psi", Available: true}, {Name: "procs", Available: !s.noProcs}}
	var someUS, cgUS, diskWr, refault, cgRefault float64
	life := map[int]float64{} // bytes written so far, per process (its index: a PID can be reused)
	described := map[int]bool{}
	byPID := map[int]sproc{}
	for _, p := range s.procs {
		byPID[p.pid] = p
	}
	n := int(s.dur / s.interval)
	for i := 0; i <= n; i++ {
		off := time.Duration(i) * s.interval
		now := s.start.Add(off)
		smp := record.Sample{Type: record.TypeSample, Seq: i, Time: now}
		dt := s.interval.Seconds()
		if i > 0 {
			t := off
			if s.hostSome != nil {
				someUS += s.hostSome(t) * dt * 1e6
			}
			if s.cgSome != nil {
				cgUS += s.cgSome(t) * dt * 1e6
			}
			if s.diskBps != nil {
				diskWr += s.diskBps(t) * dt
			}
			if s.refault != nil {
				refault += s.refault(t) * dt
			}
			if s.cgRefault != nil {
				cgRefault += s.cgRefault(t) * dt
			}
		}
		for j, p := range s.procs {
			to := p.to
			if to == 0 {
				to = s.dur + time.Hour
			}
			prev := off - s.interval
			// Events of (prev, off].
			if i > 0 && p.from > prev && p.from <= off && p.from > 0 {
				ev := record.Event{Kind: process.Exec, Time: s.start.Add(p.from), Source: "connector",
					PID: p.pid, PPID: p.ppid, Comm: p.comm, Cmdline: p.cmdline, Unit: p.unit}
				if par, ok := byPID[p.ppid]; ok && s.describeParents && par.from == 0 && !described[par.pid] {
					described[par.pid] = true
					ev.ParentComm, ev.ParentCmdline, ev.ParentPPID = par.comm, par.cmdline, par.ppid
				}
				smp.Events = append(smp.Events, ev)
			}
			alive := p.from < off && to > prev
			if i > 0 && alive && p.bps != nil {
				// I/O of the part of the interval it was alive.
				var d float64
				steps := 10
				for k := 1; k <= steps; k++ {
					tt := prev + time.Duration(k)*s.interval/time.Duration(steps)
					if tt > p.from && tt <= to {
						d += p.bps(tt) * dt / float64(steps)
					}
				}
				life[j] += d
				diskWr += d
				hidden := p.hideAfter > 0 && off > p.hideAfter
				if d > 0 && !hidden && !s.noProcs {
					pio := record.ProcIO{PID: p.pid, PPID: p.ppid, StartTicks: p.startTicks(), Comm: p.comm,
						Cmdline: p.cmdline, Unit: p.unit, Cgroup: p.cgroup, WriteBytes: uint64(life[j]), DeltaWriteBytes: uint64(d)}
					if p.reads {
						pio.ReadBytes, pio.DeltaReadBytes, pio.WriteBytes, pio.DeltaWriteBytes = pio.WriteBytes, pio.DeltaWriteBytes, 0, 0
					}
					smp.Procs = append(smp.Procs, pio)
				}
			}
			if i > 0 && to > prev && to <= off && p.to > 0 {
				smp.Events = append(smp.Events, record.Event{Kind: process.Exit, Time: s.start.Add(to), Source: "connector",
					PID: p.pid, PPID: p.ppid, Comm: p.comm, Cmdline: p.cmdline, Unit: p.unit, WriteBytes: uint64(life[j])})
			}
			rss := p.rss
			if p.rssAt != nil {
				rss = uint64(p.rssAt(off))
			}
			if alive && rss > 0 && !s.noProcs {
				smp.RSS = append(smp.RSS, record.ProcRSS{PID: p.pid, StartTicks: p.startTicks(), Comm: p.comm, AnonBytes: rss, Cgroup: p.cgroup})
			}
		}
		if s.noProcs {
			smp.Events = nil
		}
		smp.PSI = &record.PSI{Memory: &record.PSIResource{
			Some: record.PSILine{Total: time.Duration(someUS) * time.Microsecond},
			Full: &record.PSILine{Total: time.Duration(someUS/4) * time.Microsecond},
		}}
		if s.cgSome != nil {
			smp.CgroupPSI = &record.PSI{Memory: &record.PSIResource{
				Some: record.PSILine{Total: time.Duration(cgUS) * time.Microsecond},
				Full: &record.PSILine{Total: time.Duration(cgUS/4) * time.Microsecond},
			}}
		}
		if s.chain != nil && i > 0 {
			smp.Chain = s.chain(off)
		}
		if s.cgRefault != nil {
			smp.CgroupVMStat = &record.VMStat{WorkingsetRefaultFile: u64(cgRefault)}
		}
		smp.Meminfo = &record.Meminfo{ActiveFile: u64(2 << 30), InactiveFile: u64(2 << 30), ActiveAnon: u64(300 << 20), InactiveAnon: u64(100 << 20)}
		smp.VMStat = &record.VMStat{WorkingsetRefaultFile: u64(refault), PgscanDirect: u64(0), Pswpout: u64(0)}
		smp.Disks = []record.Disk{{Name: "sda", WriteBytes: uint64(diskWr), IOTicks: time.Duration(math.Min(float64(off), float64(off)/2))}}
		rec.Samples = append(rec.Samples, smp)
	}
	return rec
}

func offs(period time.Duration, n int, first time.Duration) []time.Duration {
	var out []time.Duration
	for k := range n {
		out = append(out, first+time.Duration(k)*period)
	}
	return out
}

var _ = fmt.Sprint
