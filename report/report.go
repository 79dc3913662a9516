// Package report renders a [correlate.Result]: the timeline table (one row
// per episode, the columns of the reference case — time (the episode's
// end, as watch stamps an interval), latency, PSI up,
// file LRU down, disk I/O spike, I/O time up, swap up — and the culprit)
// and the verdict (which job, how often, how many spikes it explains, what
// it does and what to do about it), as a terminal table, Markdown, JSON,
// CSV or a self-contained HTML page with charts ([Render]). It also
// compares two results ([RenderCompare]) and writes what `memdiag watch`
// prints while it records: one row per interval ([LiveView]) and the
// end-of-run summary ([WriteSummaryWith]).
//
// Report only formats: it never reads /proc or the clock, and it uses
// colour only when [Options.Color] says so. Machine formats are stable:
// times are RFC 3339 and field names carry their units
// ("latency_ms", "bytes_per_episode", "period_s").
package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/timers"
)

// Formats lists the formats [Render] and [RenderCompare] write. html is
// one self-contained page: charts over the recording's time axis, then
// the report (see [maxBuckets] for its size bound).
var Formats = []format.Format{format.Table, format.Markdown, format.JSON, format.CSV, format.HTML}

// Options change how a result is rendered.
type Options struct {
	// Values puts the measured values in the table's cells next to the
	// marks, and adds the refault, direct reclaim and duration columns
	// (the wide layout).
	Values bool
	// Color allows ANSI colour (decided by the caller: a terminal, no
	// NO_COLOR, no --no-color).
	Color bool
	// Width is the terminal width in columns the table fits, long culprit
	// names wrapping; 0 (not a terminal) keeps full content.
	Width int
	// Traces are the per-interval data the HTML format charts: the
	// recording's (analyze), or before's and after's (compare). Without
	// them the page has no charts.
	Traces []*correlate.Trace
	// scraped: the Result is a host's of `analyze --prometheus`, made
	// from metrics, not from a recording: no advice on how to record.
	scraped bool
}

// Render writes r to w in format f.
func Render(w io.Writer, r correlate.Result, f format.Format, o Options) error {
	switch f {
	case format.Table, "":
		return renderText(w, r, o, false)
	case format.Markdown:
		return renderText(w, r, o, true)
	case format.JSON:
		return renderJSON(w, r)
	case format.CSV:
		return renderCSV(w, r)
	case format.HTML:
		var t *correlate.Trace
		if len(o.Traces) > 0 {
			t = o.Traces[0]
		}
		return renderHTML(w, r, t, o)
	}
	return format.Unsupported(f, Formats)
}

// mark is the sign of a raised signal in the timeline.
const mark = "●"

// timeLayout picks the format of an episode's time everywhere it is
// written (timeline rows aside, see [clockLayout]): seconds when sampling
// is finer than a minute, the date too when the recording spans days.
func timeLayout(r *correlate.Result) string {
	if spansDays(r) {
		return "Jan 2 " + clockLayout(r)
	}
	return clockLayout(r)
}

// clockLayout is [timeLayout] without the date: the timeline's rows
// write the date only on the first row and where the day changes.
func clockLayout(r *correlate.Result) string {
	if r.Interval < time.Minute {
		return "15:04:05"
	}
	return "15:04"
}

// spansDays says whether the recording's start and end fall on different
// days in the report's time zone.
func spansDays(r *correlate.Result) bool {
	s, e := in(r, r.Start), in(r, r.End)
	return s.YearDay() != e.YearDay() || s.Year() != e.Year()
}

// episodeTime is an episode's one time, as its timeline row, its stall
// onset, the JSON's "time" and every sentence about it give it: the end
// of its first interval ([rowTime]), formatted by [timeLayout].
func episodeTime(r *correlate.Result, e *correlate.Episode) string {
	return in(r, rowTime(e)).Format(timeLayout(r))
}

func in(r *correlate.Result, t time.Time) time.Time {
	if r.Location == nil {
		return t.UTC()
	}
	return t.In(r.Location)
}

