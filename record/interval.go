package record

import (
	"math"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/signal"
)

// Interval is what happened between two consecutive samples, derived only
// from their cumulative counters. A value the samples cannot give (counter
// absent on this kernel, collector unavailable, counter reset or wrapped)
// is NaN, never zero and never negative: test with [Known].
type Interval struct {
	Start, End time.Time
	Dt         time.Duration

	// PSI stall shares, 0..1 of wall time, from Δtotal/Δwall.
	MemSome, MemFull, IOSome, IOFull, CPUSome float64
	// The same for the --cgroup group.
	CgMemSome, CgMemFull, CgIOSome float64
	// PSI memory avg10 at the end of the interval (percent), for display.
	MemSomeAvg10 float64

	FileLRUBytes      float64 // Active(file)+Inactive(file) at End
	FileLRUDeltaBytes float64 // change over the interval (negative: shrank)
	AnonLRUBytes      float64
	MemAvailableBytes float64
	DirtyBytes        float64

	// The /proc/vmstat signals, each defined once in package signal:
	// PerSec(sig) for any catalogue entry, the named fields for the ones
	// the views read. Rates are in the signal's unit per second.
	DirectReclaimPerSec float64 // pages/s, signal.DirectReclaim: global direct reclaim (Δpgscan_direct)
	LimitReclaimPerSec  float64 // pages/s, signal.LimitReclaim: reclaim at cgroup memory limits
	KswapdReclaimPerSec float64 // pages/s, signal.KswapdReclaim
	RefaultFilePerSec   float64 // pages/s, signal.RefaultFile
	RefaultAnonPerSec   float64 // pages/s, signal.RefaultAnon
	OOMKills            float64 // count in the interval, signal.OOMKills

	// signals holds every catalogue signal's rate, by catalogue index;
	// cgSignals the same from the --cgroup group's counters
	// (Sample.CgroupVMStat), nil when not recorded.
	signals, cgSignals []float64

	SwapOutBytesPerSec float64 // B/s: signal.SwapOut (pages/s) × the page size

	DiskReadBytesPerSec  float64 // summed over recorded devices
	DiskWriteBytesPerSec float64
	DiskBusy             float64 // 0..1, the busiest device's io_ticks share
	DiskBusyDevice       string
	DiskIOTimePerSec     float64 // seconds of weighted I/O time per second, summed ("disk I/O time/s")
}

// PerSec is the rate of a catalogue signal over the interval, in its unit
// per second (signal.Signal.RateUnit); NaN when the samples cannot give it.
func (iv *Interval) PerSec(sig *signal.Signal) float64 {
	for i, s := range signal.Catalogue {
		if s == sig && i < len(iv.signals) {
			return iv.signals[i]
		}
	}
	return nan
}

// CgPerSec is PerSec from the --cgroup group's own counters
// (Sample.CgroupVMStat: memory.stat, memory.events); NaN when the group's
// counters were not recorded or lack that counter.
func (iv *Interval) CgPerSec(sig *signal.Signal) float64 {
	for i, s := range signal.Catalogue {
		if s == sig && i < len(iv.cgSignals) {
			return iv.cgSignals[i]
		}
	}
	return nan
}

// Known reports whether x is a measured value (not NaN).
func Known(x float64) bool { return !math.IsNaN(x) }

var nan = math.NaN()

// Intervals derives one Interval per consecutive pair of samples.
// pageSize converts page counters to bytes (Header.PageSize; 4096 if 0).
func Intervals(h *Header, samples []Sample) []Interval {
	if len(samples) < 2 {
		return nil
	}
	out := make([]Interval, 0, len(samples)-1)
	// Each sample's readings are built once, for the interval it ends
	// and the one it starts.
	hp, cp := samples[0].Reading(h), samples[0].CgroupReading(h)
	for i := 1; i < len(samples); i++ {
		hc, cc := samples[i].Reading(h), samples[i].CgroupReading(h)
		out = append(out, between(h, &samples[i-1], &samples[i], hp, hc, cp, cc))
		hp, cp = hc, cc
	}
	return out
}

// Between derives the Interval from prev to cur.
func Between(h *Header, prev, cur *Sample) Interval {
	return between(h, prev, cur, prev.Reading(h), cur.Reading(h), prev.CgroupReading(h), cur.CgroupReading(h))
}

// between is Between given the samples' host (hp, hc) and cgroup (cp, cc)
// readings, in named steps: PSI shares, memory levels, the catalogue's
// rates, reclaim's steal and scan, the busiest disk.
func between(h *Header, prev, cur *Sample, hp, hc, cp, cc *signal.Reading) Interval {
	dt := cur.Time.Sub(prev.Time)
	iv := Interval{Start: prev.Time, End: cur.Time, Dt: dt}
	iv.psiRates(cur, hp, hc, cp, cc)
	iv.levels(hp, hc)
	iv.catalogueRates(prev, cur, hp, hc, cp, cc, float64(h.pageSize()))
	iv.diskBusy(hp, hc)
	return iv
}

