package gatereport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/tables"
	"github.com/memdiag/memdiag/report/psinote"
	"github.com/memdiag/memdiag/signal"
)

// SuspectTexts are the sentences of the report's suspect PSI, with
// what the gate did about it.
func SuspectTexts(r *gate.Report, loc *time.Location) []string {
	var out []string
	for _, x := range r.SuspectPSI {
		s := psinote.Sentence(x, r.SuspectScope(), r.Kernel, loc)
		if r.SuspectAction == gate.SuspectFail {
			s += " (--suspect-psi fail: thresholds on " + x.Resource + " PSI are not judged)"
		} else {
			s += " (--suspect-psi warn: judged as recorded)"
		}
		out = append(out, s)
	}
	return out
}

// suspectFor are the sentences of the suspect PSI of t's resource.
func suspectFor(r *gate.Report, t *gate.Threshold, loc *time.Location) []string {
	var out []string
	all := SuspectTexts(r, loc)
	for i, x := range r.SuspectPSI {
		if t.Metric.Resource == x.Resource {
			out = append(out, all[i])
		}
	}
	return out
}

// RenderOptions are the facts rendering needs from the caller.
type RenderOptions struct {
	Location *time.Location // times are shown in this zone; UTC if nil
	Width    int            // table: terminal width in columns to fit; 0 (not a terminal) keeps full content
	Color    bool           // table: bold header (a terminal, no NO_COLOR, no --no-color)
}

// Render writes the report in format f.
func Render(w io.Writer, rep *gate.Report, f format.Format, o RenderOptions) error {
	if o.Location == nil {
		o.Location = time.UTC
	}
	switch f {
	case format.Table:
		return renderTable(w, rep, o)
	case format.JSON:
		return renderJSON(w, rep)
	case format.Markdown:
		return renderMarkdown(w, rep, o)
	case format.GitHub:
		return renderGitHub(w, rep, o)
	}
	return format.Unsupported(f, gate.Formats)
}

// runLine is "cgroup /x, 12 samples, 12:00:00–12:00:11 (11s)".
func runLine(r *gate.Report, loc *time.Location) string {
	s := fmt.Sprintf("scope: %s%s; %s", r.Scope, psinote.LimitNote(r.Scope.Cgroup, r.Scope.Limit, r.Scope.LimitBytes), english.Count(r.Samples, "sample"))
	if r.Samples > 0 {
		s += fmt.Sprintf(", %s–%s (%s)", clock(r.Start, loc), clock(r.End, loc), r.End.Sub(r.Start).Round(time.Second))
	}
	return s
}