func pct(share float64) string { return fmt.Sprintf("%.0f%%", 100*share) }

// rate writes a bytes/s value.
func rate(bps float64) string {
	if bps < 0 {
		return "-" + correlate.FormatBytes(uint64(-bps)) + "/s"
	}
	return correlate.FormatBytes(uint64(bps)) + "/s"
}

// signalValue formats a signal's peak in its unit.
func signalValue(s correlate.SignalPeak) string {
	switch s.Signal {
	case correlate.PSISome, correlate.PSIFull:
		return pct(s.Peak)
	case correlate.LRUDrop:
		return rate(-s.Peak)
	case correlate.DiskIO, correlate.SwapOut:
		return rate(s.Peak)
	case correlate.Refault, correlate.DirectReclaim, correlate.LimitReclaim:
		return fmt.Sprintf("%.0f/s", s.Peak)
	case correlate.IOTime:
		return fmt.Sprintf("%.1f s/s", s.Peak)
	}
	return fmt.Sprint(s.Peak)
}

// culpritCell is the CULPRIT column (see [culpritLegend]): the job that
// explains the episode, then its process that did the most of the
// episode's I/O with the bytes it read and wrote ("job: process 7.0
// GiB"); with no job, "no job: " and the process that did the most.
func culpritCell(r *correlate.Result, e *correlate.Episode) string {
	c := culpritByName(r, e.Culprit)
	if c != nil {
		if took := memTaken(c, e); took != "" {
			return e.Culprit + ": " + took
		}
	}
	proc := ""
	if p := cellProc(r, c, e); p != nil {
		proc = p.Comm + " " + correlate.FormatBytes(p.Bytes())
		if p.Reaped {
			// "exited threads or children of sh" says nothing of which sh: its PID, as
			// started_by gives it.
			proc = reapedName(*p) + " " + correlate.FormatBytes(p.Bytes())
		}
		if p.OutsideScope {
			proc += " (outside the cgroup)"
		}
		if isVictim(r, p.PID) {
			proc += " (the victim)"
		}
	}
	switch {
	case e.Culprit != "" && proc != "":
		return e.Culprit + ": " + proc
	case e.Culprit != "":
		return e.Culprit
	case proc != "":
		return "no job: " + proc
	}
	return ""
}

// cellProc is the process a CULPRIT cell names for episode e, whose
// culprit is c (culpritByName of e.Culprit): the culprit's own
// (culpritProc), or, with no culprit or an unknown cause, the episode's
// (episodeProc); nil for none, and for an episode of undecided jobs
// ("a or b", no one culprit).
func cellProc(r *correlate.Result, c *correlate.Culprit, e *correlate.Episode) *correlate.ProcActivity {
	switch {
	case c == nil && e.Culprit != "":
		return nil
	case c == nil:
		return episodeProc(r, e)
	}
	if p := culpritProc(c, e); p != nil || c.Kind != correlate.KindUnknown {
		return p
	}
	return episodeProc(r, e)
}

// culpritProc is culprit c's process that did the most of episode e's
// I/O, nil when none of e's rows is its.
func culpritProc(c *correlate.Culprit, e *correlate.Episode) *correlate.ProcActivity {
	for i := range e.Processes {
		for _, cp := range c.Processes {
			if otherUnit(e.Processes[i], cp) {
				// The same comm in another unit (the victim
				// service's python3) is not the job's process.
				continue
			}
			// A pattern's process (sh) did its I/O through the
			// children it reaped unseen: their row is its. The row is
			// found by its parent's comm, not by its PPID: a job
			// culprit's processes are summed by program (PID 0; its
			// reaped rows are one entry of their own, matched by
			// comm above), and a pattern's culprit carries one
			// representative process, whose PID is the parent of the
			// reaped row in its own episode only — matching by PPID
			// would show another row in every other episode.
			ep := &e.Processes[i]
			if ep.Comm == cp.Comm || ep.Reaped && ep.Comm == correlate.ReapedComm(cp.Comm) {
				return ep
			}
		}
	}
	if c.Kind == correlate.KindProcess {
		return patternChild(c, e)
	}
	return nil
}

