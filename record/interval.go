package record

import (
	"math"
	"time"

	"github.com/memdiag/memdiag/psi"
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
	PgscanDirectPerSec float64 // pages/s, signal.DirectReclaim: global direct reclaim (Δpgscan_direct)
	LimitReclaimPerSec float64 // pages/s, signal.LimitReclaim: reclaim at cgroup memory limits
	AllocReclaimPerSec float64 // pages/s, signal.AllocReclaim: direct + cgroup-limit reclaim
	// DirectReclaimPerSec is AllocReclaimPerSec, kept under its old name
	// while the correlator and the live view still read it.
	//
	// Deprecated: the name says direct reclaim but the value includes
	// cgroup-limit reclaim; read AllocReclaimPerSec (or PgscanDirectPerSec
	// for direct reclaim alone).
	DirectReclaimPerSec float64
	ReclaimScanPerSec   float64 // pages/s scanned by all reclaim (pgscan_anon+pgscan_file)
	PgscanKswapdPerSec  float64 // pages/s, signal.KswapdReclaim
	PgstealDirectPerSec float64 // pages/s reclaimed by direct reclaim
	PgstealKswapdPerSec float64
	RefaultFilePerSec   float64 // pages/s, signal.RefaultFile
	RefaultAnonPerSec   float64 // pages/s, signal.RefaultAnon
	MajfaultPerSec      float64 // faults/s, signal.MajorFaults
	AllocstallPerSec    float64 // direct reclaim entries/s, signal.Allocstalls
	OOMKills            float64 // count in the interval, signal.OOMKills

	// signals holds every catalogue signal's rate, by catalogue index.
	signals []float64

	SwapInBytesPerSec  float64
	SwapOutBytesPerSec float64

	DiskReadBytesPerSec  float64 // summed over recorded devices
	DiskWriteBytesPerSec float64
	DiskIOPS             float64
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
	for i := 1; i < len(samples); i++ {
		out = append(out, Between(h, &samples[i-1], &samples[i]))
	}
	return out
}