func clock(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04:05") }

// num formats v with at most two decimals and no trailing zeros.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Crossed is --abort-on-fail's reason for stopping the command at r, a
// breached threshold: "EXPR crossed (observed VALUE)".
func Crossed(r *gate.Result) string {
	return fmt.Sprintf("%s crossed (observed %s)", r.Threshold.Expr, FormatValue(r.Threshold, r.Observed))
}

// FormatValue shows v (in the base unit of t's dimension) in the unit the
// threshold was written with; for a bare 0 a readable unit is chosen.
func FormatValue(t *gate.Threshold, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	u := t.Unit
	if u.Name == "" {
		switch u.Dim {
		case gate.DimPercent:
			u = gate.Unit{Name: "%", Dim: gate.DimPercent, Scale: 1}
		case gate.DimDuration:
			u = gate.Unit{Name: "s", Dim: gate.DimDuration, Scale: 1}
		case gate.DimBytes:
			u = gate.Unit{Name: "B", Dim: gate.DimBytes, Scale: 1}
			for _, c := range gate.Units() {
				if c.Dim == gate.DimBytes && strings.HasSuffix(c.Name, "iB") && v >= c.Scale { // printed in binary units, as units.FormatBytes
					u = c
				}
			}
		case gate.DimPageRate:
			u = gate.Unit{Name: "/s", Dim: gate.DimPageRate, Scale: 1}
		}
	}
	return num(v/u.Scale) + u.Name
}

// WorstText is "12:00:02–12:00:03 (+2s) 30%": the worst interval (or
// sample, for an EWMA), its offset from the start of the run and its value.
// It is "" when there is no moment, or when the worst value of an upper
// bound is 0 (nothing happened).
func WorstText(r *gate.Report, res *gate.Result, loc *time.Location) string {
	w := res.Worst
	if w == nil || (w.Value == 0 && !res.Threshold.Op.LowerIsWorse()) {
		return ""
	}
	when := clock(w.End, loc)
	if s := clock(w.Start, loc); s != when {
		when = s + "–" + when
	}
	off := w.Start.Sub(r.Start)
	if off < time.Minute {
		off = off.Round(100 * time.Millisecond)
	} else {
		off = off.Round(time.Second)
	}
	return fmt.Sprintf("%s (+%s) %s", when, off, FormatValue(res.Threshold, w.Value))
}

func statusText(s gate.Status) string {
	switch s {
	case gate.Fail:
		return "FAIL"
	case gate.NoData:
		return "NO DATA"
	}
	return "pass"
}

func renderTable(w io.Writer, rep *gate.Report, o RenderOptions) error {
	for _, l := range rep.Lacks {
		fmt.Fprintln(w, "the recording lacks:", l)
	}
	for _, l := range SuspectTexts(rep, o.Location) {
		fmt.Fprintln(w, "warning:", l)
	}
	fmt.Fprintln(w, "memdiag gate:", Verdict(rep))
	fmt.Fprintln(w, runLine(rep, o.Location))
	if rep.Command != nil {
		fmt.Fprintf(w, "command: %s: %s\n", strings.Join(rep.Command.Args, " "), CommandText(rep.Command))
	}
	fmt.Fprintln(w)
	t := tables.New("THRESHOLD", "OBSERVED", "RESULT", "WORST MOMENT").SetFit(3, tables.Wrap, 20)
	for i := range rep.Results {
		r := &rep.Results[i]
		t.AppendRow(r.Threshold.Expr, FormatValue(r.Threshold, r.Observed), statusText(r.Status), WorstText(rep, r, o.Location))
	}
	fmt.Fprintln(w, t.Text(tables.Options{Width: o.Width, Color: o.Color}))
	for _, r := range rep.Results {
		if r.Status == gate.NoData {
			fmt.Fprintf(w, "no data for %s: %s\n", r.Threshold.Expr, Reason(&r))
		}
	}
	for _, s := range Warnings(rep) {
		fmt.Fprintln(w, "warning:", s)
	}
	return nil
}

func renderMarkdown(w io.Writer, rep *gate.Report, o RenderOptions) error {
	icon := map[gate.Status]string{gate.Pass: "✅ pass", gate.Fail: "❌ **FAIL**", gate.NoData: "⚠️ no data"}
	for _, l := range rep.Lacks {
		fmt.Fprintf(w, "> ⚠️ the recording lacks: %s\n", mdEscape(l))
	}
	for _, l := range SuspectTexts(rep, o.Location) {
		fmt.Fprintf(w, "> ⚠️ %s\n", mdEscape(l))
	}
	if len(rep.Lacks)+len(rep.SuspectPSI) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "### memdiag gate: %s\n\n", Verdict(rep))
	fmt.Fprintf(w, "%s\n\n", runLine(rep, o.Location))
	if rep.Command != nil {
		fmt.Fprintf(w, "Command `%s`: %s\n\n", strings.Join(rep.Command.Args, " "), CommandText(rep.Command))
	}
	fmt.Fprintln(w, "| threshold | observed | result | worst moment |")
	fmt.Fprintln(w, "|---|---:|---|---|")
	for i := range rep.Results {
		r := &rep.Results[i]
		worst := WorstText(rep, r, o.Location)
		if r.Status == gate.NoData {
			worst = Reason(r)
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", r.Threshold.Expr, FormatValue(r.Threshold, r.Observed), icon[r.Status], mdEscape(worst))
	}
	fmt.Fprintln(w)
	return nil
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// renderGitHub writes GitHub Actions workflow commands: an ::error per
// breached or unjudged threshold and for a failed command, and a ::notice
// with the verdict. https://docs.github.com/actions/reference/workflow-commands-for-github-actions
func renderGitHub(w io.Writer, rep *gate.Report, o RenderOptions) error {
	for _, l := range rep.Lacks {
		fmt.Fprintf(w, "::warning title=%s::%s\n", ghProperty("memdiag gate: the recording lacks"), ghData(l))
	}
	for _, l := range SuspectTexts(rep, o.Location) {
		fmt.Fprintf(w, "::warning title=%s::%s\n", ghProperty("memdiag gate: suspect PSI"), ghData(l))
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		switch r.Status {
		case gate.Fail:
			msg := fmt.Sprintf("%s breached: observed %s over the run (%s)", r.Threshold.Expr, FormatValue(r.Threshold, r.Observed), rep.Scope)
			if wt := WorstText(rep, r, o.Location); wt != "" {
				msg += "; worst " + wt
			}
			fmt.Fprintf(w, "::error title=%s::%s\n", ghProperty("memdiag gate: "+r.Threshold.Expr), ghData(msg))
		case gate.NoData:
			fmt.Fprintf(w, "::error title=%s::%s\n", ghProperty("memdiag gate: "+r.Threshold.Expr), ghData("could not be judged: "+Reason(r)))
		}
	}
	if rep.Command.Failed() {
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProperty("memdiag gate: command"),
			ghData(strings.Join(rep.Command.Args, " ")+": "+CommandText(rep.Command)))
	}
	level := "notice"
	if !rep.Passed() {
		level = "error"
	}
	fmt.Fprintf(w, "::%s title=memdiag gate::%s\n", level, ghData(Verdict(rep)+" ("+runLine(rep, o.Location)+")"))
	return nil
}

// ghData escapes a workflow command's message (actions/toolkit
// packages/core/src/command.ts, escapeData).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value (escapeProperty).
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

type jsonReport struct {
	Verdict string `json:"verdict"` // "pass" or "fail"
	Summary string `json:"summary"`
	Scope   string `json:"scope"` // "host" or "cgroup"
	Cgroup  string `json:"cgroup,omitempty"`
	// MemoryLimit is the group whose memory limit bounds the cgroup
	// scope and MemoryLimitBytes that limit; absent when none is known.
	MemoryLimit      string       `json:"memory_limit_cgroup,omitempty"`
	MemoryLimitBytes uint64       `json:"memory_limit_bytes,omitempty"`
	Start            time.Time    `json:"start"`
	End              time.Time    `json:"end"`
	Samples          int          `json:"samples"`
	Command          *jsonCommand `json:"command,omitempty"`
	Thresholds       []jsonResult `json:"thresholds"`
	Warnings         []string     `json:"warnings,omitempty"`
	// RecordingLacks: what the judged recording does not hold.
	RecordingLacks []string `json:"recording_lacks,omitempty"`
	// SuspectPSI: where the scope's PSI contradicts itself, each with
	// its sentence; SuspectPSIAction what the gate did (--suspect-psi).
	SuspectPSI       []jsonSuspect `json:"suspect_psi,omitempty"`
	SuspectPSIAction string        `json:"suspect_psi_action"`
	Kernel           string        `json:"kernel,omitempty"`
}

type jsonSuspect struct {
	signal.PSISuspect
	Text string `json:"text"`
}

type jsonCommand struct {
	Args     []string `json:"args"`
	ExitCode int      `json:"exit_code"`
	Signal   string   `json:"signal,omitempty"`
	Error    string   `json:"error,omitempty"`
}

type jsonResult struct {
	Expr         string      `json:"expr"`
	Metric       string      `json:"metric"`
	Op           string      `json:"op"`
	Limit        float64     `json:"limit"` // in Unit
	Unit         string      `json:"unit"`
	Status       string      `json:"status"`             // "pass", "fail", "no data"
	Observed     *float64    `json:"observed,omitempty"` // in Unit; absent with no data
	ObservedText string      `json:"observed_text"`      // as in the table
	Worst        *jsonMoment `json:"worst,omitempty"`    // the worst sampling interval
	CoveredS     float64     `json:"covered_s"`          // seconds of the run that had the signal
	// Signal is the catalogue signal the metric judges, named and in the
	// unit analyze and mem give it (absent for a PSI average).
	Signal *jsonSignalRate `json:"signal,omitempty"`
	Reason string          `json:"reason,omitempty"` // why no data
}

type jsonMoment struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Value float64   `json:"value"` // in Unit
}

