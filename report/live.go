package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/memdiag/memdiag/record"
)

// LiveColumns is the header of `memdiag watch`'s live view, one row per
// interval. Units: PSI in % of wall time from Δtotal; LRU in MiB; reclaim
// and refault in pages/s (DIRECT includes reclaim forced by cgroup limits); swap-out in MiB/s; disk in MB/s (10^6) and busy %.
var LiveColumns = fmt.Sprintf(liveLayout,
	"TIME", "MEM-SOME", "MEM-FULL", "IO-SOME", "FILE-LRU", "ΔLRU", "DIRECT", "KSWAPD", "REFAULT", "SWPOUT", "DISK", "BUSY", "TOP-IO")

// LiveUnits is the line under LiveColumns giving each column's unit.
var LiveUnits = fmt.Sprintf(liveLayout,
	"", "%", "%", "%", "MiB", "MiB", "pages/s", "pages/s", "pages/s", "MiB/s", "MB/s", "%", "MB/s")

// liveLayout has LiveRow's field widths, names and units right-aligned
// over the numbers.
const liveLayout = "%-8s %9s%9s%9s%10s%8s%8s%8s%8s%8s%7s%6s  %s"

// LiveRow formats one interval for the live view, stamped with the
// interval's end (iv.End: when its counters were read, as sar and pidstat
// stamp a row; the timeline's rows use the same instant). top is the sample's
// heaviest I/O process (or nil). With color, PSI values above 10 % and a
// shrinking file LRU are highlighted.
func LiveRow(iv record.Interval, s *record.Sample, color bool) string {
	var b strings.Builder
	b.WriteString(iv.End.Format("15:04:05"))
	pct := func(x float64) string {
		if !record.Known(x) {
			return fmt.Sprintf("%9s", "n/a")
		}
		v := fmt.Sprintf("%8.1f%%", x*100)
		if color && x >= 0.10 {
			return "\x1b[31m" + v + "\x1b[0m"
		}
		return v
	}
	num := func(x float64, scale float64, w int, prec int) string {
		if !record.Known(x) {
			return fmt.Sprintf("%*s", w, "n/a")
		}
		return fitNum(x/scale, w, prec)
	}
	b.WriteString(" ")
	b.WriteString(pct(iv.MemSome))
	b.WriteString(pct(iv.MemFull))
	b.WriteString(pct(iv.IOSome))
	b.WriteString(num(iv.FileLRUBytes, 1<<20, 10, 0))
	d := num(iv.FileLRUDeltaBytes, 1<<20, 8, 0)
	if color && record.Known(iv.FileLRUDeltaBytes) && iv.FileLRUDeltaBytes < -float64(16<<20) {
		d = "\x1b[33m" + d + "\x1b[0m"
	}
	b.WriteString(d)
	b.WriteString(num(iv.AllocReclaimPerSec, 1, 8, 0)) // signal.AllocReclaim, as analyze
	b.WriteString(num(iv.PgscanKswapdPerSec, 1, 8, 0))
	refault := iv.RefaultFilePerSec
	if record.Known(iv.RefaultAnonPerSec) && record.Known(refault) {
		refault += iv.RefaultAnonPerSec
	}
	b.WriteString(num(refault, 1, 8, 0))
	b.WriteString(num(iv.SwapOutBytesPerSec, 1<<20, 8, 1))
	disk := math.NaN()
	if record.Known(iv.DiskReadBytesPerSec) {
		disk = iv.DiskReadBytesPerSec + iv.DiskWriteBytesPerSec
	}
	b.WriteString(num(disk, 1e6, 7, 1))
	if record.Known(iv.DiskBusy) {
		fmt.Fprintf(&b, "%5.0f%%", iv.DiskBusy*100)
	} else {
		b.WriteString("   n/a")
	}
	b.WriteString("  ")
	if s != nil && len(s.Procs) > 0 {
		p := s.Procs[0]
		name := p.Comm
		if p.Unit != "" {
			name += " (" + p.Unit + ")"
		}
		fmt.Fprintf(&b, "%s %.1fMB/s", name, float64(p.DeltaReadBytes+p.DeltaWriteBytes)/1e6/math.Max(iv.Dt.Seconds(), 1e-9))
	} else {
		b.WriteString("-")
	}
	return b.String()
}

// WriteSummary prints the end-of-run summary of `memdiag watch`.
func WriteSummary(w io.Writer, sm *record.Summary, path string, topN int) {
	noun := "samples"
	if sm.Samples == 1 {
		noun = "sample"
	}
	fmt.Fprintf(w, "\nRecorded %d %s over %s to %s\n", sm.Samples, noun, sm.Duration.Round(1e9), path)
	if sm.Samples < 2 {
		fmt.Fprintln(w, "  too short to measure rates: at least two samples are needed")
		return
	}
	if sm.HasPSI {
		fmt.Fprintf(w, "  PSI memory some: peak %.1f%%, mean %.2f%%, stalled %s\n", sm.MemSomePeak*100, sm.MemSomeMean*100, sm.MemSomeStall.Round(1e6))
		fmt.Fprintf(w, "  PSI memory full: peak %.1f%%, mean %.2f%%, stalled %s\n", sm.MemFullPeak*100, sm.MemFullMean*100, sm.MemFullStall.Round(1e6))
		fmt.Fprintf(w, "  PSI io some: stalled %s\n", sm.IOSomeStall.Round(1e6))
	} else {
		fmt.Fprintln(w, "  PSI: not available on this kernel (see the warning above)")
	}
	if sm.HasCgroupPSI {
		fmt.Fprintf(w, "  cgroup PSI memory: some stalled %s, full stalled %s\n", sm.CgMemSomeStall.Round(1e6), sm.CgMemFullStall.Round(1e6))
	}
	if record.Known(sm.SwapOutBytes) {
		fmt.Fprintf(w, "  swap-out: %.1f MiB\n", sm.SwapOutBytes/(1<<20))
	}
	if record.Known(sm.FileLRUMinBytes) {
		fmt.Fprintf(w, "  file LRU: start %.0f MiB, minimum %.0f MiB\n", sm.FileLRUStartBytes/(1<<20), sm.FileLRUMinBytes/(1<<20))
	}
	if record.Known(sm.OOMKills) && sm.OOMKills > 0 {
		fmt.Fprintf(w, "  OOM kills: %.0f\n", sm.OOMKills)
	}
	if ws := sm.TopWriters(topN); len(ws) > 0 {
		fmt.Fprintln(w, "  top writers:")
		for _, p := range ws {
			unit := p.Unit
			if unit == "" {
				unit = "-"
			}
			fmt.Fprintf(w, "    %-16s pid %-7d %-32s wrote %8.1f MiB, read %8.1f MiB\n", p.Comm, p.PID, unit,
				float64(p.WriteBytes)/(1<<20), float64(p.ReadBytes)/(1<<20))
		}
	}
}

// fitNum writes v right-aligned in w columns with prec decimals, keeping
// at least one blank before it so that columns never run together; a
// value too wide for that is shortened with a k/M/G suffix (10040844 →
// "10.0M").
func fitNum(v float64, w, prec int) string {
	s := fmt.Sprintf("%.*f", prec, v)
	if len(s) < w {
		return fmt.Sprintf("%*s", w, s)
	}
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}} {
		if s = fmt.Sprintf("%.1f%s", v/u.div, u.suffix); len(s) < w {
			break
		}
	}
	return fmt.Sprintf("%*s", w, s)
}
