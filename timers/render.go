package timers

// Rendering of an inventory and of firings as table, markdown, CSV or
// JSON. Only text: callers decide what to list and hand in the writer.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/tables"
)

// Format is an output format of [RenderJobs] and [RenderFirings]:
// memdiag's one [format.Format].
type Format = format.Format

// Output formats.
const (
	FormatTable    = format.Table
	FormatJSON     = format.JSON
	FormatCSV      = format.CSV
	FormatMarkdown = format.Markdown
)

// Formats lists the accepted formats, for flag help.
var Formats = []Format{FormatTable, FormatMarkdown, FormatJSON, FormatCSV}

// RenderOptions configures rendering.
type RenderOptions struct {
	Base     time.Time      // next firings are computed after this time
	Next     int            // how many next firings to show per job (>= 1)
	Loc      *time.Location // zone the times are shown and computed in
	ShowWhy  bool           // add the ACTIVE column (why each job is active or not)
	Width    int            // table: terminal width in columns to fit (long columns wrap or are cut); 0 keeps full content
	Color    bool           // table: bold header (a terminal, no NO_COLOR, no --no-color)
	Problems []string       // printed after a table or markdown listing
}

// jobView is one job as rendered.
type jobView struct {
	Job
	Schedule []string `json:"schedule"`
	Next     []string `json:"next"`
	Errors   []string `json:"errors"`
}

// PeriodString is the PERIOD column: "30m", "1d", or "irregular".
func PeriodString(j Job) string {
	if j.PeriodSeconds == nil {
		return "irregular"
	}
	return FormatPeriod(time.Duration(*j.PeriodSeconds * float64(time.Second)))
}