// psiRates sets the interval's PSI stall shares (host and the recorded
// cgroup's) and the host's memory some avg10 at its end.
func (iv *Interval) psiRates(cur *Sample, hp, hc, cp, cc *signal.Reading) {
	dt := iv.Dt
	iv.MemSome = signal.PSIMemorySome.PerSec(hp, hc, dt)
	iv.MemFull = signal.PSIMemoryFull.PerSec(hp, hc, dt)
	iv.IOSome = signal.PSIIOSome.PerSec(hp, hc, dt)
	iv.IOFull = signal.PSIIOFull.PerSec(hp, hc, dt)
	iv.CPUSome = signal.PSICPUSome.PerSec(hp, hc, dt)
	iv.CgMemSome = signal.PSIMemorySome.PerSec(cp, cc, dt)
	iv.CgMemFull = signal.PSIMemoryFull.PerSec(cp, cc, dt)
	iv.CgIOSome = signal.PSIIOSome.PerSec(cp, cc, dt)
	iv.MemSomeAvg10 = nan
	if m := cur.PSI.Get("memory"); m != nil {
		iv.MemSomeAvg10 = m.Some.Avg10
	}
}

// levels sets the interval's memory levels at its end (file and anon
// LRU, MemAvailable, Dirty: bytes) and the file LRU's change over it.
func (iv *Interval) levels(hp, hc *signal.Reading) {
	level := func(sig *signal.Signal) float64 {
		if v, ok := sig.Value(hc); ok {
			return v
		}
		return nan
	}
	iv.FileLRUBytes, iv.FileLRUDeltaBytes = level(signal.FileLRU), nan
	if d, ok := signal.FileLRU.Between(hp, hc); ok {
		iv.FileLRUDeltaBytes = d
	}
	iv.AnonLRUBytes = level(signal.AnonLRU)
	iv.MemAvailableBytes = level(signal.MemAvailable)
	iv.DirtyBytes = level(signal.Dirty)
}

// catalogueRates sets every signal.Catalogue rate of the interval (host,
// and the recorded cgroup's where both samples have its counters), and
// the named rate fields read from them; ps is the page size in bytes.
func (iv *Interval) catalogueRates(prev, cur *Sample, hp, hc, cp, cc *signal.Reading, ps float64) {
	dt := iv.Dt
	iv.signals = make([]float64, len(signal.Catalogue))
	for i, sig := range signal.Catalogue {
		iv.signals[i] = sig.PerSec(hp, hc, dt)
	}
	if prev.CgroupVMStat != nil && cur.CgroupVMStat != nil {
		iv.cgSignals = make([]float64, len(signal.Catalogue))
		for i, sig := range signal.Catalogue {
			iv.cgSignals[i] = sig.PerSec(cp, cc, dt)
		}
	}
	iv.DirectReclaimPerSec = iv.PerSec(signal.DirectReclaim)
	iv.LimitReclaimPerSec = iv.PerSec(signal.LimitReclaim)
	iv.KswapdReclaimPerSec = iv.PerSec(signal.KswapdReclaim)
	iv.RefaultFilePerSec = iv.PerSec(signal.RefaultFile)
	iv.RefaultAnonPerSec = iv.PerSec(signal.RefaultAnon)
	iv.SwapOutBytesPerSec = iv.PerSec(signal.SwapOut) * ps
	iv.OOMKills = nan
	if d, ok := signal.OOMKills.Between(hp, hc); ok {
		iv.OOMKills = d
	}
	iv.DiskReadBytesPerSec = iv.PerSec(signal.DiskRead)
	iv.DiskWriteBytesPerSec = iv.PerSec(signal.DiskWritten)
	iv.DiskIOTimePerSec = iv.PerSec(signal.DiskIOTime)
}

// diskBusy sets the busiest device's share of the interval with I/O in
// flight: a maximum over devices, not a sum, so not a catalogue counter.
func (iv *Interval) diskBusy(hp, hc *signal.Reading) {
	iv.DiskBusy = nan
	if len(hc.Disks) == 0 || len(hp.Disks) == 0 || iv.Dt <= 0 {
		return
	}
	byName := make(map[string]int, len(hp.Disks))
	for i := range hp.Disks {
		byName[hp.Disks[i].Name] = i
	}
	for i := range hc.Disks {
		j, ok := byName[hc.Disks[i].Name]
		if !ok {
			continue
		}
		r, ok := diskio.DiskRates(hp.Disks[j], hc.Disks[i], iv.Dt)
		if !ok {
			continue // device reset or replaced
		}
		if !Known(iv.DiskBusy) || r.Busy > iv.DiskBusy {
			iv.DiskBusy, iv.DiskBusyDevice = r.Busy, r.Name
		}
	}
}

// Reading is the sample's host files as the signal catalogue reads them:
// the wire types converted to the collectors' (the catalogue serves live
// readings too, so it computes from those).
func (s *Sample) Reading(h *Header) *signal.Reading {
	r := newReading(s.PSI)
	r.VMStat, r.Meminfo, r.Disks, r.PageSize = s.VMStat.LRU(), s.Meminfo.LRU(), diskioDisks(s.Disks), h.pageSize()
	return r
}

// CgroupReading is the --cgroup group's files as the signal catalogue
// reads them: its pressure files and its memory.stat counters.
func (s *Sample) CgroupReading(h *Header) *signal.Reading {
	r := newReading(s.CgroupPSI)
	r.VMStat, r.PageSize = s.CgroupVMStat.LRU(), h.pageSize()
	return r
}

// newReading is a Reading with p converted, in one allocation with it.
func newReading(p *PSI) *signal.Reading {
	if p == nil {
		return &signal.Reading{}
	}
	c := new(struct {
		r   signal.Reading
		psi psiSnapshot
	})
	c.r.PSI = p.snapshot(&c.psi)
	return &c.r
}

// pageSize is the recording's page size, 4096 when the header lacks it.
func (h *Header) pageSize() int {
	if h == nil || h.PageSize <= 0 {
		return 4096
	}
	return h.PageSize
}