// episodeProc is the process named for an episode no culprit, or an
// unknown cause, explains: the first (the most I/O) that can cause the
// group's reclaim under a cgroup scope; one outside it only when none
// can, flagged. The victim, when the culprit model set its reads aside
// as its own pages read back (Result.VictimReads), only when no other
// process did I/O. Nil when the episode has no process.
func episodeProc(r *correlate.Result, e *correlate.Episode) *correlate.ProcActivity {
	readBack := func(q *correlate.ProcActivity) bool { return r.VictimReads != nil && isVictim(r, q.PID) }
	first := func(ok func(q *correlate.ProcActivity) bool) *correlate.ProcActivity {
		for i := range e.Processes {
			if ok(&e.Processes[i]) {
				return &e.Processes[i]
			}
		}
		return nil
	}
	if p := first(func(q *correlate.ProcActivity) bool { return !q.OutsideScope && !readBack(q) }); p != nil {
		return p
	}
	if p := first(func(q *correlate.ProcActivity) bool { return !readBack(q) }); p != nil {
		return p
	}
	if len(e.Processes) > 0 {
		return &e.Processes[0]
	}
	return nil
}

// isVictim says whether pid is the recorded victim's process.
func isVictim(r *correlate.Result, pid int) bool {
	return r.Victim != nil && r.Victim.PID > 0 && pid == r.Victim.PID
}

// patternChild is, for a recurring-process culprit whose own process
// did little of the I/O (a script whose cat and dd did it), the
// episode's process with the most I/O that one of its instances in this
// episode started: a process whose started_by names an instance ("prog
// PID") seen in the episode with the culprit's program. Nil when no
// instance was seen or none of its children did I/O.
func patternChild(c *correlate.Culprit, e *correlate.Episode) *correlate.ProcActivity {
	inst := map[string]bool{}
	for _, list := range [][]correlate.ProcActivity{e.Processes, e.Started, e.Exited} {
		for _, ep := range list {
			for _, cp := range c.Processes {
				if ep.PID != 0 && !ep.Reaped && ep.Program != "" && ep.Program == cp.Program && !otherUnit(ep, cp) {
					inst[ep.Program+" "+strconv.Itoa(ep.PID)] = true
				}
			}
		}
	}
	if len(inst) == 0 {
		return nil
	}
	for i := range e.Processes {
		for _, a := range e.Processes[i].StartedBy {
			if inst[a] && e.Processes[i].Bytes() > 0 {
				return &e.Processes[i]
			}
		}
	}
	return nil
}

// otherUnit says that an episode's process ep ran in another unit than
// the culprit's process cp: both units recorded and different.
func otherUnit(ep, cp correlate.ProcActivity) bool {
	return ep.Unit != "" && cp.Unit != "" && ep.Unit != cp.Unit
}

// memTaken is the cell of an episode its culprit is credited with for
// the memory it took (EpisodeCredit.MemShare above its I/O share): its
// first process and that memory, "batch.py +209.0 MiB memory"; "" when
// the credit is for its I/O.
func memTaken(c *correlate.Culprit, e *correlate.Episode) string {
	if c.Proof == nil {
		return ""
	}
	for _, cr := range c.Proof.Credits {
		if cr.Episode != e.Index || cr.MemShare <= cr.Share || cr.MemBytes == 0 {
			continue
		}
		// MemBytes is the growth of all the job's processes, so all are
		// named (two, then a count): the trial's cron job ran python3
		// and dd, and "dd +359.0 MiB memory" gave python3's memory to dd.
		var names []string
		for i, p := range c.Processes {
			if i == 2 {
				names = append(names, fmt.Sprintf("%d more", len(c.Processes)-2))
				break
			}
			names = append(names, procName(p))
		}
		if len(names) == 0 {
			names = []string{c.Name}
		}
		return strings.Join(names, ", ") + " " + memAmount(cr.MemBytes)
	}
	return ""
}

// memAmount is how memTaken writes the memory taken: "+209.0 MiB memory".
func memAmount(b uint64) string { return "+" + correlate.FormatBytes(b) + " memory" }

