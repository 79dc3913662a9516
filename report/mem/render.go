// Package mem renders a [memstate.Report] (what `memdiag mem` shows)
// as a table, markdown, JSON or CSV. It never reads /proc: everything comes in
// the Report.
package mem

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/tables"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/report/psinote"
	"github.com/memdiag/memdiag/signal"
)

// Formats lists the formats [Render] writes.
var Formats = []format.Format{format.Table, format.Markdown, format.JSON, format.CSV}

// Options control rendering.
type Options struct {
	// TopCgroups is how many cgroups the table and markdown show by usage;
	// cgroups with a limit or OOM kills are shown anyway. JSON has all.
	TopCgroups int
	// Loc is the zone times are shown in; nil is UTC.
	Loc *time.Location
	// Width is the terminal width in columns the tables fit, long
	// descriptions and cgroup paths wrapping; 0 (not a terminal) keeps
	// full content.
	Width int
	// Color makes table headers bold (a terminal, no NO_COLOR, no
	// --no-color).
	Color bool
	// AllOOM lists every OOM kill of the kernel log in the table and
	// markdown; false lists the newest [OOMShown] and details the newest
	// [OOMDetailed], counting the rest by process name. JSON and CSV
	// always have all.
	AllOOM bool
	// Allocators writes, under the process table, each process's
	// allocator reading (leak or retention, memstate.Retention); without
	// it one line says how to see them. JSON always has them.
	Allocators bool
}

// OOMShown is how many OOM kills, the newest, the table and markdown
// list without Options.AllOOM; OOMDetailed is how many of them, the
// newest, get the kernel report's detail (cause, trigger, task table).
// A host that has OOM-killed a crash-looping service hundreds of times
// would otherwise print thousands of lines.
const (
	OOMShown    = 10
	OOMDetailed = 3
)

// Render writes r in format f.
func Render(w io.Writer, r memstate.Report, f format.Format, o Options) error {
	r = Described(r)
	switch f {
	case format.CSV:
		return renderCSV(w, r)
	case format.JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			memstate.Report
			// SuspectPSIText are SuspectPSI's sentences.
			SuspectPSIText []string `json:"suspect_psi_text,omitempty"`
		}{r, suspectTexts(r, o.Loc)})
	case format.Table, format.Markdown:
		return renderText(w, r, f == format.Markdown, o)
	}
	return format.Unsupported(f, Formats)
}

func renderText(w io.Writer, r memstate.Report, md bool, o Options) error {
	loc := o.Loc
	if loc == nil {
		loc = time.UTC
	}
	d := &textDoc{md: md, o: o, loc: loc}
	b := &d.b
	title := "Memory at " + r.Time.In(loc).Format(time.RFC3339)
	if r.Root != "" {
		// A capture's own time is not known: say what was read, and when.
		title = "Memory under " + r.Root + ", read at " + r.Time.In(loc).Format(time.RFC3339)
	}
	if md {
		b.WriteString("# ")
	}
	b.WriteString(title + "\n\n")
	b.WriteString(r.Verdict.Sentence + "\n")
	for _, s := range suspectTexts(r, loc) {
		fmt.Fprintf(b, "warning: %s\n", s)
	}
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(b, "warning: %s\n", wmsg)
	}
	d.hostSection(r)
	d.procsSection(r)
	d.cgroupsSection(r)
	d.oomSection(r)
	_, err := io.WriteString(w, strings.TrimLeft(b.String(), "\n"))
	return err
}

// textDoc is the text or Markdown of a memstate report being written.
type textDoc struct {
	b   strings.Builder
	md  bool
	o   Options
	loc *time.Location
}

func (d *textDoc) heading(s string) {
	d.b.WriteString("\n" + tables.Heading(s, d.md) + "\n")
	if d.md {
		d.b.WriteString("\n")
	}
}

func (d *textDoc) render(t *tables.Table) {
	if d.md {
		// A table needs blank lines around it, or the next line of
		// text becomes one more row (GFM).
		if !strings.HasSuffix(d.b.String(), "\n\n") {
			d.b.WriteString("\n")
		}
		d.b.WriteString(t.Markdown())
		d.b.WriteString("\n")
	} else {
		d.b.WriteString(t.Text(tables.Options{Width: d.o.Width, Color: d.o.Color}))
	}
	d.b.WriteString("\n")
}

