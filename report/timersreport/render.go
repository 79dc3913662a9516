// Package timersreport renders `memdiag timers`: a periodic-job
// inventory (package timers' Jobs) and the firings of a window, as table,
// markdown, CSV or JSON. Only text: package timers reads and projects,
// callers decide what to list and hand in the writer.
package timersreport

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/tables"
	"github.com/memdiag/memdiag/timers"
)

// Formats lists the formats [RenderJobs] and [RenderFirings] write.
var Formats = []format.Format{format.Table, format.Markdown, format.JSON, format.CSV}

// RenderOptions configures rendering: the list's view (timers.View:
// base time, the zones, whether to say why) and the caller's choices.
type RenderOptions struct {
	timers.View
	Next     int      // how many next firings to show per job (>= 1)
	Width    int      // table: terminal width in columns to fit (long columns wrap or are cut); 0 keeps full content
	Color    bool     // table: bold header (a terminal, no NO_COLOR, no --no-color)
	Problems []string // printed after a table or markdown listing
	// NotListed is how many jobs that do not run here were left out
	// (timers.Listing.NotListed): said under a job table, so that an
	// empty table is not read as "no periodic jobs".
	NotListed int
}

// Write renders l in format f: the jobs with their next o.Next firings,
// or the window's firings. o.View and o.Problems are l's.
func Write(w io.Writer, l *timers.List, f format.Format, o RenderOptions) error {
	o.View, o.Problems, o.NotListed = l.View, Problems(l.Listing), l.NotListed
	if !l.Window {
		return RenderJobs(w, l.Jobs, f, o)
	}
	return RenderFirings(w, l.Firings, l.Jobs, f, o, l.From, l.To)
}

// zoneLabel is a zone's name in a table header: "localtime" for the
// unnamed zone of a copied etc/localtime, whose name is long.
func zoneLabel(l *time.Location) string {
	if l.String() == timers.UnnamedZone {
		return "localtime"
	}
	return l.String()
}

// timeHeader is the header of a time column, "NEXT (UTC)", and a line to
// print under the table instead when, in a table fitted to a terminal
// (o.Width > 0), the zone's name would make the header wider than the
// times under it (cols columns): "NEXT" and "Times are in Europe/Berlin."
// The table fits its columns to the terminal from their content, so a
// header wider than the content would push it past the edge.
func timeHeader(word string, l *time.Location, f format.Format, o RenderOptions, cols int) (header, line string) {
	header = word + " (" + zoneLabel(l) + ")"
	if l.String() == timers.UnnamedZone && f != format.CSV {
		return header, "localtime: the root's copied /etc/localtime, which matches no named zone"
	}
	if f != format.Table || o.Width <= 0 || len(header) <= cols {
		return header, ""
	}
	return word, "Times are in " + l.String() + "."
}

// jobView is one job as rendered.
type jobView struct {
	timers.Job
	Schedule []string `json:"schedule"`
	Next     []string `json:"next"`
	// Never: the schedule cannot match again within 400 years ([Never]).
	Never bool `json:"never,omitempty"`
	// RandomizedDelayS is RandomizedDelaySec= (anacron: RANDOM_DELAY and
	// the trigger's) in seconds; Unpredictable says it is at least half
	// the period ([Unpredictable]), so NEXT says little about when the
	// job starts.
	RandomizedDelayS float64 `json:"randomized_delay_s,omitempty"`
	Unpredictable    bool    `json:"unpredictable,omitempty"`
	// CatchUp is the run systemd owes a Persistent=true timer that is not
	// running now ([timers.CatchUp]): it starts as soon as the timer
	// does, not at NEXT.
	CatchUp *catchUpView `json:"catch_up,omitempty"`
	Errors  []string     `json:"errors"`
}

// catchUpView is [timers.CatchUp] in the listing's zone: the elapse
// missed and the last trigger before it.
type catchUpView struct {
	Missed      time.Time `json:"missed"`
	LastTrigger time.Time `json:"last_trigger"`
}