// reapedName names the row of the children a process reaped unseen
// (ProcActivity.Reaped) with the parent's PID, as started_by names a
// process: "exited threads or children of sh 4100".
func reapedName(p correlate.ProcActivity) string {
	return fmt.Sprintf("%s %d", p.Comm, p.PPID)
}

// memLegend is added to culpritLegend when a cell shows the memory a
// job took (memTaken); example is such a cell's amount, so the legend
// quotes the report itself.
func memLegend(example string) string {
	return " A job credited for the memory it took (not for its I/O) shows its processes and the memory they took: \"" +
		example + "\" is their resident memory growth in the episode."
}

// culpritLegend says what the CULPRIT column holds.
const culpritLegend = "CULPRIT: the job that explains the episode, then its process that did the most of the episode's disk I/O, with the bytes it read and wrote; \"no job:\" names the process that did the most when no job explains it."

// markLegend says what the marks after a CULPRIT cell's process mean,
// those the table shows ("" for none).
func markLegend(r *correlate.Result) string {
	var outside, victim bool
	for i := range r.Episodes {
		e := &r.Episodes[i]
		c := culpritByName(r, e.Culprit)
		if c != nil && memTaken(c, e) != "" {
			continue // the cell shows the memory taken, no process
		}
		if p := cellProc(r, c, e); p != nil {
			outside = outside || p.OutsideScope
			victim = victim || isVictim(r, p.PID)
		}
	}
	var out string
	if outside {
		out += " \"(outside the cgroup)\": a process outside the analysed group, shown when no process in it did I/O (or only the victim, reading its own pages back)."
	}
	if victim {
		out += " \"(the victim)\": the process whose latency is explained."
	}
	return out
}

func culpritByName(r *correlate.Result, name string) *correlate.Culprit {
	if name == "" {
		return nil
	}
	for i := range r.Culprits {
		if r.Culprits[i].Name == name {
			return &r.Culprits[i]
		}
	}
	return nil
}

// spikesExplained counts the culprit's episodes that had a latency spike.
func spikesExplained(r *correlate.Result, c *correlate.Culprit) int {
	n := 0
	for _, i := range c.Episodes {
		if r.Episodes[i].Spike {
			n++
		}
	}
	return n
}

func spikeEpisodes(r *correlate.Result) int {
	n := 0
	for i := range r.Episodes {
		if r.Episodes[i].Spike {
			n++
		}
	}
	return n
}

func kindName(c *correlate.Culprit) string {
	switch c.Kind {
	case correlate.KindTimer:
		return "systemd timer"
	case correlate.KindCron:
		if c.Job != nil && c.Job.Source != "" && c.Job.Source != "cron" {
			return string(c.Job.Source) + " job"
		}
		return "cron job"
	case correlate.KindProcess:
		return "process"
	}
	return "unknown cause"
}

// advice says what to do about a culprit.
func advice(c *correlate.Culprit) []string {
	if len(c.UndecidedWith) > 0 {
		name := c.Name
		if c.Job != nil && c.Job.Name != "" {
			name = c.Job.Name
		}
		// Nothing more until it is told apart: the fixes below would be
		// advice to a job that may be innocent.
		return []string{
			fmt.Sprintf("tell it from %s first: `sudo memdiag confirm --job %s -- LOAD` runs your load test in turns with it held off and with it back, and says whether the episodes go with it",
				english.List(c.UndecidedWith, "and"), name),
			"or record again with the page-cache chain traced (`--ebpf on`: BTF and CAP_BPF): it shows whose reads took the service's pages",
		}
	}
	if c.Proof != nil {
		if m, ok := memCredit(c.Proof); ok {
			if a := memAdvice(c, m); a != nil {
				return withTryFix(c, a)
			}
		}
	}
	return withTryFix(c, ioAdvice(c))
}

