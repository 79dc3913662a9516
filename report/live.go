package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// LiveOptions choose the columns of `memdiag watch`'s live view.
type LiveOptions struct {
	// Width is the terminal's width in columns; 0 (piped output) shows
	// every column at its full width.
	Width int
	// Latency: a latency source (--probe or --latency) is recording, so
	// the view has P99 and ERR.
	Latency bool
	// Cgroup: a --cgroup group is recording, so the view has its PSI.
	Cgroup bool
	// Color highlights PSI at 10 % or more and a file LRU shrinking by
	// more than 16 MiB in an interval.
	Color bool
}

// LiveView renders watch's live rows: one per interval, stamped with the
// interval's end (when its counters were read, as sar and pidstat stamp
// a row; analyze's timeline rows use the same instant). Sizes and rates
// are binary (MiB, MiB/s) in every column; reclaim in pages/s.
//
// The columns are chosen once, by importance, to fit Width: latency and
// memory PSI first, then direct and cgroup-limit reclaim, disk and the
// file LRU's change, the busiest process, then the rest; [LiveView.Legend]
// names the ones left out, which the recording still has.
type LiveView struct {
	o      LiveOptions
	cols   []*liveCol // shown, in display order
	hidden []*liveCol
	topW   int // the TOP-IO cell's width; 0: as wide as its text
}

// liveCol is one column of the live view.
type liveCol struct {
	name, unit string
	what       string // for the legend
	width      int    // including the blank before it
	prio       int    // lower is kept first
	cell       func(c *liveCol, iv *record.Interval, s *record.Sample, color bool) string
}

// topMin is the narrowest TOP-IO cell worth showing: a 10-character
// process name and its rate.
const topMin = 18