// catchUpNote is the NOTE words of the run v's timer is owed: when
// systemd starts it (at boot when the boot pulls the timer in, plus up
// to RandomizedDelaySec=, which applies to the run owed too:
// systemd.timer(5), Persistent=).
func catchUpNote(v jobView) string {
	when := "runs when the timer is next started (nothing pulls it in at boot)"
	if v.Active {
		when = "runs at boot"
	}
	if v.RandomizedDelaySec > 0 {
		when += ", plus up to RandomizedDelaySec=" + timers.FormatPeriod(v.RandomizedDelaySec)
	}
	return fmt.Sprintf("Persistent=true: missed %s (last run %s): %s",
		v.CatchUp.Missed.Format(shownTime), v.CatchUp.LastTrigger.Format(shownTime), when)
}

// catchUpNext is the first item of the NEXT cell of a timer owed a run,
// with [catchUpMark].
func catchUpNext(v jobView) string {
	if v.Active {
		return "at boot" + catchUpMark
	}
	return "on start" + catchUpMark
}

// catchUpMark marks the run owed in NEXT; catchUpLegend explains it.
const (
	catchUpMark   = "!"
	catchUpLegend = "! missed a run since LAST (Persistent=true): runs when the timer starts (NOTE)"
)

// unpredictableMark marks the times of an [Unpredictable] job in tables;
// unpredictableLegend explains it under them.
const (
	unpredictableMark   = "~"
	unpredictableLegend = "~ unpredictable: random delay (RandomizedDelaySec=) of half the period or more"
)

// markTime marks a table time "2026-11-29 18:00" as "2026-11-29~18:00":
// the mark takes the place of the space, so the column keeps its width.
func markTime(s, mark string) string {
	if mark == "" {
		return s
	}
	return strings.Replace(s, " ", mark, 1)
}

// jobUnpredictable applies [Unpredictable] to a job: its period is
// PeriodSeconds, else the median gap between its next firings after base
// (as correlate measures an irregular job's period).
func jobUnpredictable(j timers.Job, base time.Time, loc *time.Location) bool {
	if j.RandomizedDelaySec <= 0 {
		return false
	}
	var period time.Duration
	if j.PeriodSeconds != nil {
		period = time.Duration(*j.PeriodSeconds * float64(time.Second))
	} else if fs := timers.Next(j, base, 5, loc); len(fs) >= 2 {
		gaps := make([]time.Duration, 0, len(fs)-1)
		for i := 1; i < len(fs); i++ {
			gaps = append(gaps, fs[i].Planned.Sub(fs[i-1].Planned))
		}
		slices.Sort(gaps)
		period = gaps[len(gaps)/2]
	}
	return timers.Unpredictable(j.RandomizedDelaySec, period)
}

// scheduleString is the SCHEDULE column: each expression as written, and
// for OnCalendar= its normalized form when it differs ("*:00/10 → *-*-* *:00/10:00").
func scheduleString(j timers.Job) []string {
	var out []string
	for i, s := range j.Schedule {
		if i < len(j.Normalized) && j.Normalized[i] != s {
			s += " → " + j.Normalized[i]
		}
		out = append(out, s)
	}
	if j.Source == timers.Systemd && j.OnBootSec > 0 && len(j.Normalized) > 0 {
		out = append(out, "OnBootSec="+timers.FormatPeriod(j.OnBootSec))
	}
	if j.Source == timers.Anacron {
		extra := ""
		if j.Delay > 0 {
			extra += fmt.Sprintf(" delay %s", timers.FormatPeriod(j.Delay))
		}
		for _, t := range j.Trigger {
			extra += " when " + t + " fires"
		}
		if len(out) > 0 {
			out[0] = "period " + out[0] + extra
		}
	}
	return out
}

// whyString says whether a job runs, from [Runs]: why not (the reason
// analyze's "Not named" gives too), or the chain of units that pulls it
// in. Where the live host overrides the files, what the files say
// follows.
func whyString(j timers.Job) string {
	runs, why := timers.Runs(&j)
	switch {
	case !runs && j.Active:
		return "no: " + why + "; its files: " + strings.TrimPrefix(activeChain(j), "yes: ")
	case !runs && why != strings.TrimSuffix(j.Reason, ".") && j.Reason != "":
		return "no: " + why + "; its files: " + j.Reason
	case !runs:
		return "no: " + why
	case !j.Active:
		return "yes: " + why + "; its files: " + j.Reason
	}
	return activeChain(j)
}

