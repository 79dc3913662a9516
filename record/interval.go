package record

import (
	"math"
	"time"

	"github.com/memdiag/memdiag/psi"
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

	PgscanDirectPerSec float64 // pages/s scanned by global direct reclaim (pgscan_direct)
	// DirectReclaimPerSec is reclaim in the allocating task's context,
	// pages/s: global direct reclaim plus reclaim forced by a cgroup's
	// memory limit, which the kernel counts only in pgscan_anon/_file
	// (mm/vmscan.c: cgroup reclaim skips pgscan_kswapd/_direct). It is
	// max(Δpgscan_direct, Δ(pgscan_anon+pgscan_file) − Δpgscan_kswapd); on
	// kernels without pgscan_anon/_file (< 5.8) it is pgscan_direct.
	DirectReclaimPerSec float64
	ReclaimScanPerSec   float64 // pages/s scanned by all reclaim (pgscan_anon+pgscan_file)
	PgscanKswapdPerSec  float64 // pages/s scanned by kswapd
	PgstealDirectPerSec float64 // pages/s reclaimed by direct reclaim
	PgstealKswapdPerSec float64
	RefaultFilePerSec   float64 // pages/s
	RefaultAnonPerSec   float64
	MajfaultPerSec      float64
	AllocstallPerSec    float64 // direct reclaim entries/s
	OOMKills            float64 // count in the interval

	SwapInBytesPerSec  float64
	SwapOutBytesPerSec float64

	DiskReadBytesPerSec  float64 // summed over recorded devices
	DiskWriteBytesPerSec float64
	DiskIOPS             float64
	DiskBusy             float64 // 0..1, the busiest device's io_ticks share
	DiskBusyDevice       string
	DiskIOTimePerSec     float64 // seconds of weighted I/O time per second, summed ("disk I/O time/s")
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

	rate := func(get func(*Sample) *uint64, scale float64) float64 {
		if prev.VMStat == nil || cur.VMStat == nil {
			return nan
		}
		d, ok := counterDelta(get(prev), get(cur))
		if !ok || secs <= 0 {
			return nan
		}
		return d * scale / secs
	}
	iv.PgscanDirectPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.PgscanDirect }, 1)
	iv.PgscanKswapdPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.PgscanKswapd }, 1)
	iv.PgstealDirectPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.PgstealDirect }, 1)
	iv.PgstealKswapdPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.PgstealKswapd }, 1)
	iv.RefaultFilePerSec = rate(func(s *Sample) *uint64 { return s.VMStat.WorkingsetRefaultFile }, 1)
	iv.RefaultAnonPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.WorkingsetRefaultAnon }, 1)
	iv.MajfaultPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.Pgmajfault }, 1)
	iv.AllocstallPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.Allocstall }, 1)
	iv.ReclaimScanPerSec, iv.DirectReclaimPerSec = nan, iv.PgscanDirectPerSec
	if prev.VMStat != nil && cur.VMStat != nil && secs > 0 {
		a, okA := counterDelta(prev.VMStat.PgscanAnon, cur.VMStat.PgscanAnon)
		f, okF := counterDelta(prev.VMStat.PgscanFile, cur.VMStat.PgscanFile)
		if cur.VMStat.PgscanAnon != nil && prev.VMStat.PgscanAnon != nil && !(okA && okF) {
			iv.DirectReclaimPerSec = nan // present but reset: unknown, not zero
		}
		if okA && okF {
			iv.ReclaimScanPerSec = (a + f) / secs
			if k, ok := counterDelta(prev.VMStat.PgscanKswapd, cur.VMStat.PgscanKswapd); ok {
				d := max((a+f-k)/secs, 0)
				if Known(iv.DirectReclaimPerSec) {
					d = max(d, iv.DirectReclaimPerSec)
				}
				iv.DirectReclaimPerSec = d
			}
		}
	}
	iv.SwapInBytesPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.Pswpin }, ps)
	iv.SwapOutBytesPerSec = rate(func(s *Sample) *uint64 { return s.VMStat.Pswpout }, ps)
	iv.OOMKills = nan
	if prev.VMStat != nil && cur.VMStat != nil {
		if d, ok := counterDelta(prev.VMStat.OOMKill, cur.VMStat.OOMKill); ok {
			iv.OOMKills = d
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

// counterDelta is cur-prev for a cumulative counter; ok is false when
// either is absent or the counter went backwards (reset or wrap), so no
// negative or huge value reaches a rate.
func counterDelta(prev, cur *uint64) (float64, bool) {
	if prev == nil || cur == nil || *cur < *prev {
		return 0, false
	}
	return float64(*cur - *prev), true
}