// unitName names u, or for a bare number the base unit of its dimension.
func unitName(u gate.Unit) string {
	if u.Name != "" {
		return u.Name
	}
	return map[gate.Dim]string{gate.DimPercent: "%", gate.DimDuration: "s", gate.DimBytes: "B", gate.DimPageRate: "/s", gate.DimByteRate: "B/s"}[u.Dim]
}

// jsonSignalRate is a catalogue signal over the run (Result.SignalRate):
// Name is signal.Signal.Name, Key its RateKey, Value in Unit (RateUnit),
// null with no data.
type jsonSignalRate struct {
	Name  string   `json:"name"`
	Key   string   `json:"key"`
	Unit  string   `json:"unit"`
	Value *float64 `json:"value"`
}

func renderJSON(w io.Writer, rep *gate.Report) error {
	out := jsonReport{
		Verdict: "pass", Summary: Verdict(rep), Scope: "host", Cgroup: rep.Scope.Cgroup,
		MemoryLimit: rep.Scope.Limit, MemoryLimitBytes: rep.Scope.LimitBytes,
		Start: rep.Start, End: rep.End, Samples: rep.Samples, Warnings: Warnings(rep),
		RecordingLacks: rep.Lacks,
		Thresholds:     []jsonResult{},
		Kernel:         rep.Kernel, SuspectPSIAction: string(rep.SuspectAction),
	}
	if out.SuspectPSIAction == "" {
		out.SuspectPSIAction = string(gate.SuspectWarn)
	}
	texts := SuspectTexts(rep, time.UTC)
	for i, x := range rep.SuspectPSI {
		out.SuspectPSI = append(out.SuspectPSI, jsonSuspect{x, texts[i]})
	}
	if !rep.Passed() {
		out.Verdict = "fail"
	}
	if rep.Scope.Cgroup != "" {
		out.Scope = "cgroup"
	}
	if c := rep.Command; c != nil {
		out.Command = &jsonCommand{Args: c.Args, ExitCode: c.ExitCode, Signal: c.Signal, Error: c.Err}
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		t := r.Threshold
		scale := t.Unit.Scale
		jr := jsonResult{
			Expr: t.Expr, Metric: t.Metric.Name, Op: string(t.Op), Limit: t.Number, Unit: unitName(t.Unit),
			Status: string(r.Status), ObservedText: FormatValue(t, r.Observed), CoveredS: r.Covered.Seconds(), Reason: Reason(r),
		}
		if !math.IsNaN(r.Observed) {
			v := r.Observed / scale
			jr.Observed = &v
		}
		if sig := t.Metric.Signal; sig != nil {
			jr.Signal = &jsonSignalRate{Name: sig.Name, Key: sig.RateKey(), Unit: sig.RateUnit()}
			if v := r.SignalRate; !math.IsNaN(v) {
				jr.Signal.Value = &v
			}
		}
		if r.Worst != nil {
			jr.Worst = &jsonMoment{Start: r.Worst.Start, End: r.Worst.End, Value: r.Worst.Value / scale}
		}
		out.Thresholds = append(out.Thresholds, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