// activeChain is "yes: " and the chain of units that pulls an active job
// in, with its conditions.
func activeChain(j timers.Job) string {
	names := make([]string, len(j.ActiveVia))
	for i, v := range j.ActiveVia {
		names[i] = v
		if n, _, ok := strings.Cut(v, " ("); ok && i < len(j.ActiveVia)-1 {
			names[i] = n
		}
	}
	why := "yes: " + strings.Join(names, " → ")
	if len(j.Conditions) > 0 {
		why += "; " + strings.Join(j.Conditions, "; ")
	}
	return why
}

func views(jobs []timers.Job, o RenderOptions) []jobView {
	out := make([]jobView, 0, len(jobs))
	for _, j := range jobs {
		v := jobView{Job: j, Schedule: j.Schedule, Errors: j.Errors, Next: []string{}}
		if v.Schedule == nil {
			v.Schedule = []string{}
		}
		if v.Errors == nil {
			v.Errors = []string{}
		}
		for _, f := range timers.Next(j, o.Base, max(o.Next, 1), o.RunZone()) {
			v.Next = append(v.Next, f.Planned.In(o.Loc).Format(time.RFC3339))
		}
		v.Never = len(v.Next) == 0 && timers.Never(j, o.Base, o.RunZone())
		v.RandomizedDelayS = j.RandomizedDelaySec.Seconds()
		v.Unpredictable = jobUnpredictable(j, o.Base, o.RunZone())
		// Live state is shown in the listing's zone, like every other time.
		if j.LastTrigger != nil {
			t := j.LastTrigger.In(o.Loc)
			v.LastTrigger = &t
		}
		if j.NextElapse != nil {
			t := j.NextElapse.In(o.Loc)
			v.NextElapse = &t
		}
		// A timer systemd runs now has been given its run already.
		if e, ok := timers.CatchUp(j, o.Base, o.RunZone()); ok && (j.LiveActive == nil || !*j.LiveActive) {
			v.CatchUp = &catchUpView{Missed: e.In(o.Loc), LastTrigger: j.LastTrigger.In(o.Loc)}
		}
		out = append(out, v)
	}
	return out
}

// shownTime is a firing in the table; shownTimeSeconds for jobs that
// fire more often than once a minute.
const (
	shownTime        = "2006-01-02 15:04"
	shownTimeSeconds = "2006-01-02 15:04:05"
)

// RenderJobs writes the per-job listing: JSON as one document, else a
// table of one row per job ([jobColumns] says which columns), then the
// legend and o.Problems.
func RenderJobs(w io.Writer, jobs []timers.Job, f format.Format, o RenderOptions) error {
	if o.Loc == nil {
		o.Loc = time.UTC
	}
	vs := views(jobs, o)
	if f == format.JSON {
		return writeJobsJSON(w, vs, o)
	}
	c := newJobColumns(vs, o)
	nextHeader, zoneLine := timeHeader("NEXT", o.Loc, f, o, len(shownTime))
	t := c.table(nextHeader)
	for _, v := range vs {
		t.AppendRow(c.row(v, f, o)...)
	}
	legend := jobsLegend(vs, zoneLine)
	if o.NotListed > 0 {
		legend = append(legend, notListedLines(o.NotListed, len(vs))...)
	}
	return renderTable(w, t, f, o, legend)
}

// notListedLines say that n jobs that do not run here are left out of a
// listing that shows shown jobs, and how to see them; each fits 80
// columns.
func notListedLines(n, shown int) []string {
	var out []string
	if shown == 0 {
		out = append(out, "No periodic job runs here.")
	}
	that, them := "that do not run here", "them"
	if n == 1 {
		that, them = "that does not run here", "it"
	}
	return append(out, fmt.Sprintf("Not listed: %s %s (--all lists %s, with why).", english.Count(n, "periodic job"), that, them))
}