// ScheduleString is the SCHEDULE column: each expression as written, and
// for OnCalendar= its normalized form when it differs ("*:00/10 → *-*-* *:00/10:00").
func ScheduleString(j Job) []string {
	var out []string
	for i, s := range j.Schedule {
		if i < len(j.Normalized) && j.Normalized[i] != s {
			s += " → " + j.Normalized[i]
		}
		out = append(out, s)
	}
	if j.Source == Systemd && j.OnBootSec > 0 && len(j.Normalized) > 0 {
		out = append(out, "OnBootSec="+FormatPeriod(j.OnBootSec))
	}
	if j.Source == Anacron {
		extra := ""
		if j.Delay > 0 {
			extra += fmt.Sprintf(" delay %s", FormatPeriod(j.Delay))
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

// WhyString says why a job is active (the chain of units, and how the
// last one is pulled in) or inactive (the reason).
func WhyString(j Job) string {
	if !j.Active {
		return "no: " + j.Reason
	}
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

func views(jobs []Job, o RenderOptions) []jobView {
	out := make([]jobView, 0, len(jobs))
	for _, j := range jobs {
		v := jobView{Job: j, Schedule: j.Schedule, Errors: j.Errors, Next: []string{}}
		if v.Schedule == nil {
			v.Schedule = []string{}
		}
		if v.Errors == nil {
			v.Errors = []string{}
		}
		for _, f := range Next(j, o.Base, max(o.Next, 1), o.Loc) {
			v.Next = append(v.Next, f.Planned.In(o.Loc).Format(time.RFC3339))
		}
		// Live state is shown in the listing's zone, like every other time.
		if j.LastTrigger != nil {
			t := j.LastTrigger.In(o.Loc)
			v.LastTrigger = &t
		}
		if j.NextElapse != nil {
			t := j.NextElapse.In(o.Loc)
			v.NextElapse = &t
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

// RenderJobs writes the per-job listing.
func RenderJobs(w io.Writer, jobs []Job, f Format, o RenderOptions) error {
	if o.Loc == nil {
		o.Loc = time.UTC
	}
	vs := views(jobs, o)
	if f == FormatJSON {
		doc := struct {
			BaseTime string    `json:"base_time"`
			TimeZone string    `json:"time_zone"`
			Jobs     []jobView `json:"jobs"`
			Problems []string  `json:"problems"`
		}{o.Base.In(o.Loc).Format(time.RFC3339), o.Loc.String(), vs, append([]string{}, o.Problems...)}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	// LAST, the manager's last trigger, is there when live state was read.
	showLast := false
	for _, v := range vs {
		showLast = showLast || v.LastTrigger != nil
	}
	header := []any{"NAME", "SOURCE", "SCHEDULE", "PERIOD", "NEXT (" + o.Loc.String() + ")"}
	if showLast {
		header = append(header, "LAST")
	}
	cmdCol := len(header)
	header = append(header, "COMMAND", "NOTE")
	if o.ShowWhy {
		header = append(header, "ACTIVE")
	}
	// On a terminal the command line and the note are cut to fit (piped
	// output, markdown, CSV and JSON have them whole); a long schedule
	// and the ACTIVE reasons wrap.
	// A terminal still too narrow hides the note, the reasons, the
	// source, LAST and the period, in that order (the name, its schedule,
	// NEXT and the command stay).
	t := tables.New(header...).SetFit(0, tables.Truncate, 20).SetFit(2, tables.Wrap, 16).SetFit(cmdCol, tables.Truncate, 16).
		SetFit(cmdCol+1, tables.Truncate, 16).SetFit(cmdCol+2, tables.Wrap, 30)
	hide := []int{cmdCol + 1}
	if o.ShowWhy {
		hide = append(hide, cmdCol+2)
	}
	hide = append(hide, 1)
	if showLast {
		hide = append(hide, cmdCol-1)
	}
	t.HideWhenNarrow(append(hide, 3)...)
	multi := f == FormatTable
	join := func(ss []string) string {
		if multi {
			return strings.Join(ss, "\n")
		}
		return strings.Join(ss, "; ")
	}
	for _, v := range vs {
		var next []string
		layout := shownTime
		if p := v.Job.PeriodSeconds; p != nil && *p < 60 {
			// A 20 s timer's next three firings would read 22:33, 22:33,
			// 22:34 at minute resolution.
			layout = shownTimeSeconds
		}
		for _, n := range v.Next {
			tt, _ := time.Parse(time.RFC3339, n)
			next = append(next, tt.In(o.Loc).Format(layout))
		}
		if f != FormatTable {
			next = v.Next
		}
		cmd, note := v.Command, v.Note
		if len(v.Scripts) > 0 {
			cmd += " [" + strings.Join(v.Scripts, " ") + "]"
		}
		if len(v.Errors) > 0 {
			note = strings.TrimSpace(note + " ERROR: " + strings.Join(v.Errors, "; "))
		}
		if v.LiveNote != "" { // what happens now comes first: the note column is cut on a terminal
			note = strings.TrimSuffix(v.LiveNote+"; "+note, "; ")
		}
		sched := ScheduleString(v.Job)
		if f == FormatMarkdown {
			// Cron and calendar expressions are full of '*'.
			for i := range sched {
				sched[i] = "`" + sched[i] + "`"
			}
			if cmd != "" {
				cmd = "`" + cmd + "`"
			}
		}
		row := []any{v.Name, string(v.Source), join(sched), PeriodString(v.Job), join(next)}
		if showLast {
			last := ""
			if v.LastTrigger != nil {
				last = v.LastTrigger.Format(time.RFC3339)
				if f == FormatTable {
					last = v.LastTrigger.Format(shownTime)
				}
			}
			row = append(row, last)
		}
		row = append(row, cmd, note)
		if o.ShowWhy {
			row = append(row, WhyString(v.Job))
		}
		t.AppendRow(row...)
	}
	return renderTable(w, t, f, o)
}

// RenderFirings writes firings, one row each, sorted as given.
func RenderFirings(w io.Writer, fs []Firing, jobs []Job, f Format, o RenderOptions, from, to time.Time) error {
	if o.Loc == nil {
		o.Loc = time.UTC
	}
	byName := map[string]Job{}
	for _, j := range jobs {
		byName[j.Name] = j
	}
	if f == FormatJSON {
		type firingView struct {
			Firing
			Source  Source `json:"source"`
			Command string `json:"command"`
		}
		out := []firingView{}
		for _, x := range fs {
			x.Planned, x.Earliest, x.Latest = x.Planned.In(o.Loc), x.Earliest.In(o.Loc), x.Latest.In(o.Loc)
			out = append(out, firingView{x, byName[x.Job].Source, byName[x.Job].Command})
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
	t := tables.New("TIME ("+o.Loc.String()+")", "NAME", "SOURCE", "WINDOW", "COMMAND", "NOTE").
		SetFit(1, tables.Truncate, 20).SetFit(4, tables.Truncate, 16).SetFit(5, tables.Truncate, 16).
		HideWhenNarrow(5, 2, 3)
	for _, x := range fs {
		j := byName[x.Job]
		tf := "2006-01-02 15:04:05"
		win := x.Earliest.In(o.Loc).Format("15:04:05") + "–" + x.Latest.In(o.Loc).Format("15:04:05")
		when := x.Planned.In(o.Loc).Format(tf)
		if f != FormatTable {
			when = x.Planned.In(o.Loc).Format(time.RFC3339)
			win = x.Earliest.In(o.Loc).Format(time.RFC3339) + "/" + x.Latest.In(o.Loc).Format(time.RFC3339)
		}
		t.AppendRow(when, x.Job, string(j.Source), win, j.Command, j.Note)
	}
	return renderTable(w, t, f, o)
}

func renderTable(w io.Writer, t *tables.Table, f Format, o RenderOptions) error {
	problems := o.Problems
	var s string
	switch f {
	case FormatTable:
		s = t.Text(tables.Options{Width: o.Width, Color: o.Color})
	case FormatMarkdown:
		s = t.Markdown()
	case FormatCSV:
		s = t.CSV()
	default:
		return fmt.Errorf("unknown format %q (want table, json, csv or markdown)", f)
	}
	if _, err := io.WriteString(w, s+"\n"); err != nil {
		return err
	}
	if len(problems) > 0 && f != FormatCSV {
		fmt.Fprintf(w, "\nProblems (%d):\n", len(problems))
		for _, p := range problems {
			if f == FormatMarkdown {
				fmt.Fprintf(w, "- `%s`\n", p)
			} else {
				fmt.Fprintf(w, "  %s\n", p)
			}
		}
	}
	return nil
}