// withTryFix adds to a timer's or cron job's advice the `memdiag
// confirm --with` command that tries a proposed drop-in or crontab line
// before it is deployed (docs/confirm.md). It is text: analyze applies
// nothing.
func withTryFix(c *correlate.Culprit, a []string) []string {
	name := c.Name
	if c.Job != nil && c.Job.Name != "" {
		name = c.Job.Name
	}
	switch c.Kind {
	case correlate.KindTimer:
		return append(a, fmt.Sprintf("try a drop-in before deploying it: put its [Service] or [Timer] section in a file and run `sudo memdiag confirm --job %s --with FILE -- LOAD`; "+
			"B blocks of your load test run with it in place, and the report says whether it removed the effect", name))
	case correlate.KindCron:
		return append(a, fmt.Sprintf("try a changed line before deploying it: put it in a file and run `sudo memdiag confirm --job %s --with FILE -- LOAD`; "+
			"B blocks of your load test run with it in place of the job's, and the report says whether it removed the effect", name))
	}
	return a
}

// memAdvice is the advice for a job or process credited for the memory
// it took rather than its I/O (memCredit): the I/O-priority and
// other-disk lines would not help, so they give way to capping its
// memory. Nil for kinds without such advice.
func memAdvice(c *correlate.Culprit, m memTake) []string {
	why := fmt.Sprintf("it is credited for the memory it took (%s per episode, median resident growth), not for its I/O: "+
		"lowering its I/O priority or moving its data would not help, and reads it did may be swap-in of its own pages", correlate.FormatBytes(m.bytes))
	io := ioAdvice(c) // the confirm and reschedule lines come first
	switch c.Kind {
	case correlate.KindTimer:
		svc := serviceOf(c)
		return []string{io[0], io[1],
			fmt.Sprintf("cap its memory: `systemctl edit %s` with MemoryHigh= (the kernel reclaims the job's own pages above it, not the service's) or make it take less; %s", svc, why)}
	case correlate.KindCron:
		return []string{io[0], "reschedule it out of busy hours",
			fmt.Sprintf("cap its memory: run its command under `systemd-run --scope -p MemoryHigh=…` (or in a cgroup with its own memory.high) or make it take less; %s", why)}
	case correlate.KindProcess:
		unit := "its unit"
		if len(c.Processes) > 0 && c.Processes[0].Unit != "" {
			unit = c.Processes[0].Unit
		}
		return []string{io[0],
			fmt.Sprintf("cap its memory: MemoryHigh= on %s, or a cgroup with its own memory.high, or make it take less; %s", unit, why)}
	}
	return nil
}

// serviceOf is the service unit a timer culprit starts: its job's Unit=,
// else the timer's name with .service.
func serviceOf(c *correlate.Culprit) string {
	if c.Job != nil && c.Job.Unit != "" {
		return c.Job.Unit
	}
	if b, ok := strings.CutSuffix(c.Name, ".timer"); ok {
		return b + ".service"
	}
	return c.Name
}

// ioAdvice is the advice for a culprit credited for its I/O.
func ioAdvice(c *correlate.Culprit) []string {
	switch c.Kind {
	case correlate.KindTimer:
		svc := serviceOf(c)
		return []string{
			fmt.Sprintf("confirm: `systemctl disable --now %s` for one test run; the episodes it explains should disappear", c.Name),
			fmt.Sprintf("reschedule it out of busy hours: `systemctl edit %s` with a new OnCalendar= (an empty OnCalendar= first resets it)", c.Name),
			timerPriorityAdvice(c.Job, svc),
			"or move the data it reads and writes to another disk than the service's",
		}
	case correlate.KindCron:
		where := "its crontab line"
		if c.Job != nil && c.Job.File != "" {
			where = jobFile(c.Job)
		}
		return []string{
			fmt.Sprintf("confirm: comment out %s for one test run; the episodes it explains should disappear", where),
			cronPriorityAdvice(c.Job),
			"or move the data it reads and writes to another disk than the service's",
		}
	case correlate.KindProcess:
		unit := ""
		if len(c.Processes) > 0 && c.Processes[0].Unit != "" {
			unit = " on " + c.Processes[0].Unit
		}
		first := fmt.Sprintf("look for a schedule inside %s (maintenance, vacuum, compaction, snapshot or flush intervals) and move it out of busy hours", c.Name)
		if c.NewEachTime {
			first = fmt.Sprintf("find what starts %s every %s: its parent (the recording's exec events carry the parent PID; `ps -o ppid=,args= -p PID` while it runs), a shell loop, a supervisor or a service's scheduler, and move that out of busy hours",
				c.Name, correlate.FormatDuration(c.Period))
			if len(c.Processes) > 0 && len(c.Processes[0].StartedBy) > 0 {
				first = fmt.Sprintf("%s is %s, every %s: move that loop or schedule out of busy hours",
					c.Name, startedBy(c.Processes[0].StartedBy), correlate.FormatDuration(c.Period))
			}
		}
		return []string{
			first,
			fmt.Sprintf("limit its I/O%s (IOWeight=, %s, or ionice -c3), or move its data to another disk", unit, bandwidthMax(c.Processes)),
		}
	}
	return unknownAdvice(c)
}