func liveColumns(o LiveOptions) []*liveCol {
	pct := func(get func(*record.Interval) float64) func(*liveCol, *record.Interval, *record.Sample, bool) string {
		return func(c *liveCol, iv *record.Interval, _ *record.Sample, color bool) string {
			x := get(iv)
			if !record.Known(x) {
				return pad("n/a", c.width)
			}
			v := fitNum(x*100, c.width, 1)
			if color && x >= 0.10 {
				return "\x1b[31m" + v + "\x1b[0m"
			}
			return v
		}
	}
	num := func(get func(*record.Interval) float64, scale float64, prec int) func(*liveCol, *record.Interval, *record.Sample, bool) string {
		return func(c *liveCol, iv *record.Interval, _ *record.Sample, _ bool) string {
			x := get(iv)
			if !record.Known(x) {
				return pad("n/a", c.width)
			}
			return fitNum(x/scale, c.width, prec)
		}
	}
	const mib = 1 << 20
	cols := []*liveCol{}
	add := func(c *liveCol) { cols = append(cols, c) }
	if o.Latency {
		add(&liveCol{name: "P99", unit: "ms", width: 7, prio: 1, what: "P99 the 99th-percentile latency of the requests that completed in the interval",
			cell: func(c *liveCol, _ *record.Interval, s *record.Sample, _ bool) string {
				if s == nil || s.Latency == nil || s.Latency.Count-s.Latency.Errors <= 0 {
					return pad("-", c.width)
				}
				ms := float64(s.Latency.P99) / 1e6
				prec := 0
				if ms < 100 {
					prec = 1
				}
				return fitNum(ms, c.width, prec)
			}})
		add(&liveCol{name: "ERR", unit: "n", width: 5, prio: 4, what: "ERR failed requests",
			cell: func(c *liveCol, _ *record.Interval, s *record.Sample, _ bool) string {
				if s == nil || s.Latency == nil {
					return pad("-", c.width)
				}
				return fitNum(float64(s.Latency.Errors), c.width, 0)
			}})
	}
	add(&liveCol{name: "SOME", unit: "%", width: 6, prio: 2, what: "SOME/FULL the host's memory PSI (share of wall time some/all tasks stalled)",
		cell: pct(func(iv *record.Interval) float64 { return iv.MemSome })})
	add(&liveCol{name: "FULL", unit: "%", width: 6, prio: 10,
		cell: pct(func(iv *record.Interval) float64 { return iv.MemFull })})
	if o.Cgroup {
		add(&liveCol{name: "CG-S", unit: "%", width: 6, prio: 3, what: "CG-S/CG-F the --cgroup group's memory PSI some/full",
			cell: pct(func(iv *record.Interval) float64 { return iv.CgMemSome })})
		add(&liveCol{name: "CG-F", unit: "%", width: 6, prio: 11,
			cell: pct(func(iv *record.Interval) float64 { return iv.CgMemFull })})
	}
	add(&liveCol{name: "IO", unit: "%", width: 6, prio: 16, what: "IO the host's io PSI some",
		cell: pct(func(iv *record.Interval) float64 { return iv.IOSome })})
	add(&liveCol{name: "LRU", unit: "MiB", width: 7, prio: 14, what: "LRU the file LRU (page cache)",
		cell: num(func(iv *record.Interval) float64 { return iv.FileLRUBytes }, mib, 0)})
	add(&liveCol{name: "ΔLRU", unit: "MiB", width: 6, prio: 8, what: "ΔLRU the file LRU's change in the interval",
		cell: func(c *liveCol, iv *record.Interval, _ *record.Sample, color bool) string {
			x := iv.FileLRUDeltaBytes
			if !record.Known(x) {
				return pad("n/a", c.width)
			}
			v := fitNum(x/mib, c.width, 0)
			if color && x < -float64(16<<20) {
				return "\x1b[33m" + v + "\x1b[0m"
			}
			return v
		}})
	add(&liveCol{name: "DIRECT", unit: "pg/s", width: 7, prio: 5, what: "DIRECT " + signal.DirectReclaim.Title + " (the host ran short)",
		cell: num(func(iv *record.Interval) float64 { return iv.DirectReclaimPerSec }, 1, 0)})
	add(&liveCol{name: "LIMIT", unit: "pg/s", width: 6, prio: 6, what: "LIMIT " + signal.LimitReclaim.Title + " (a group reached its limit)",
		cell: num(func(iv *record.Interval) float64 { return iv.LimitReclaimPerSec }, 1, 0)})
	add(&liveCol{name: "KSWAPD", unit: "pg/s", width: 7, prio: 15, what: "KSWAPD " + signal.KswapdReclaim.Title,
		cell: num(func(iv *record.Interval) float64 { return iv.KswapdReclaimPerSec }, 1, 0)})
	add(&liveCol{name: "RFLT", unit: "pg/s", width: 6, prio: 13, what: "RFLT refaults (file + anon)",
		cell: num(func(iv *record.Interval) float64 {
			r := iv.RefaultFilePerSec
			if record.Known(iv.RefaultAnonPerSec) && record.Known(r) {
				r += iv.RefaultAnonPerSec
			}
			return r
		}, 1, 0)})
	add(&liveCol{name: "SWOUT", unit: "MiB/s", width: 6, prio: 12, what: "SWOUT swap-out",
		cell: num(func(iv *record.Interval) float64 { return iv.SwapOutBytesPerSec }, mib, 1)})
	add(&liveCol{name: "DISK", unit: "MiB/s", width: 6, prio: 7, what: "DISK read + written on all recorded disks",
		cell: num(func(iv *record.Interval) float64 {
			if !record.Known(iv.DiskReadBytesPerSec) {
				return math.NaN()
			}
			return iv.DiskReadBytesPerSec + iv.DiskWriteBytesPerSec
		}, mib, 1)})
	add(&liveCol{name: "BUSY", unit: "%", width: 5, prio: 17, what: "BUSY the busiest disk's utilisation",
		cell: num(func(iv *record.Interval) float64 { return iv.DiskBusy * 100 }, 1, 0)})
	add(&liveCol{name: "TOP-IO", unit: "MiB/s", width: topMin, prio: 9, what: "TOP-IO the process with the most I/O (read + write) and its rate (\"exited threads or children of X\": I/O the kernel added to X for its exited threads or for children that ended unseen)"})
	return cols
}