// writeJobsJSON writes the listing as one indented JSON document: the
// base time and zone, the jobs and the problems.
func writeJobsJSON(w io.Writer, vs []jobView, o RenderOptions) error {
	doc := struct {
		BaseTime string    `json:"base_time"`
		TimeZone string    `json:"time_zone"`
		Jobs     []jobView `json:"jobs"`
		Problems []string  `json:"problems"`
		// NotListed: jobs that do not run here, left out without --all.
		NotListed int `json:"not_listed,omitempty"`
	}{o.Base.In(o.Loc).Format(time.RFC3339), o.Loc.String(), vs, append([]string{}, o.Problems...), o.NotListed}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// jobsLegend is the lines under the job table: the zone line of
// [timeHeader] (if any), then the meaning of [unpredictableMark] when a
// job carries it.
func jobsLegend(vs []jobView, zoneLine string) []string {
	var legend []string
	if zoneLine != "" {
		legend = append(legend, zoneLine)
	}
	if slices.ContainsFunc(vs, func(v jobView) bool { return v.Unpredictable }) {
		legend = append(legend, unpredictableLegend)
	}
	if slices.ContainsFunc(vs, func(v jobView) bool { return v.CatchUp != nil }) {
		legend = append(legend, catchUpLegend)
	}
	return legend
}

// jobColumns is the layout of the job table: NAME, SOURCE, SCHEDULE,
// PERIOD and NEXT, then LAST when live state was read, COMMAND, NOTE,
// and ACTIVE under --all.
type jobColumns struct {
	last bool // LAST: the manager's last trigger was read for some job
	why  bool // ACTIVE: why each job runs or not (o.ShowWhy)
	cmd  int  // index of COMMAND; NOTE follows it, then ACTIVE
}

// newJobColumns picks the job table's columns for vs.
func newJobColumns(vs []jobView, o RenderOptions) jobColumns {
	c := jobColumns{why: o.ShowWhy, cmd: 5}
	c.last = slices.ContainsFunc(vs, func(v jobView) bool { return v.LastTrigger != nil })
	if c.last {
		c.cmd++
	}
	return c
}

// table is an empty job table with its header (nextHeader over NEXT),
// the column-fit rules and the hide order.
//
// On a terminal the name, the command line and the note are cut to fit
// (piped output, markdown, CSV and JSON have them whole); a long
// schedule and the ACTIVE reasons wrap. Widths are terminal columns.
func (c jobColumns) table(nextHeader string) *tables.Table {
	header := []any{"NAME", "SOURCE", "SCHEDULE", "PERIOD", nextHeader}
	if c.last {
		header = append(header, "LAST")
	}
	header = append(header, "COMMAND", "NOTE")
	if c.why {
		header = append(header, "ACTIVE")
	}
	t := tables.New(header...).SetFit(0, tables.Truncate, 20).SetFit(2, tables.Wrap, 16).SetFit(c.cmd, tables.Truncate, 14).
		SetFit(c.cmd+1, tables.Truncate, 16).SetFit(c.cmd+2, tables.Wrap, 30)
	return t.HideWhenNarrow(c.hideOrder()...)
}

// hideOrder is the order a terminal still too narrow hides columns in:
// the note, the reasons, the source, LAST and the period. The name, its
// schedule, NEXT and the command stay; those four fit 80 columns even
// when NEXT carries seconds (a timer of under a minute, 19 columns): the
// command's floor is 14.
func (c jobColumns) hideOrder() []int {
	hide := []int{c.cmd + 1}
	if c.why {
		hide = append(hide, c.cmd+2)
	}
	hide = append(hide, 1)
	if c.last {
		hide = append(hide, c.cmd-1)
	}
	return append(hide, 3)
}

// row is the table row of one job, its cells in the order of
// [jobColumns.table].
func (c jobColumns) row(v jobView, f format.Format, o RenderOptions) []any {
	cmd, note := commandNoteCells(v)
	sched := scheduleString(v.Job)
	if f == format.Markdown {
		// Cron and calendar expressions are full of '*'.
		for i := range sched {
			sched[i] = "`" + sched[i] + "`"
		}
		if cmd != "" {
			cmd = "`" + cmd + "`"
		}
	}
	row := []any{v.Name, string(v.Source), joinCell(sched, f), timers.PeriodString(v.Job), joinCell(nextCell(v, f, o), f)}
	if c.last {
		row = append(row, lastCell(v, f))
	}
	row = append(row, cmd, note)
	if c.why {
		row = append(row, whyString(v.Job))
	}
	return row
}

// joinCell joins a cell's items: one a line in a table, "; " elsewhere.
func joinCell(ss []string, f format.Format) string {
	if f == format.Table {
		return strings.Join(ss, "\n")
	}
	return strings.Join(ss, "; ")
}

// nextCell is the NEXT cell's items: "never" for a calendar that cannot
// match; else each next firing in o.Loc, in a table as "2026-11-29
// 18:00" (with seconds for a period under 60 s), in CSV as RFC 3339,
// in markdown as RFC 3339 after the mark. An [Unpredictable] job's times
// carry [unpredictableMark], except in CSV.
func nextCell(v jobView, f format.Format, o RenderOptions) []string {
	if v.Never {
		return []string{"never"}
	}
	if f == format.CSV {
		return v.Next
	}
	if v.CatchUp != nil {
		// The run owed comes first: a narrow terminal keeps NEXT, not NOTE.
		rest := v
		rest.CatchUp = nil
		return append([]string{catchUpNext(v)}, nextCell(rest, f, o)...)
	}
	mark := ""
	if v.Unpredictable {
		mark = unpredictableMark
	}
	var next []string
	if f != format.Table {
		if f == format.Markdown && mark != "" {
			mark = `\` + mark // a "~" pair is strikethrough in GitHub markdown
		}
		for _, n := range v.Next {
			next = append(next, mark+n)
		}
		return next
	}
	layout := shownTime
	if p := v.Job.PeriodSeconds; p != nil && *p < 60 {
		// A 20 s timer's next three firings would read 22:33, 22:33,
		// 22:34 at minute resolution.
		layout = shownTimeSeconds
	}
	for _, n := range v.Next {
		tt, _ := time.Parse(time.RFC3339, n)
		next = append(next, markTime(tt.In(o.Loc).Format(layout), mark))
	}
	return next
}

// commandNoteCells is the COMMAND cell (the command, then the run-parts
// scripts in brackets) and the NOTE cell: what happens now on the live
// host first, because a terminal cuts the note, then the known job's
// note and any parse errors.
func commandNoteCells(v jobView) (cmd, note string) {
	cmd, note = v.Command, v.Note
	if len(v.Scripts) > 0 {
		cmd += " [" + strings.Join(v.Scripts, " ") + "]"
	}
	if len(v.Errors) > 0 {
		note = strings.TrimSpace(note + " ERROR: " + strings.Join(v.Errors, "; "))
	}
	if v.CatchUp != nil {
		note = strings.TrimSuffix(catchUpNote(v)+"; "+note, "; ")
	}
	if v.LiveNote != "" {
		note = strings.TrimSuffix(v.LiveNote+"; "+note, "; ")
	}
	return cmd, note
}

// lastCell is the LAST cell: the manager's last trigger in o.Loc (views
// moved it there), "2026-11-29 18:00" in a table, RFC 3339 elsewhere;
// "" when the manager never triggered the timer.
func lastCell(v jobView, f format.Format) string {
	if v.LastTrigger == nil {
		return ""
	}
	if f == format.Table {
		return v.LastTrigger.Format(shownTime)
	}
	return v.LastTrigger.Format(time.RFC3339)
}

// RenderFirings writes firings, one row each, sorted as given: JSON as
// one document, else a line on the firings the live host will not run
// ([idleFiringsLine], not in CSV), the table, its legend and o.Problems.
// from and to bound the window the firings were projected over.
func RenderFirings(w io.Writer, fs []timers.Firing, jobs []timers.Job, f format.Format, o RenderOptions, from, to time.Time) error {
	if o.Loc == nil {
		o.Loc = time.UTC
	}
	byName := map[string]timers.Job{}
	for _, j := range jobs {
		byName[j.Name] = j
	}
	unpred := unpredictableOnce(from, o.RunZone())
	if f == format.JSON {
		return writeFiringsJSON(w, fs, byName, unpred, o, from, to)
	}
	timeHead, zoneLine := timeHeader("TIME", o.Loc, f, o, len(shownTimeSeconds))
	var legend []string
	if zoneLine != "" {
		legend = append(legend, zoneLine)
	}
	t := firingsTable(timeHead)
	unpredictableSeen := false
	for _, x := range fs {
		j := byName[x.Job]
		u := unpred(j)
		t.AppendRow(firingRow(x, j, u, f, o)...)
		if u && f != format.CSV && !unpredictableSeen {
			legend = append(legend, unpredictableLegend)
			unpredictableSeen = true
		}
	}
	if err := writeIdleFiringsLine(w, fs, byName, f); err != nil {
		return err
	}
	return renderTable(w, t, f, o, legend)
}

// unpredictableOnce returns [jobUnpredictable] from base in loc,
// computed once per job name.
func unpredictableOnce(base time.Time, loc *time.Location) func(timers.Job) bool {
	seen := map[string]bool{}
	return func(j timers.Job) bool {
		u, ok := seen[j.Name]
		if !ok {
			u = jobUnpredictable(j, base, loc)
			seen[j.Name] = u
		}
		return u
	}
}

// firingView is one firing in JSON, with what its job adds.
type firingView struct {
	timers.Firing
	Source  timers.Source `json:"source"`
	Command string        `json:"command"`
	// IdleNow: the files project this firing, but the live host
	// cannot run it now (timers.Job.IdleNow); LiveNote says why.
	IdleNow  bool   `json:"idle_now,omitempty"`
	LiveNote string `json:"live_note,omitempty"`
	// Unpredictable: the job's random delay is half its period
	// or more; the firing may start anywhere up to Latest.
	Unpredictable bool `json:"unpredictable,omitempty"`
}

// writeFiringsJSON writes the firings as one indented JSON document: the
// window from–to and the zone, the firings with their times in o.Loc,
// and the problems.
func writeFiringsJSON(w io.Writer, fs []timers.Firing, byName map[string]timers.Job, unpred func(timers.Job) bool, o RenderOptions, from, to time.Time) error {
	out := []firingView{}
	for _, x := range fs {
		x.Planned, x.Earliest, x.Latest = x.Planned.In(o.Loc), x.Earliest.In(o.Loc), x.Latest.In(o.Loc)
		j := byName[x.Job]
		out = append(out, firingView{x, j.Source, j.Command, j.IdleNow, j.LiveNote, unpred(j)})
	}
	doc := struct {
		From     string       `json:"from"`
		To       string       `json:"to"`
		TimeZone string       `json:"time_zone"`
		Firings  []firingView `json:"firings"`
		Problems []string     `json:"problems"`
	}{from.In(o.Loc).Format(time.RFC3339), to.In(o.Loc).Format(time.RFC3339), o.Loc.String(), out, append([]string{}, o.Problems...)}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// firingsTable is an empty firing table with its header (timeHead over
// TIME), the column-fit rules and the hide order. On a terminal the
// name, the command and the note are cut to fit (widths in terminal
// columns); one still too narrow hides the note, the source and the
// window, in that order.
func firingsTable(timeHead string) *tables.Table {
	return tables.New(timeHead, "NAME", "SOURCE", "WINDOW", "COMMAND", "NOTE").
		SetFit(1, tables.Truncate, 20).SetFit(4, tables.Truncate, 16).SetFit(5, tables.Truncate, 16).
		HideWhenNarrow(5, 2, 3)
}

// firingRow is the table row of firing x of job j: TIME, NAME, SOURCE,
// WINDOW, COMMAND and NOTE. In a table the planned time reads
// "2026-11-29 18:00:05" and the window "18:00:05–18:01:05", both in
// o.Loc; elsewhere they are RFC 3339, the window "earliest/latest". The
// time of an unpredictable job (u) carries [unpredictableMark], except in
// CSV. The note has what happens now first, as in [RenderJobs].
func firingRow(x timers.Firing, j timers.Job, u bool, f format.Format, o RenderOptions) []any {
	win := x.Earliest.In(o.Loc).Format("15:04:05") + "–" + x.Latest.In(o.Loc).Format("15:04:05")
	when := x.Planned.In(o.Loc).Format(shownTimeSeconds)
	if f != format.Table {
		when = x.Planned.In(o.Loc).Format(time.RFC3339)
		win = x.Earliest.In(o.Loc).Format(time.RFC3339) + "/" + x.Latest.In(o.Loc).Format(time.RFC3339)
	}
	if u && f != format.CSV {
		switch f {
		case format.Markdown:
			when = `\` + unpredictableMark + when
		default:
			when = markTime(when, unpredictableMark)
		}
	}
	note := j.Note
	if j.LiveNote != "" {
		note = strings.TrimSuffix(j.LiveNote+"; "+note, "; ")
	}
	return []any{when, x.Job, string(j.Source), win, j.Command, note}
}

// writeIdleFiringsLine writes [idleFiringsLine] and a blank line above
// the table (as a quote in markdown); nothing in CSV or when every
// firing can happen.
func writeIdleFiringsLine(w io.Writer, fs []timers.Firing, byName map[string]timers.Job, f format.Format) error {
	if f == format.CSV {
		return nil
	}
	head := idleFiringsLine(fs, byName)
	if head == "" {
		return nil
	}
	if f == format.Markdown {
		head = "> " + head
	}
	_, err := io.WriteString(w, head+"\n\n")
	return err
}

// idleFiringsLine says, above a list of projected firings, how many of them
// cannot happen on the live host now and why (timers.Job.LiveNote of the idle
// jobs, each reason once), so that a projection from the files is not
// read as what will run; "" when every firing can happen. It stands apart
// from the NOTE column, which a narrow terminal drops.
func idleFiringsLine(fs []timers.Firing, byName map[string]timers.Job) string {
	idle := 0
	var reasons []string
	seen := map[string]int{}
	for _, x := range fs {
		j := byName[x.Job]
		if !j.IdleNow {
			continue
		}
		idle++
		if _, ok := seen[j.LiveNote]; !ok {
			seen[j.LiveNote] = len(reasons)
			reasons = append(reasons, "")
		}
		reasons[seen[j.LiveNote]] = j.LiveNote
	}
	if idle == 0 {
		return ""
	}
	var b strings.Builder
	if idle == len(fs) {
		fmt.Fprintf(&b, "None of these %d firings will happen on this host now (projected from the files):", idle)
	} else {
		fmt.Fprintf(&b, "%d of these %d firings will not happen on this host now (projected from the files; NOTE says which):", idle, len(fs))
	}
	for i, r := range reasons {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" " + r)
	}
	b.WriteString(".")
	return b.String()
}

// renderTable writes t, the legend lines (not in CSV) and o.Problems.
func renderTable(w io.Writer, t *tables.Table, f format.Format, o RenderOptions, legend []string) error {
	problems := o.Problems
	var s string
	switch f {
	case format.Table:
		s = t.Text(tables.Options{Width: o.Width, Color: o.Color})
	case format.Markdown:
		s = t.Markdown()
	case format.CSV:
		s = t.CSV()
	default:
		return format.Unsupported(f, Formats)
	}
	if _, err := io.WriteString(w, s+"\n"); err != nil {
		return err
	}
	if f != format.CSV {
		for _, l := range legend {
			if f == format.Markdown {
				l = "\n" + strings.ReplaceAll(l, "~", `\~`)
			}
			fmt.Fprintln(w, l)
		}
	}
	if len(problems) > 0 && f != format.CSV {
		fmt.Fprintf(w, "\nProblems (%d):\n", len(problems))
		for _, p := range problems {
			if f == format.Markdown {
				fmt.Fprintf(w, "- `%s`\n", p)
			} else {
				fmt.Fprintf(w, "  %s\n", p)
			}
		}
	}
	return nil
}