// bandwidthMax is the systemd bandwidth limit for what the processes did
// most: IOReadBandwidthMax= for a job that mostly read (a scan, a
// backup's source), IOWriteBandwidthMax= otherwise.
func bandwidthMax(ps []correlate.ProcActivity) string {
	var read, written uint64
	for _, p := range ps {
		read += p.ReadBytes
		written += p.WriteBytes
	}
	if read > written {
		return "IOReadBandwidthMax="
	}
	return "IOWriteBandwidthMax="
}

// idleIONotEnough is why a job already in the idle I/O class can still be
// the culprit: the class orders disk requests, not the page cache.
const idleIONotEnough = "the idle I/O class only puts its disk requests behind others' (where the I/O scheduler honours classes); " +
	"the pages it reads still enter the page cache and evict the service's, which then refault and stall: it does not make a cache-evicting scan harmless"

// timerPriorityAdvice is the I/O-priority line for a timer's service: what
// to set, and not what the unit already sets (Nice=, IOSchedulingClass=
// of job, as written in its unit files).
func timerPriorityAdvice(job *timers.Job, svc string) string {
	var idle, nice bool
	if job != nil {
		cl := strings.ToLower(strings.TrimSpace(job.IOSchedulingClass))
		idle = cl == "idle" || cl == "3"
		nice = strings.TrimSpace(job.Nice) == "19"
	}
	switch {
	case idle:
		set := "IOSchedulingClass=idle"
		if nice {
			set += " and Nice=19"
		}
		return fmt.Sprintf("%s already sets %s, and its episodes remain: %s; cap what it keeps in memory instead: `systemctl edit %s` with MemoryHigh= (above it the kernel reclaims the job's own pages first), or make it read less",
			svc, set, idleIONotEnough, svc)
	case nice:
		return fmt.Sprintf("lower its I/O priority: `systemctl edit %s` with IOSchedulingClass=idle (its Nice=19 lowers only its CPU priority and, in the best-effort class, its level within it), or IOWeight=10, IOReadBandwidthMax= under cgroup v2", svc)
	}
	return fmt.Sprintf("lower its I/O priority: `systemctl edit %s` with IOSchedulingClass=idle, Nice=19 (or IOWeight=10, IOReadBandwidthMax= under cgroup v2)", svc)
}