// newTable is a table with these column titles, upper case in text, as
// written in Markdown.
func (d *textDoc) newTable(titles ...string) *tables.Table {
	hdr := make([]any, len(titles))
	for i, s := range titles {
		if !d.md {
			s = strings.ToUpper(s)
		}
		hdr[i] = s
	}
	return tables.New(hdr...)
}

// hostSection is the host's figures (/proc/meminfo, PSI, the last
// interval's reclaim) and its tmpfs mounts.
func (d *textDoc) hostSection(r memstate.Report) {
	h := r.Host
	d.heading("Host")
	t := d.newTable("figure", "bytes", "what it is").SetFit(0, tables.Wrap, 16).SetFit(1, tables.Wrap, 14).SetFit(2, tables.Wrap, 20)
	rows := [][]any{
		{"total", h.TotalBytes, "MemTotal"},
		{"free", h.FreeBytes, "MemFree: unused"},
		{"available", h.AvailableBytes, "MemAvailable: free + what reclaim gives back"},
		{"used incl. cache", r.Verdict.UsedWithCacheBytes, "total − free: a dashboard's \"used\""},
		{"reclaimable", r.Verdict.ReclaimableBytes, "available − free: cache and slab given back on demand"},
		{"anon active / inactive", pair(h.ActiveAnonBytes, h.InactiveAnonBytes), "process memory (and shmem); freed only to swap"},
		{"file active / inactive", pair(h.ActiveFileBytes, h.InactiveFileBytes), "page cache on the LRU; inactive goes first"},
		{"dirty / writeback", pair(h.DirtyBytes, h.WritebackBytes), "cache to be written before it can be freed"},
		{"shmem", h.ShmemBytes, "tmpfs and shared memory: counted as cache, freed only to swap"},
		{"slab reclaimable / unreclaimable", pair(h.SlabReclaimableBytes, h.SlabUnreclaimableBytes), "kernel objects (dentries, inodes / the rest)"},
		{"kernel stack / page tables", pair(h.KernelStackBytes, h.PageTablesBytes), ""},
		{"swap used / total", pair(h.SwapUsedBytes, h.SwapTotalBytes), ""},
		{"swap cached", h.SwapCachedBytes, "swapped pages also still in RAM"},
	}
	for _, row := range rows {
		if n, ok := row[1].(uint64); ok {
			row[1] = memstate.FormatBytes(n)
		}
		t.AppendRow(row...)
	}
	if r.PSI != nil {
		t.AppendRow("PSI memory some / full", psiText(r.PSI), "% of time stalled, avg10 avg60 avg300")
	}
	if r.Activity.Interval > 0 {
		a := r.Activity
		over := a.Interval.Round(100 * time.Millisecond).String()
		t.AppendRow("refaults (last "+over+")", fmt.Sprintf("%d pages", a.RefaultPages), "evicted cache read back: the cache is too small")
		t.AppendRow(signal.DirectReclaim.Title+" (last "+over+")", fmt.Sprintf("%d stalls, %d pages", a.Allocstalls, a.DirectScanPages), "allocations that had to free host memory first (pgscan_direct)")
		t.AppendRow(signal.LimitReclaim.Title+" (last "+over+")", fmt.Sprintf("%d pages", a.LimitScanPages), "reclaim in cgroups at their limits (pgscan_anon+file − kswapd − direct)")
		t.AppendRow(signal.KswapdReclaim.Title+" (last "+over+")", fmt.Sprintf("%d pages", a.KswapdScanPages), "background reclaim")
	}
	d.render(t)
	if len(h.Tmpfs) > 0 {
		d.heading("tmpfs")
		t := d.newTable("mount", "used", "size").SetFit(0, tables.Wrap, 24)
		for _, m := range h.Tmpfs {
			t.AppendRow(m.MountPoint, memstate.FormatBytes(m.UsedBytes), memstate.FormatBytes(m.SizeBytes))
		}
		d.render(t)
	}
}