// NewLiveView chooses the columns for o.
func NewLiveView(o LiveOptions) *LiveView {
	all := liveColumns(o)
	v := &LiveView{o: o}
	keep := map[*liveCol]bool{}
	if o.Width <= 0 {
		for _, c := range all {
			keep[c] = true
		}
	} else {
		byPrio := slices.Clone(all)
		slices.SortStableFunc(byPrio, func(a, b *liveCol) int { return a.prio - b.prio })
		used := 8 // TIME
		for _, c := range byPrio {
			if used+c.width <= o.Width {
				keep[c] = true
				used += c.width
			}
		}
		if top := all[len(all)-1]; keep[top] {
			v.topW = top.width + o.Width - used
		}
	}
	for _, c := range all {
		if keep[c] {
			v.cols = append(v.cols, c)
		} else {
			v.hidden = append(v.hidden, c)
		}
	}
	return v
}

// hiddenNames names the columns left out to fit the width.
func (v *LiveView) hiddenNames() []string {
	var names []string
	for _, c := range v.hidden {
		names = append(names, c.name)
	}
	return names
}

// Legend says once what the shown columns hold and which were left out.
func (v *LiveView) Legend() string {
	var parts []string
	for _, c := range v.cols {
		if c.what != "" {
			parts = append(parts, c.what)
		}
	}
	s := "Live columns: " + strings.Join(parts, "; ") + ". Sizes and rates in MiB (2^20 bytes), reclaim and refaults in pages/s."
	if h := v.hiddenNames(); len(h) > 0 {
		s += fmt.Sprintf(" Not shown at %d columns (the recording has them; a wider terminal or a pipe shows them): %s.", v.o.Width, strings.Join(h, ", "))
	}
	return s
}

// Header is the two header lines: the column names, and their units.
func (v *LiveView) Header() string {
	var names, units strings.Builder
	names.WriteString(pad("TIME", -8))
	units.WriteString(pad("", -8))
	for _, c := range v.cols {
		if c.cell == nil { // TOP-IO, left-aligned
			names.WriteString("  " + c.name)
			units.WriteString("  " + c.unit)
			continue
		}
		names.WriteString(pad(c.name, c.width))
		units.WriteString(pad(c.unit, c.width))
	}
	return strings.TrimRight(names.String(), " ") + "\n" + strings.TrimRight(units.String(), " ")
}

// Row formats one interval; s is the sample at its end (its latency and
// heaviest-I/O process), or nil.
func (v *LiveView) Row(iv record.Interval, s *record.Sample) string {
	return v.row(iv.End.Format("15:04:05"), iv, s)
}

// FinalRow formats the last, partial interval (from the last tick to the
// stop: Ctrl-C, the command's exit). Its end usually falls in the same
// second as the row before, so it is stamped with its length after that
// row ("   +0.4s") instead of a clock time that would repeat.
func (v *LiveView) FinalRow(iv record.Interval, s *record.Sample) string {
	return v.row(fmt.Sprintf("%8s", fmt.Sprintf("+%.1fs", iv.Dt.Seconds())), iv, s)
}

func (v *LiveView) row(stamp string, iv record.Interval, s *record.Sample) string {
	var b strings.Builder
	b.WriteString(stamp)
	for _, c := range v.cols {
		if c.cell == nil {
			b.WriteString("  ")
			b.WriteString(v.topCell(iv, s))
			continue
		}
		b.WriteString(c.cell(c, &iv, s, v.o.Color))
	}
	return strings.TrimRight(b.String(), " ")
}

// topCell is the TOP-IO cell: the process with the most I/O in the
// interval and its read + write rate, its unit in parentheses when there
// is room; shortened with "…" to fit. See [topOf] for what competes.
func (v *LiveView) topCell(iv record.Interval, s *record.Sample) string {
	comm, unit, bytes := topOf(s)
	if comm == "" {
		return "-"
	}
	rate := fmt.Sprintf(" %.1f", float64(bytes)/(1<<20)/math.Max(iv.Dt.Seconds(), 1e-9))
	name := comm
	if unit != "" {
		name += " (" + unit + ")"
	}
	if v.topW > 0 {
		room := v.topW - 2 - len(rate)
		if runewidth.StringWidth(name) > room {
			name = runewidth.Truncate(comm, room, "…")
		}
	}
	return name + rate
}