// Between derives the Interval from prev to cur.
func Between(h *Header, prev, cur *Sample) Interval {
	ps := 4096.0
	if h != nil && h.PageSize > 0 {
		ps = float64(h.PageSize)
	}
	dt := cur.Time.Sub(prev.Time)
	iv := Interval{Start: prev.Time, End: cur.Time, Dt: dt}
	secs := dt.Seconds()
	share := func(a, b *psi.Snapshot, res string, full bool) float64 {
		ra, rb := a.Get(res), b.Get(res)
		if ra == nil || rb == nil {
			return nan
		}
		la, lb := &ra.Some, &rb.Some
		if full {
			if ra.Full == nil || rb.Full == nil {
				return nan
			}
			la, lb = ra.Full, rb.Full
		}
		s, ok := psi.StallShare(*la, *lb, dt)
		if !ok {
			return nan
		}
		return s
	}
	iv.MemSome = share(prev.PSI, cur.PSI, "memory", false)
	iv.MemFull = share(prev.PSI, cur.PSI, "memory", true)
	iv.IOSome = share(prev.PSI, cur.PSI, "io", false)
	iv.IOFull = share(prev.PSI, cur.PSI, "io", true)
	iv.CPUSome = share(prev.PSI, cur.PSI, "cpu", false)
	iv.CgMemSome = share(prev.CgroupPSI, cur.CgroupPSI, "memory", false)
	iv.CgMemFull = share(prev.CgroupPSI, cur.CgroupPSI, "memory", true)
	iv.CgIOSome = share(prev.CgroupPSI, cur.CgroupPSI, "io", false)
	iv.MemSomeAvg10 = nan
	if m := cur.PSI.Get("memory"); m != nil {
		iv.MemSomeAvg10 = m.Some.Avg10
	}

	iv.FileLRUBytes, iv.FileLRUDeltaBytes, iv.AnonLRUBytes = nan, nan, nan
	iv.MemAvailableBytes, iv.DirtyBytes = nan, nan
	if f, ok := cur.Meminfo.FileLRU(); ok {
		iv.FileLRUBytes = float64(f)
		if p, ok := prev.Meminfo.FileLRU(); ok {
			iv.FileLRUDeltaBytes = float64(f) - float64(p)
		}
	}
	if a, ok := cur.Meminfo.AnonLRU(); ok {
		iv.AnonLRUBytes = float64(a)
	}
	if cur.Meminfo != nil {
		iv.MemAvailableBytes = gauge(cur.Meminfo.MemAvailable)
		iv.DirtyBytes = gauge(cur.Meminfo.Dirty)
	}

	iv.signals = make([]float64, len(signal.Catalogue))
	for i, sig := range signal.Catalogue {
		iv.signals[i] = sig.PerSec(prev.VMStat, cur.VMStat, dt)
	}
	iv.PgscanDirectPerSec = iv.PerSec(signal.DirectReclaim)
	iv.LimitReclaimPerSec = iv.PerSec(signal.LimitReclaim)
	iv.AllocReclaimPerSec = iv.PerSec(signal.AllocReclaim)
	iv.DirectReclaimPerSec = iv.AllocReclaimPerSec
	iv.PgscanKswapdPerSec = iv.PerSec(signal.KswapdReclaim)
	iv.RefaultFilePerSec = iv.PerSec(signal.RefaultFile)
	iv.RefaultAnonPerSec = iv.PerSec(signal.RefaultAnon)
	iv.MajfaultPerSec = iv.PerSec(signal.MajorFaults)
	iv.AllocstallPerSec = iv.PerSec(signal.Allocstalls)
	iv.SwapInBytesPerSec = iv.PerSec(signal.SwapIn) * ps
	iv.SwapOutBytesPerSec = iv.PerSec(signal.SwapOut) * ps
	iv.OOMKills = nan
	if d, ok := signal.OOMKills.Delta(prev.VMStat, cur.VMStat); ok {
		iv.OOMKills = d
	}
	iv.PgstealDirectPerSec, iv.PgstealKswapdPerSec, iv.ReclaimScanPerSec = nan, nan, nan
	if prev.VMStat != nil && cur.VMStat != nil && secs > 0 {
		if d, ok := counterDelta(prev.VMStat.PgstealDirect, cur.VMStat.PgstealDirect); ok {
			iv.PgstealDirectPerSec = d / secs
		}
		if d, ok := counterDelta(prev.VMStat.PgstealKswapd, cur.VMStat.PgstealKswapd); ok {
			iv.PgstealKswapdPerSec = d / secs
		}
		a, okA := counterDelta(prev.VMStat.PgscanAnon, cur.VMStat.PgscanAnon)
		f, okF := counterDelta(prev.VMStat.PgscanFile, cur.VMStat.PgscanFile)
		if okA && okF {
			iv.ReclaimScanPerSec = (a + f) / secs
		}
	}

	iv.DiskReadBytesPerSec, iv.DiskWriteBytesPerSec, iv.DiskIOPS = nan, nan, nan
	iv.DiskBusy, iv.DiskIOTimePerSec = nan, nan
	if len(cur.Disks) > 0 && len(prev.Disks) > 0 && secs > 0 {
		byName := make(map[string]int, len(prev.Disks))
		for i := range prev.Disks {
			byName[prev.Disks[i].Name] = i
		}
		var rd, wr, ios, wt float64
		busy, seen := 0.0, false
		for i := range cur.Disks {
			c := &cur.Disks[i]
			j, ok := byName[c.Name]
			if !ok {
				continue
			}
			p := &prev.Disks[j]
			if c.ReadBytes < p.ReadBytes || c.WriteBytes < p.WriteBytes || c.IOTicks < p.IOTicks ||
				c.TimeInQueue < p.TimeInQueue || c.Reads < p.Reads || c.Writes < p.Writes {
				continue // device reset or replaced
			}
			seen = true
			rd += float64(c.ReadBytes - p.ReadBytes)
			wr += float64(c.WriteBytes - p.WriteBytes)
			ios += float64(c.Reads - p.Reads + c.Writes - p.Writes)
			wt += float64(c.TimeInQueue - p.TimeInQueue)
			b := float64(c.IOTicks-p.IOTicks) / float64(dt)
			if b > 1 {
				b = 1
			}
			if b > busy || iv.DiskBusyDevice == "" {
				busy, iv.DiskBusyDevice = b, c.Name
			}
		}
		if seen {
			iv.DiskReadBytesPerSec, iv.DiskWriteBytesPerSec, iv.DiskIOPS = rd/secs, wr/secs, ios/secs
			iv.DiskBusy, iv.DiskIOTimePerSec = busy, wt/float64(dt)
		}
	}
	return iv
}

func gauge(p *uint64) float64 {
	if p == nil {
		return nan
	}
	return float64(*p)
}

// counterDelta is signal.CounterDelta.
func counterDelta(prev, cur *uint64) (float64, bool) { return signal.CounterDelta(prev, cur) }