// procsSection is the processes by RSS, their allocators' readings
// (Options.Allocators; else how to ask for them) and what PSS could not
// be read.
func (d *textDoc) procsSection(r memstate.Report) {
	b := &d.b
	d.heading(fmt.Sprintf("Processes by RSS (top %d)", len(r.Procs)))
	// A narrow terminal hides pss, swap and shmem, then the cgroup.
	t := d.newTable("pid", "command", "rss", "anon", "file", "shmem", "pss", "swap", "cgroup").SetFit(1, tables.Truncate, 12).
		SetFit(8, tables.Wrap, 8).HideWhenNarrow(6, 7, 5, 8)
	for _, p := range r.Procs {
		pss := "-"
		if p.PSSBytes != nil {
			pss = memstate.FormatBytes(*p.PSSBytes)
		}
		cg := p.Cgroup
		if p.Unit != "" {
			cg = p.Unit
		}
		t.AppendRow(p.PID, p.Comm, memstate.FormatBytes(p.RSSBytes), memstate.FormatBytes(p.RSSAnonBytes),
			memstate.FormatBytes(p.RSSFileBytes), memstate.FormatBytes(p.RSSShmemBytes), pss, memstate.FormatBytes(p.SwapBytes), cg)
	}
	d.render(t)
	read := 0
	for _, p := range r.Procs {
		if p.Retention != nil && p.Retention.Reading != "" {
			read++
			if d.o.Allocators {
				fmt.Fprintf(b, "%s (PID %d), allocator: %s.\n", p.Comm, p.PID, p.Retention.Reading)
			}
		}
	}
	if read > 0 && !d.o.Allocators {
		fmt.Fprintf(b, "Leak or allocator retention? Each process's allocator, threads and arenas: --allocators.\n")
	}
	if r.ProcScan.NoPSS > 0 {
		fmt.Fprintf(b, "PSS unknown for %s: smaps_rollup unreadable (needs root; some processes, such as a container's PID 1, refuse even root).\n",
			english.Count(r.ProcScan.NoPSS, "process"))
	}
}

// cgroupsSection is the memory cgroups (the TopCgroups largest, and
// every one with a limit or an OOM kill) and their notes.
func (d *textDoc) cgroupsSection(r memstate.Report) {
	o := d.o
	d.heading("Memory cgroups")
	t := d.newTable("cgroup", "v", "usage", "limit", "anon", "cache", "shmem", "working set", "dirty", "swap", "psi some avg10", "oom kills", "note").
		SetFit(0, tables.Wrap, 20).SetFit(12, tables.Wrap, 12).HideWhenNarrow(8, 6, 9, 1, 7, 5, 4, 12)
	for i, c := range r.Cgroups {
		show := i < o.TopCgroups || c.LimitBytes != nil || (c.OOMKills != nil && *c.OOMKills > 0) || o.TopCgroups <= 0
		if !show {
			continue
		}
		t.AppendRow(c.Path, c.Version, memstate.FormatBytes(c.UsageBytes), optBytes(c.LimitBytes),
			memstate.FormatBytes(c.AnonBytes), memstate.FormatBytes(c.CacheBytes), memstate.FormatBytes(c.ShmemBytes),
			memstate.FormatBytes(c.WorkingSetBytes), memstate.FormatBytes(c.DirtyBytes), optBytes(c.SwapBytes), optPSI(c.PSI), optUint(c.OOMKills), flag(c))
	}
	d.render(t)
	for _, c := range r.Cgroups {
		if c.Note != "" {
			fmt.Fprintf(&d.b, "%s: %s.\n", c.Path, c.Note)
		}
	}
}

// oomSection is the OOM kills: where the kernel log was read from, the
// kills it holds (oomTable: the newest OOMShown unless Options.AllOOM)
// and the kernel's counters.
func (d *textDoc) oomSection(r memstate.Report) {
	b := &d.b
	d.heading("OOM kills")
	if r.OOM.LogUnreadable != "" {
		fmt.Fprintf(b, "Kernel log not readable (%s); only the counters below are known.\n", r.OOM.LogUnreadable)
	} else {
		fmt.Fprintf(b, "From %s: %s in the kernel log.\n", r.OOM.LogSource, english.Count(len(r.OOM.Kills), "OOM kill"))
		noWall := false
		for _, k := range r.OOM.Kills {
			noWall = noWall || k.Time.IsZero()
		}
		switch v := r.OOM.VMStatOOMKills; {
		case r.OOM.LogFile && noWall:
			b.WriteString("Its stamps are time since its host's boot, which the file does not give: no wall time (dmesg -T and journalctl -k print it).\n")
		case r.OOM.LogFile:
		case v != nil && *v > uint64(len(r.OOM.Kills)):
			fmt.Fprintf(b, "The kernel counted %d since boot: the others' messages have left the log.\n", *v)
		}
	}
	if kills := r.OOM.Kills; len(kills) > 0 {
		shown, detailed := kills, kills
		if !d.o.AllOOM {
			shown = kills[max(0, len(kills)-OOMShown):]
			detailed = kills[max(0, len(kills)-OOMDetailed):]
		}
		if earlier := kills[:len(kills)-len(shown)]; len(earlier) > 0 {
			fmt.Fprintf(b, "The newest %d below; %s.\n", len(shown), earlierKills(earlier, d.loc))
		}
		d.oomTable(shown, detailed)
	}
	var counters []string
	if r.OOM.VMStatOOMKills != nil {
		counters = append(counters, fmt.Sprintf("/proc/vmstat oom_kill %d", *r.OOM.VMStatOOMKills))
	}
	for _, c := range r.OOM.CgroupOOMKills {
		counters = append(counters, fmt.Sprintf("%s oom_kill %d", c.Path, c.OOMKills))
	}
	if len(counters) > 0 {
		what := "Counters since boot"
		if r.OOM.LogFile {
			what = "This host's counters since its boot (they do not count the file's kills)"
		}
		fmt.Fprintf(b, "%s: %s.\n", what, strings.Join(counters, "; "))
	}
}