// cronPriorityAdvice is the reschedule-or-ionice line for a cron job:
// `ionice -c3` is not advised to a command, or to run-parts scripts, that
// already run their work in the idle I/O class (job.IdleIOScripts).
func cronPriorityAdvice(job *timers.Job) string {
	const plain = "reschedule it out of busy hours, or prefix its command with `ionice -c3 nice -n19`"
	if job == nil {
		return plain
	}
	var who string
	var all bool
	if timers.IdleIOCommand(job.Command) {
		who, all = "its command", true
	} else {
		var run, idle []string
		for _, s := range job.Scripts {
			if slices.Contains(job.IdleScripts, s) {
				continue
			}
			run = append(run, s)
			if slices.Contains(job.IdleIOScripts, s) {
				idle = append(idle, "/"+strings.TrimPrefix(s, "/"))
			}
		}
		if len(idle) == 0 {
			return plain
		}
		who, all = english.Count(len(idle), "script")+" ("+strings.Join(idle, ", ")+")", len(idle) == len(run)
		if len(idle) == 1 {
			who = "its script " + idle[0]
		}
	}
	if !all {
		return fmt.Sprintf("%s; %s already runs in the idle I/O class, and %s", plain, who, idleIONotEnough)
	}
	return fmt.Sprintf("reschedule it out of busy hours; %s already runs in the idle I/O class (ionice -c3), and its episodes remain: %s; cap what it keeps in memory instead (run it in a cgroup with its own memory.high, e.g. under `systemd-run --scope -p MemoryHigh=…` where systemd runs), or make it read less",
		who, idleIONotEnough)
}

// unknownAdvice follows what the recording lacked (Culprit.Missing).
func unknownAdvice(c *correlate.Culprit) []string {
	var out []string
	for _, m := range c.Missing {
		switch m {
		case correlate.MissingProcesses:
			out = append(out, "record again as root so per-process I/O and process starts are collected; they name what runs on this schedule")
		case correlate.MissingIOAccess:
			out = append(out, "record again as root (or with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH): most processes' /proc/PID/io was unreadable, so their I/O is missing")
		case correlate.MissingEvents:
			out = append(out, "record again with process events from the kernel (watch --events on, as root): a job that starts and ends between two samples is otherwise missing")
		case correlate.MissingEpisodes:
			n := 2 * c.EpisodesExplained
			out = append(out, fmt.Sprintf("record longer (at least %d recurrences, %s): the recorded processes did the episodes' I/O, but too few episodes to rule out chance",
				n, correlate.FormatDuration(time.Duration(n)*c.Period)))
		case correlate.MissingBusy:
			var busy []string
			for _, p := range c.Programs {
				if p.Unnamed == correlate.UnnamedBusy {
					busy = append(busy, p.Program)
				}
			}
			who := "the recorded processes that did these episodes' I/O"
			if len(busy) > 0 {
				who = strings.Join(busy, ", ") + ", which did these episodes' I/O,"
			}
			out = append(out, fmt.Sprintf("%s did as much between them: that I/O does not set the schedule; look at what else recurs every %s — who holds memory while the episodes last (`memdiag mem`), the cgroup's other tasks, the kernel's own reclaim (kswapd)",
				who, correlate.FormatDuration(c.Period)))
		case correlate.MissingVictimSelf:
			out = append(out, "the I/O of these episodes in the analysed scope was the victim's own reads: what took its memory did no I/O there — look outside the scope (processes \"outside the cgroup\" in the timeline, other groups under the same memory limit), at who holds memory while the episodes last (`memdiag mem`), or record with the traced chain (watch --ebpf on), which tells reading back from causing")
		case correlate.MissingIO:
			out = append(out, "no recorded process did the I/O or took the memory of these episodes: look at who holds memory while they last (`memdiag mem`), at the cgroup's other tasks and at the kernel's own reclaim (kswapd)")
		case correlate.MissingOutsideIO:
			out = append(out, "no recorded process in the analysed scope did the I/O or took the memory of these episodes, but processes outside it did (\"outside the cgroup\" in the timeline): they reach the group only through host-wide reclaim, or through a memory limit the recording cannot place them under (a v1 memory group that does not mirror their v2 group: record with the page-cache chain traced, `--ebpf on`, which places their memory); look too at who holds memory while the episodes last (`memdiag mem`)")
		}
	}
	if len(out) == 0 {
		out = append(out, "no timer, cron job or process explains this schedule")
	}
	return out
}

// startedBy words a recorded ancestor chain (parent first) so that it
// reads one way only: "started by sh, which cron started, which init
// started".
func startedBy(chain []string) string {
	if len(chain) == 0 {
		return ""
	}
	s := "started by " + chain[0]
	for _, a := range chain[1:] {
		s += ", which " + a + " started"
	}
	return s
}