// topOf picks the interval's busiest process (read + written): a
// process row's own I/O; a process that started and exited within the
// interval, by its exit record's exact total (taskstats: such a dd is
// never in a row); or, named by correlate.ReapedComm, the I/O the kernel
// added to X for children it reaped that no row or exit record holds,
// or for its exited threads (diskio.ProcIO.DeltaReaped*Bytes). Ties go to the first met. comm is
// "" when nothing did I/O.
func topOf(s *record.Sample) (comm, unit string, bytes uint64) {
	if s == nil {
		return "", "", 0
	}
	for i := range s.Procs {
		p := &s.Procs[i]
		if b := p.DeltaReadBytes + p.DeltaWriteBytes; b > bytes {
			comm, unit, bytes = p.Comm, p.Unit, b
		}
		if b := p.DeltaReapedReadBytes + p.DeltaReapedWriteBytes; b > bytes {
			comm, unit, bytes = correlate.ReapedComm(p.Comm), "", b
		}
	}
	var execd map[int]bool
	for i := range s.Events {
		e := &s.Events[i]
		if e.Kind == process.Exec {
			if execd == nil {
				execd = map[int]bool{}
			}
			execd[e.PID] = true
			continue
		}
		if e.Kind == process.Exit && e.Source == "taskstats" && execd[e.PID] && e.ReadBytes+e.WriteBytes > bytes {
			comm, unit, bytes = e.Comm, e.Unit, e.ReadBytes+e.WriteBytes
		}
	}
	return comm, unit, bytes
}

// pad right-aligns s in w columns (left-aligns for negative w).
func pad(s string, w int) string {
	n := runewidth.StringWidth(s)
	switch {
	case w >= 0 && n < w:
		return strings.Repeat(" ", w-n) + s
	case w < 0 && n < -w:
		return s + strings.Repeat(" ", -w-n)
	}
	return s
}

// SummaryOptions are the end summary's settings.
type SummaryOptions struct {
	// TopN is how many processes the I/O list keeps.
	TopN int
	// Culprit is the job the verdict names first ("" for none), and
	// CulpritProcs its own processes (correlate.ProcActivity.ProcIDs of
	// its rows): they lead the I/O list, marked. A process is the
	// culprit's by its PID and start time, not its name: another
	// tenant's dd, or one outside the analysed group, has the same name
	// and is not; nor is a later process given the culprit's old PID.
	// Where either start time is unknown (0), the PID alone decides.
	Culprit      string
	CulpritProcs []correlate.ProcID
	// Width is the terminal's width in columns (0: unknown, 80 assumed):
	// the process list narrows its UNIT, then PROCESS column to fit it.
	Width int
}

// SetCulprit makes the verdict's first culprit in res (nil: none) and
// its own processes lead the summary's I/O list.
func (o *SummaryOptions) SetCulprit(res *correlate.Result) {
	if res == nil || len(res.Culprits) == 0 {
		return
	}
	c := res.Culprits[0]
	o.Culprit = c.Name
	for _, p := range c.Processes {
		if len(p.ProcIDs) > 0 {
			o.CulpritProcs = append(o.CulpritProcs, p.ProcIDs...)
			continue
		}
		for _, pid := range p.PIDs { // a result without start times
			o.CulpritProcs = append(o.CulpritProcs, correlate.ProcID{PID: pid})
		}
	}
}

// culpritOwns reports whether p is one of the culprit's processes.
func (o *SummaryOptions) culpritOwns(p *record.ProcTotal) bool {
	return slices.ContainsFunc(o.CulpritProcs, func(id correlate.ProcID) bool { return id.Is(p.PID, p.StartTicks) })
}