// oomTable is the kernel log's OOM kills shown, one row each, then the
// detail (oomDetail) of those detailed.
func (d *textDoc) oomTable(shown, detailed []memstate.OOMKill) {
	t := d.newTable("time", "since boot", "pid", "process", "anon-rss", "file-rss", "shmem-rss", "constraint", "cgroup", "group usage / limit").SetFit(8, tables.Wrap, 8).
		HideWhenNarrow(1, 6, 5, 7, 4, 9)
	// cgroup wraps down to 12 (tables' least): with time, pid, a
	// 9-character process and "240.0 MiB / 240.0 MiB" that is 80
	// columns, one more than go-pretty's padding leaves, so at 80 the
	// usage / limit column (the cgroups table's too) is hidden last and
	// named under the table (it was 83 columns with cgroup at 15: a
	// trial's 80-column terminal).
	for _, k := range shown {
		when := "-"
		if !k.Time.IsZero() {
			when = k.Time.In(d.loc).Format(time.RFC3339)
		}
		cg := k.OOMCgroup
		switch {
		case k.OOMCgroup == "":
			cg = k.TaskCgroup // a global OOM: no group's limit was hit
		case k.TaskCgroup != "" && k.TaskCgroup != k.OOMCgroup:
			cg = k.TaskCgroup + " (limit of " + k.OOMCgroup + ")"
		}
		lim := "-"
		if k.CgroupLimitBytes > 0 {
			lim = memstate.FormatBytes(k.CgroupUsageBytes) + " / " + memstate.FormatBytes(k.CgroupLimitBytes)
		}
		since := k.SinceBoot.Round(time.Second).String()
		if k.SinceBoot == 0 && k.TimeFromLog {
			since = "-" // dmesg -T and journalctl -k print no stamp since boot
		}
		t.AppendRow(when, since, k.PID, k.Comm,
			memstate.FormatBytes(k.AnonRSSBytes), memstate.FormatBytes(k.FileRSSBytes), memstate.FormatBytes(k.ShmemRSSBytes), k.Constraint, cg, lim)
	}
	d.render(t)
	d.b.WriteString("anon-rss, file-rss, shmem-rss: the killed process's own RSS; file-rss counts shared files charged to other groups, so it can exceed what the group held.\n")
	if len(detailed) < len(shown) {
		fmt.Fprintf(&d.b, "\nWhat the kernel reported for the newest %d (--all-oom: for each):\n", len(detailed))
	}
	for _, k := range detailed {
		oomDetail(&d.b, k)
	}
}

// earlierKills says what the kills left out of the table were: how many,
// since when, and the processes killed most often among them.
func earlierKills(ks []memstate.OOMKill, loc *time.Location) string {
	n := map[string]int{}
	for _, k := range ks {
		n[k.Comm]++
	}
	comms := make([]string, 0, len(n))
	for c := range n {
		comms = append(comms, c)
	}
	sort.Slice(comms, func(i, j int) bool {
		if n[comms[i]] != n[comms[j]] {
			return n[comms[i]] > n[comms[j]]
		}
		return comms[i] < comms[j]
	})
	var who []string
	named := 0
	for i, c := range comms {
		if i == 3 {
			who = append(who, fmt.Sprintf("others %d", len(ks)-named))
			break
		}
		who = append(who, fmt.Sprintf("%s %d", c, n[c]))
		named += n[c]
	}
	var since string
	if first := ks[0]; !first.Time.IsZero() {
		since = " since " + first.Time.In(loc).Format(time.RFC3339)
	} else {
		since = fmt.Sprintf(" since %s after boot", first.SinceBoot.Round(time.Second))
	}
	return fmt.Sprintf("%d earlier%s not listed (%s; --all-oom lists them)", len(ks), since, strings.Join(who, ", "))
}

func pair(a, b uint64) string { return memstate.FormatBytes(a) + " / " + memstate.FormatBytes(b) }

func optBytes(p *uint64) string {
	if p == nil {
		return "-"
	}
	return memstate.FormatBytes(*p)
}

func optUint(p *uint64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatUint(*p, 10)
}

func optPSI(r *psi.Resource) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f %%", r.Some.Avg10)
}

func psiText(r *psi.Resource) string {
	s := fmt.Sprintf("%.2f %.2f %.2f", r.Some.Avg10, r.Some.Avg60, r.Some.Avg300)
	if r.Full != nil {
		s += fmt.Sprintf(" / %.2f %.2f %.2f", r.Full.Avg10, r.Full.Avg60, r.Full.Avg300)
	}
	return s
}

// flag is the short mark of the cgroup's state; the full note follows the table.
func flag(c memstate.Cgroup) string {
	switch {
	case c.NearLimit && c.MostlyCache:
		return "near limit, mostly cache"
	case c.NearLimit:
		return "NEAR LIMIT"
	case c.NearHigh:
		return "at memory.high"
	}
	return ""
}

// oomDetail writes what the kernel's report said about one kill: the
// cause, the allocation that triggered it, and the tasks it weighed.
func oomDetail(b *strings.Builder, k memstate.OOMKill) {
	fmt.Fprintf(b, "\n%s (PID %d): %s.\n", k.Comm, k.PID, k.Cause)
	if t := k.Trigger; t != nil {
		who := t.Comm
		if t.PID > 0 {
			// The kernel prints the task's own ID: a thread's, in a
			// multi-threaded process, which is no row of the task table
			// (its rows are processes).
			who = fmt.Sprintf("%s (PID %d)", t.Comm, t.PID)
			inTable := len(k.Tasks) == 0
			for _, task := range k.Tasks {
				inTable = inTable || task.PID == t.PID
			}
			if !inTable {
				who = fmt.Sprintf("%s (thread ID %d, no process of that PID in the task table)", t.Comm, t.PID)
			}
		}
		fmt.Fprintf(b, "  triggered by %s asking for %d page(s) (order %d, gfp_mask=%s)\n", who, 1<<max(t.Order, 0), t.Order, t.GFPMask)
	}
	if len(k.Tasks) == 0 {
		return
	}
	tasks := append([]memstate.OOMTask(nil), k.Tasks...)
	sort.SliceStable(tasks, func(i, j int) bool { return tasks[i].RSSBytes > tasks[j].RSSBytes })
	const most = 8
	fmt.Fprintf(b, "  %s in the report (pages of %s, %s):\n", english.Count(len(tasks), "task"), memstate.FormatBytes(k.PageSizeBytes), k.PageSizeFrom)
	for i, t := range tasks {
		if i == most {
			fmt.Fprintf(b, "    … %d more\n", len(tasks)-most)
			break
		}
		mark := ""
		if t.Victim {
			mark = " (killed)"
		}
		split := ""
		if t.RSSAnonBytes != nil && t.RSSFileBytes != nil && t.RSSShmemBytes != nil {
			split = fmt.Sprintf(" (anon %s, file %s, shmem %s)", memstate.FormatBytes(*t.RSSAnonBytes), memstate.FormatBytes(*t.RSSFileBytes), memstate.FormatBytes(*t.RSSShmemBytes))
		}
		fmt.Fprintf(b, "    %s %d%s: rss %s%s, swap %s, oom_score_adj %d\n", t.Name, t.PID, mark, memstate.FormatBytes(t.RSSBytes), split, memstate.FormatBytes(t.SwapBytes), t.OOMScoreAdj)
	}
}

// suspectTexts are the sentences of r's suspect PSI.
func suspectTexts(r memstate.Report, loc *time.Location) []string {
	var out []string
	for _, x := range r.SuspectPSI {
		out = append(out, psinote.Sentence(x, "the host", r.Kernel, loc))
	}
	return out
}