// WriteSummaryWith prints the end-of-run summary of `memdiag watch`: PSI,
// swap-out, the file LRU, OOM kills, and the processes by total I/O (read
// + written), the culprit's first. Every line fits 80 columns.
func WriteSummaryWith(w io.Writer, sm *record.Summary, path string, o SummaryOptions) {
	noun := "samples"
	if sm.Samples == 1 {
		noun = "sample"
	}
	fmt.Fprintf(w, "\nRecorded %d %s over %s to %s\n", sm.Samples, noun, correlate.FormatDuration(sm.Duration), path)
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
	ps := topIO(sm.TopIO(-1), o)
	kids := sm.UnseenChildren(o.TopN)
	if len(ps) == 0 && len(kids) == 0 {
		return
	}
	defer writeUnseenChildren(w, kids)
	if len(ps) == 0 {
		return
	}
	if o.Culprit != "" {
		fmt.Fprintf(w, "  I/O by process (read + written), most first; * the culprit's, %s:\n", o.Culprit)
	} else {
		fmt.Fprintln(w, "  I/O by process (read + written), most first:")
	}
	commW, unitW := summaryColumns(o.Width)
	fmt.Fprintf(w, "    %-*s %7s %-*s %10s %10s\n", commW, "PROCESS", "PID", unitW, "UNIT", "READ", "WRITTEN")
	for _, p := range ps {
		unit := p.Unit
		if unit == "" {
			unit = "-"
		}
		mark := ""
		if o.culpritOwns(&p) {
			mark = " *"
		}
		fmt.Fprintf(w, "    %-*s %7d %-*s %10s %10s%s\n", commW, runewidth.FillRight(runewidth.Truncate(p.Comm, commW, "…"), commW), p.PID,
			unitW, runewidth.FillRight(runewidth.Truncate(unit, unitW, "…"), unitW), correlate.FormatBytes(p.ReadBytes), correlate.FormatBytes(p.WriteBytes), mark)
	}
}

// summaryColumns returns the widths of the summary's PROCESS and UNIT
// columns for a terminal of width columns (0: unknown): 15 and 18, which
// with the culprit's mark take 70 columns, narrowed (UNIT to 6, then
// PROCESS to 8) until a row fits.
func summaryColumns(width int) (comm, unit int) {
	comm, unit = 15, 18
	if width <= 0 {
		return comm, unit
	}
	over := 4 + comm + 1 + 7 + 1 + unit + 1 + 10 + 1 + 10 + 2 - width
	if over <= 0 {
		return comm, unit
	}
	cut := min(over, unit-6)
	unit -= cut
	over -= cut
	comm -= min(over, comm-8)
	return comm, unit
}

// writeUnseenChildren lists, after the processes, the I/O of children
// that ended unseen or of exited threads, under their parent: the kernel
// added it to the parent's counters (signal->ioac), and /proc cannot
// tell the two apart (correlate.ReapedComm).
func writeUnseenChildren(w io.Writer, kids []record.ProcTotal) {
	if len(kids) == 0 {
		return
	}
	fmt.Fprintln(w, "  I/O the kernel added to these processes for their exited threads or for")
	fmt.Fprintln(w, "  children that ended between two samples, unseen (no exit record names")
	fmt.Fprintln(w, "  them: a thread's exit is never recorded, a child's only from taskstats,")
	fmt.Fprintln(w, "  as root with process events on), not their own:")
	for _, p := range kids {
		fmt.Fprintf(w, "    threads/children of %-15s %7d %9s read %9s written\n", runewidth.Truncate(p.Comm, 15, "…"), p.PID,
			correlate.FormatBytes(p.ReadBytes), correlate.FormatBytes(p.WriteBytes))
	}
}

// topIO orders the processes for the summary: the culprit's first, then
// by total I/O, and keeps o.TopN (and every culprit process).
func topIO(all []record.ProcTotal, o SummaryOptions) []record.ProcTotal {
	var first, rest []record.ProcTotal
	for _, p := range all {
		if o.culpritOwns(&p) {
			first = append(first, p)
		} else {
			rest = append(rest, p)
		}
	}
	n := max(0, o.TopN-len(first))
	return append(first, rest[:min(n, len(rest))]...)
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
		// 181235 in 6 columns: "181k" keeps three digits, "0.2M" one;
		// past three digits the next suffix reads better ("10.0M").
		if a := math.Abs(v / u.div); a >= 10 && a < 1000 {
			if s = fmt.Sprintf("%.0f%s", v/u.div, u.suffix); len(s) < w {
				break
			}
		}
	}
	return fmt.Sprintf("%*s", w, s)
}
