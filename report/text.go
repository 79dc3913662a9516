package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/tables"
	"github.com/memdiag/memdiag/signal"
	"github.com/memdiag/memdiag/timers"
)

// column groups of the timeline: a column is marked when the episode
// raised any of its signals; its value is the first one raised.
type column struct {
	title   string // the column's title in the wide layout (--values)
	short   string // its name in the SIGNALS column
	what    string // what the short name means, for the legend
	signals []correlate.Signal
	wide    bool // counted in the compact layout's SIGNALS only
}

var columns = []column{
	{title: "PSI UP", short: "PSI", what: "memory PSI rose", signals: []correlate.Signal{correlate.PSISome, correlate.PSIFull}},
	{title: "LRU DOWN", short: "LRU", what: "file LRU shrank", signals: []correlate.Signal{correlate.LRUDrop}},
	{title: "REFAULT", short: "RF", what: "refaults rose", signals: []correlate.Signal{correlate.Refault}, wide: true},
	{title: "DIRECT RECL", short: "DR", what: "direct reclaim rose", signals: []correlate.Signal{correlate.DirectReclaim}, wide: true},
	{title: "LIMIT RECL", short: "LR", what: "cgroup-limit reclaim rose", signals: []correlate.Signal{correlate.LimitReclaim}, wide: true},
	{title: "DISK I/O", short: "IO", what: "disk I/O rose", signals: []correlate.Signal{correlate.DiskIO}},
	{title: "I/O TIME UP", short: "IOT", what: "I/O time rose", signals: []correlate.Signal{correlate.IOTime}},
	{title: "SWAP UP", short: "SW", what: "swap-out rose", signals: []correlate.Signal{correlate.SwapOut}},
}

// signalsCell is the SIGNALS cell of the compact timeline: the short name
// of every signal that rose in the episode, each at its own place so that
// the marks line up in columns ("PSI LRU       IO IOT SW").
func signalsCell(e *correlate.Episode) string {
	var b strings.Builder
	for i, c := range columns {
		if i > 0 {
			b.WriteByte(' ')
		}
		on := false
		for _, s := range c.signals {
			if _, ok := e.Has(s); ok {
				on = true
			}
		}
		if on {
			b.WriteString(c.short)
		} else {
			b.WriteString(strings.Repeat(" ", len(c.short)))
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// signalsLegend explains the SIGNALS column's short names. Under a
// cgroup scope only PSI is the group's: every other signal is read from
// the host's counters (correlate's signalValue), and the legend says so.
func signalsLegend(r *correlate.Result) string {
	parts := make([]string, len(columns))
	for i, c := range columns {
		parts[i] = c.short + " " + c.what
	}
	if !groupScope(r) {
		return "SIGNALS: " + strings.Join(parts, ", ") + "."
	}
	return fmt.Sprintf("SIGNALS: PSI memory PSI of %s rose. The others are host-wide counters (the whole machine's, every cgroup's together, not this cgroup's alone): %s.",
		psiScopeName(r.PSIScope), strings.Join(parts[1:], ", "))
}

// groupScope reports whether the memory PSI the episodes were found on
// is (or may be) the recorded cgroup's, so that the other signals,
// host-wide, must be labelled as such.
func groupScope(r *correlate.Result) bool {
	return r.PSIScope == correlate.PSICgroup || r.PSIScope == correlate.PSIAny
}

// valuesScopeNote is the wide layout's counterpart of signalsLegend's
// scope: "" with the host's scope.
func valuesScopeNote(r *correlate.Result) string {
	if !groupScope(r) {
		return ""
	}
	var titles []string
	for _, c := range columns[1:] {
		titles = append(titles, c.title)
	}
	return fmt.Sprintf("PSI UP is the memory PSI of %s; %s are host-wide, the whole machine's and not the cgroup's alone.",
		psiScopeName(r.PSIScope), strings.Join(titles, ", "))
}

func renderText(w io.Writer, r correlate.Result, o Options, md bool) error {
	var b strings.Builder
	heading := func(s string) { b.WriteString(tables.Heading(s, md) + "\n\n") }
	bullet := "  - "
	if md {
		bullet = "- "
	}
	textHead(&b, &r, md, heading, bullet)
	if len(r.Episodes)+len(r.LoneSpikes)+len(r.OOMKills) > 0 {
		heading("Timeline")
		timelineText(&b, &r, o, md)
		b.WriteString("\n\n")
	}
	if o.Values && len(r.Episodes) > 0 && r.Episodes[0].Catalogue != nil {
		heading("Signals per episode")
		catalogueText(&b, &r, o, md)
	}

	heading("Verdict")
	verdict(&b, &r, md, bullet)
	if h := victimHint(&r); h != "" && !o.scraped {
		fmt.Fprintf(&b, "\n%s\n", h)
	}
	memoryText(&b, &r, heading, bullet)

	if len(r.Warnings) > 0 {
		b.WriteString("\n")
		for _, wn := range r.Warnings {
			fmt.Fprintf(&b, "Note: %s\n", warningText(wn, r.Location))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textHead is the text report's title (markdown), summary lines and
// what the recording lacks, said before anything is concluded.
func textHead(b *strings.Builder, r *correlate.Result, md bool, heading func(string), bullet string) {
	if md {
		fmt.Fprintf(b, "# memdiag analysis of %s\n\n", r.Host)
	}
	for _, l := range summary(r) {
		if md {
			fmt.Fprintf(b, "%s  \n", l)
		} else {
			fmt.Fprintln(b, l)
		}
	}
	b.WriteString("\n")

	if len(r.Lacks) > 0 {
		// Before anything is concluded: what could not be seen.
		heading("The recording lacks")
		for _, l := range r.Lacks {
			fmt.Fprintf(b, "%s%s\n", bullet, l)
		}
		b.WriteString("\n")
	}
}

// timelineText is the timeline table and its legends.
func timelineText(b *strings.Builder, r *correlate.Result, o Options, md bool) {
	t := timeline(r, o)
	if md {
		b.WriteString(t.Markdown())
	} else {
		b.WriteString(t.Text(tables.Options{Width: o.Width, Color: o.Color}))
	}
	b.WriteString("\n")
	if md {
		b.WriteString("\n")
	}
	if !o.Values {
		b.WriteString(signalsLegend(r) + "\n")
	} else if n := valuesScopeNote(r); n != "" {
		b.WriteString(n + "\n")
	}
	b.WriteString(culpritLegend + markLegend(r))
	for i := range r.Episodes {
		if c := culpritByName(r, r.Episodes[i].Culprit); c != nil {
			if took := memTaken(c, &r.Episodes[i]); took != "" {
				b.WriteString(memLegend(took[strings.LastIndex(took, " +")+1:]))
				break
			}
		}
	}
}

// catalogueText is the wide layout's table of every catalogue signal per
// episode, as many episodes side by side as the width holds.
func catalogueText(b *strings.Builder, r *correlate.Result, o Options, md bool) {
	// As many episodes side by side as the width holds (a signal's
	// name and unit take 33 columns, an episode about 15).
	per := len(r.Episodes)
	if o.Width > 0 && !md {
		per = max(1, (o.Width-33)/15)
	}
	for from := 0; from < len(r.Episodes); from += per {
		t := catalogueTable(r, from, min(from+per, len(r.Episodes)))
		if md {
			b.WriteString(t.Markdown() + "\n")
		} else {
			b.WriteString(t.Text(tables.Options{Width: o.Width, Color: o.Color}) + "\n")
		}
	}
	b.WriteString("Every catalogue signal's mean rate over each episode (the wide layout's extra table; `memdiag analyze --format json` has it as each episode's \"catalogue\", with its peak); - is not recorded.\n\n")
}

// summary is the header: what was analysed and with which rules.
func summary(r *correlate.Result) []string {
	zone := in(r, r.Start).Format("MST")
	// A recording that spans days gives its end's date too.
	endLayout := "15:04:05"
	if spansDays(r) {
		endLayout = "2006-01-02 15:04:05"
	}
	lines := []string{fmt.Sprintf("Recording: %s, %s – %s %s (%s, %s of %s)",
		r.Host, in(r, r.Start).Format("2006-01-02 15:04:05"), in(r, r.End).Format(endLayout), zone,
		correlate.FormatDuration(r.End.Sub(r.Start)), english.Count(r.Intervals, "interval"), correlate.FormatDuration(r.Interval))}
	if l := victimLine(r); l != "" {
		lines = append(lines, l)
	}
	if l := scopeLimitLine(r); l != "" {
		lines = append(lines, l)
	}
	if r.HasLatency {
		base := "baseline " + correlate.FormatDuration(r.LatencyBaseline)
		if r.Totals.Requests > 0 && r.Totals.Errors == r.Totals.Requests {
			base = "no successful request, no baseline"
		}
		lines = append(lines, fmt.Sprintf("Latency: %s per interval, %s; a spike is above %s the rolling baseline: %s",
			r.Stat, base, spikeRule(r.Spike), spikesWhere(r)))
		if tt := r.Totals; tt.Errors > 0 {
			rule := "a burst of failures is a spike"
			if f := r.Failing; f != nil {
				rule = fmt.Sprintf("FAILING: at least half failed in %d of %d intervals, no spike rises above that", f.Failing, f.Intervals)
			}
			lines = append(lines, fmt.Sprintf("Failures: %d of %d requests failed (%.1f%%), in %s; %s; latency figures are of the successful requests",
				tt.Errors, tt.Requests, 100*float64(tt.Errors)/float64(tt.Requests), english.Count(tt.ErrorIntervals, "interval"), rule))
		}
	} else {
		lines = append(lines, "Latency: none recorded; pressure episodes only")
	}
	scope := psiScopeName(r.PSIScope)
	if r.PSIScope == correlate.PSIAny {
		scope += ", the higher"
	}
	ep := fmt.Sprintf("Episodes: %d (memory PSI of %s", len(r.Episodes), scope)
	if len(r.Require) > 0 {
		names := make([]string, len(r.Require))
		for i, s := range r.Require {
			names[i] = string(s)
		}
		ep += "; each needs " + strings.Join(names, " or ")
	} else {
		ep += "; any raised signal starts one"
	}
	ep += ")"
	switch n := len(r.LoneSpikes); {
	case n == 1:
		ep += "; 1 latency spike outside episodes"
	case n > 1:
		ep += fmt.Sprintf("; %d latency spikes outside episodes", n)
	}
	lines = append(lines, ep)
	if p := r.Period; p != nil {
		lines = append(lines, fmt.Sprintf("Period: episodes recur every %s (±%s) from %s: %d of %d expected, %d missed, %d off schedule",
			correlate.FormatDuration(p.Period), correlate.FormatDuration(p.Jitter), in(r, p.Phase).Format(timeLayout(r)),
			p.Matched, p.Expected, p.Missed, p.Extra))
	} else if n := len(r.Episodes); n > 0 && n < correlate.PeriodMinHits {
		lines = append(lines, fmt.Sprintf("Period: none (%s; a period needs %d)", english.Count(n, "episode"), correlate.PeriodMinHits))
	} else if n > 0 {
		lines = append(lines, fmt.Sprintf("Period: none found (the %d episodes' times fit no schedule)", n))
	}
	if sp := r.SpikePeriod; sp != nil && (r.Period == nil ||
		math.Abs(float64(sp.Period-r.Period.Period)) > 0.1*float64(r.Period.Period)) {
		// The spike period is of every spike, in episodes or outside
		// them: with no episode, "episodes with a spike" would be false.
		what := "latency spikes (in episodes and outside them)"
		switch {
		case len(r.LoneSpikes) == 0:
			what = "episodes with a latency spike"
		case spikeEpisodes(r) == 0:
			what = "latency spikes outside episodes"
		}
		lines = append(lines, fmt.Sprintf("Spikes: %s recur every %s (±%s): %d of %d expected, %d missed, %d off schedule",
			what, correlate.FormatDuration(sp.Period), correlate.FormatDuration(sp.Jitter), sp.Matched, sp.Expected, sp.Missed, sp.Extra))
	}
	return lines
}

func spikeRule(s correlate.SpikeRule) string {
	if s.Floor > 0 {
		return correlate.FormatDuration(s.Floor) + " and"
	}
	return s.String()
}

// timeline builds the table: one row per episode, stamped by [rowTime].
func timeline(r *correlate.Result, o Options) *tables.Table {
	hdr := timelineHeader(r, o)
	// On a narrow terminal the culprit wraps; the marks never do. The
	// wide layout (--values) hides its extra columns, then the values'
	// widest ones, one at a time until it fits (named under the table).
	t := tables.New(hdr...).SetFit(len(hdr)-1, tables.Wrap, 18)
	if o.Values {
		var hide []int
		for i := len(hdr) - 2; i > 0; i-- {
			hide = append(hide, i)
		}
		t.HideWhenNarrow(hide...)
	}

	// The time of day on every row; the date too on the first row and
	// where the day changes, when the recording spans days.
	m := newMarker(o)
	clock, lastDay := clockLayout(r), ""
	for _, e := range timelineRows(r) {
		at := in(r, rowTime(e))
		stamp := at.Format(clock)
		if day := at.Format("Jan 2"); spansDays(r) && day != lastDay {
			stamp, lastDay = day+" "+stamp, day
		}
		t.AppendRow(m.row(r, e, stamp)...)
	}
	return t
}

// timelineHeader is the timeline's header row: TIME, the latency and
// signal columns of the layout (o.Values: wide, a column a signal) and
// CULPRIT.
func timelineHeader(r *correlate.Result, o Options) []any {
	hdr := []any{"TIME"}
	if o.Values {
		hdr = append(hdr, "DURATION")
	}
	if r.HasLatency {
		hdr = append(hdr, "LATENCY")
	}
	if o.Values {
		for _, c := range columns {
			hdr = append(hdr, c.title)
		}
	} else {
		hdr = append(hdr, "SIGNALS")
	}
	return append(hdr, "CULPRIT")
}

// marker writes the timeline's cells: the mark (red and bold with
// colour) of a raised signal or spike, with its value in the wide
// layout (values).
type marker struct {
	mark   string
	values bool
}

func newMarker(o Options) marker {
	m := marker{mark: mark, values: o.Values}
	if o.Color {
		m.mark = text.Colors{text.FgRed, text.Bold}.Sprint(mark)
	}
	return m
}

// cell is the mark of a raised signal (on), with val in the wide layout.
func (m marker) cell(on bool, val string) string {
	switch {
	case !on:
		return ""
	case m.values && val != "":
		return m.mark + " " + val
	}
	return m.mark
}

// row is e's timeline row, stamped stamp.
func (m marker) row(r *correlate.Result, e *correlate.Episode, stamp string) []any {
	row := []any{stamp}
	if m.values {
		row = append(row, correlate.FormatDuration(e.End.Sub(e.Start)))
	}
	if r.HasLatency {
		row = append(row, m.latencyCell(e))
	}
	if !m.values {
		row = append(row, signalsCell(e))
	}
	for _, c := range columns {
		if !m.values {
			break
		}
		on, val := false, ""
		for _, s := range c.signals {
			if p, ok := e.Has(s); ok && !on {
				on, val = true, signalValue(p)
			}
		}
		row = append(row, m.cell(on, val))
	}
	return append(row, culpritCell(r, e))
}

// latencyCell is e's latency: the mark of a spike (with its peak in the
// wide layout) and its failed requests.
func (m marker) latencyCell(e *correlate.Episode) string {
	val := ""
	if e.LatencyPeak > 0 {
		val = correlate.FormatDuration(e.LatencyPeak)
	}
	// Failed requests are marked in the latency cell ("✗600":
	// 600 failed), always: a burst of failures is a spike of its
	// own, and a fast answer may be a refusal.
	failed := ""
	if e.Failed > 0 {
		failed = fmt.Sprintf("✗%d", e.Failed)
	}
	c := ""
	if e.Spike {
		c = m.cell(true, val)
	} else if m.values {
		c = val
	}
	return strings.TrimSpace(c + " " + failed)
}

// catalogueTable is every signal.Catalogue entry's mean rate in each
// episode (correlate.Episode.Catalogue): one row per signal, named and
// in the unit as in gate and mem, one column per episode of [from, to).
func catalogueTable(r *correlate.Result, from, to int) *tables.Table {
	hdr := []any{"SIGNAL", "UNIT"}
	for i := from; i < to; i++ {
		hdr = append(hdr, "#"+strconv.Itoa(i+1)+" "+in(r, rowTime(&r.Episodes[i])).Format(clockLayout(r)))
	}
	t := tables.New(hdr...)
	for k, sig := range signal.Catalogue {
		row := []any{sig.Name, sig.RateUnit()}
		for i := from; i < to; i++ {
			v := math.NaN()
			if c := r.Episodes[i].Catalogue; k < len(c) && c[k].Signal == sig {
				v = c[k].Mean
			}
			row = append(row, rateText(v))
		}
		t.AppendRow(row...)
	}
	return t
}

// rateText prints a rate in its own unit: whole numbers from 100 up,
// three significant digits below, 0 below 10⁻⁶, "-" when unknown.
func rateText(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) < 1e-6: // a sum of rates × seconds that cancels leaves 1e-13
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// rowTime is the time a timeline row shows: the end of the episode's
// first interval, the moment that interval's counters were read. `memdiag
// watch` stamps its live rows the same way (as sar and pidstat do), so an
// episode's row has the time of the live row where it began. The
// episode's intervals are taken as equally long, (End−Start)/Intervals,
// which is exact to the sampling jitter; an OOM kill's row (one interval
// ending at the sample that counted the kill) shows that sample's time.
func rowTime(e *correlate.Episode) time.Time {
	if e.Intervals <= 1 {
		return e.End
	}
	return e.Start.Add(e.End.Sub(e.Start) / time.Duration(e.Intervals))
}

// spikeIntervals is how many of the recording's intervals a latency spike
// outside episodes spans (correlate does not keep the count for spikes).
func spikeIntervals(r *correlate.Result, sp correlate.Spike) int {
	if r.Interval <= 0 {
		return 1
	}
	return max(1, int(math.Round(float64(sp.End.Sub(sp.Start))/float64(r.Interval))))
}

// timelineRows are the episodes and, as rows with only a latency mark, the
// spikes outside episodes, in time order.
func timelineRows(r *correlate.Result) []*correlate.Episode {
	rows := make([]*correlate.Episode, 0, len(r.Episodes)+len(r.LoneSpikes))
	for i := range r.Episodes {
		rows = append(rows, &r.Episodes[i])
	}
	for _, sp := range r.LoneSpikes {
		rows = append(rows, &correlate.Episode{Index: -1, Start: sp.Start, End: sp.End, Intervals: spikeIntervals(r, sp), Spike: true, LatencyPeak: sp.LatencyPeak, Failed: sp.Failed})
	}
	// OOM kills are rows of their own: the kill is often where the
	// question started.
	for _, k := range r.OOMKills {
		rows = append(rows, &correlate.Episode{Index: -2, Start: k.Time.Add(-r.Interval), End: k.Time, Culprit: oomText(k)})
	}
	slices.SortStableFunc(rows, func(a, b *correlate.Episode) int { return a.Start.Compare(b.Start) })
	return rows
}

// processesText names a culprit's processes with the recorded chain of
// who started them, each ancestor's own ancestry said once: processes
// with the same chain share it ("dd, tar, started by export.sh 31737,
// which CRON 31729 started"), and a chain stops at an ancestor whose
// ancestry is already said. sep is "; " when a chain is given (chains
// have commas of their own), else ", ".
func processesText(procs []correlate.ProcActivity) (names []string, sep string) {
	sep = ", "
	var keys []string
	byChain := map[string][]string{}
	chains := map[string][]string{}
	for _, p := range procs {
		k := strings.Join(p.StartedBy, "\x00")
		if _, ok := byChain[k]; !ok {
			keys = append(keys, k)
			chains[k] = p.StartedBy
		}
		byChain[k] = append(byChain[k], procName(p))
	}
	said := map[string]bool{} // ancestors whose own starter is said
	for _, k := range keys {
		n := strings.Join(byChain[k], ", ")
		if chain := chains[k]; len(chain) > 0 {
			// A chain has commas of its own: processes are then set
			// apart by semicolons, so two chains never read as one list.
			sep = "; "
			upTo := len(chain)
			for i := range chain[:len(chain)-1] {
				if said[chain[i]] {
					upTo = i + 1
					break
				}
			}
			n += ", " + startedBy(chain[:upTo])
			for _, a := range chain[:upTo-1] {
				said[a] = true
			}
		}
		names = append(names, n)
	}
	return names, sep
}

// fewEpisodes is the count of episodes under which "no culprit" also says
// to record longer: with fewer, a job or process in some of them cannot be
// told from chance (naming needs p < 0.01 against the null model, or a
// median share of 50 %, over the episodes it is credited with).
const fewEpisodes = 5

// ioBurstsHint is how many I/O bursts, with no culprit named, make the
// verdict point to --require none: as many as a period needs (a job every
// 12 s whose reclaim and refaults in a small cgroup stalled it under 2 %
// was "no culprit" by default and named at 0.80 with --require none, in a
// new user's trial).
const ioBurstsHint = 3

// verdict writes which culprit, how often, what it does and what to do.
func verdict(b *strings.Builder, r *correlate.Result, md bool, bullet string) {
	n := len(r.Episodes)
	failingText(b, r)
	sustainedText(b, r, bullet)
	defer func() {
		if len(r.IOBursts) > 0 {
			fmt.Fprintf(b, "\n%s without memory stall above the thresholds (disk or reclaim activity whose stall, if any, stayed under the PSI thresholds: not an episode, no culprit named for %s).\n",
				english.Count(len(r.IOBursts), "I/O burst"), map[bool]string{true: "it", false: "them"}[len(r.IOBursts) == 1])
			if len(r.Culprits) == 0 && len(r.IOBursts) >= ioBurstsHint {
				fmt.Fprintln(b, "A job whose stall stays under the thresholds may follow them: `memdiag analyze --require none` judges them as episodes too, to see whether a job recurs with them.")
			}
		}
		notNamedText(b, r, bullet)
	}()
	if n == 0 && r.Sustained != nil {
		return
	}
	if n == 0 {
		noEpisodeText(b, r)
		return
	}
	if len(r.Culprits) == 0 && len(r.Undecided) == 0 {
		noCulpritText(b, r)
		return
	}
	togetherText(b, r)
	for i := range r.Culprits {
		culpritText(b, r, &r.Culprits[i], md, bullet)
		if i < len(r.Culprits)-1 {
			b.WriteString("\n")
		}
	}
	undecidedText(b, r, md, bullet)
}

// undecidedText is the verdict's part on the undecided jobs
// (correlate.Result.Undecided): why none of them is named, then each
// with its evidence, unnumbered.
func undecidedText(b *strings.Builder, r *correlate.Result, md bool, bullet string) {
	if len(r.Undecided) == 0 {
		return
	}
	if len(r.Culprits) > 0 {
		b.WriteString("\n")
	}
	how := "the page-cache chain was not traced"
	if r.ChainTraced {
		how = "the traced page-cache chain did not judge their episodes (reclaim took too little of the victim's pages in them)"
	}
	fmt.Fprintf(b, "Undecided: %s fired together in the episodes they explain (%d of %d), and %s; "+
		"correlation cannot tell which of them took the memory — a reader with O_DIRECT and a buffered one, or a job churning its own memory limit, "+
		"look the same to it — and %s. None of them is named; `memdiag confirm --job NAME -- LOAD` on each tells them apart.\n\n",
		undecidedNames(r, "and"), r.Undecided[0].EpisodesExplained, r.Undecided[0].EpisodesTotal, undecidedRule(r.Undecided[0].Why), how)
	for i := range r.Undecided {
		culpritText(b, r, &r.Undecided[i], md, bullet)
		if i < len(r.Undecided)-1 {
			b.WriteString("\n")
		}
	}
}

// undecidedRule says why no job of an undecided group stands out
// (correlate.UndecidedWhy): "A's work (…) was less than twice B's (…)",
// or "A did more than twice B's work by the median (…) but not in N of
// the M episodes both are credited with". Work is I/O plus memory taken.
func undecidedRule(w *correlate.UndecidedWhy) string {
	if w == nil {
		return "no one of them did more than twice the others' work"
	}
	top, next := correlate.FormatBytes(w.TopWork), correlate.FormatBytes(w.NextWork)
	if w.Rule == correlate.UndecidedByEpisodes {
		return fmt.Sprintf("%s did more than twice %s's work by the median (%s against %s an episode, I/O and memory taken) but not in %d of the %d episodes both are credited with, so it does not stand out episode by episode",
			w.Top, w.Next, top, next, w.NotTwice, w.Shared)
	}
	return fmt.Sprintf("the one with the most work, %s (%s an episode, median of its I/O and memory taken), did less than twice %s's (%s), so none stands out",
		w.Top, top, w.Next, next)
}

// undecidedNames is the undecided jobs' names, "a, b and c" (conj
// "and"), in their order.
func undecidedNames(r *correlate.Result, conj string) string {
	names := make([]string, len(r.Undecided))
	for i := range r.Undecided {
		names[i] = r.Undecided[i].Name
	}
	return english.List(names, conj)
}

// noEpisodeText is the verdict of a recording without an episode: its
// latency spikes, or nothing rose.
func noEpisodeText(b *strings.Builder, r *correlate.Result) {
	switch {
	case len(r.LoneSpikes) > 0:
		switch bl := r.BurstLead; {
		case bl != nil && bl.Lead:
			fmt.Fprintf(b, "No episode: %d latency spikes, but no memory-pressure signal rose with them; %d of them came with an I/O burst (disk or reclaim activity; see below), where chance would give %.1f (the bursts span %.0f%% of the recording): look there, and at CPU, network and the service itself.\n", len(r.LoneSpikes), bl.WithBurst, bl.Expected, 100*bl.Cover)
		case bl != nil:
			fmt.Fprintf(b, "No episode: %d latency spikes, but no memory-pressure signal rose with them; %d of them came with an I/O burst, about as many as chance would give (%.1f; the bursts span %.0f%% of the recording): look elsewhere (CPU, network, the service itself).\n", len(r.LoneSpikes), bl.WithBurst, bl.Expected, 100*bl.Cover)
		default:
			fmt.Fprintf(b, "No episode: %d latency spikes, but no memory-pressure signal rose with them; look elsewhere (CPU, network, the service itself).\n", len(r.LoneSpikes))
		}
	case r.HasLatency && r.Failing == nil:
		fmt.Fprintf(b, "No episode: no latency spike and no memory-pressure signal rose above its threshold%s.\n", stallNote(r))
	default:
		fmt.Fprintf(b, "No episode: no memory-pressure signal rose above its threshold%s.\n", stallNote(r))
	}
}

// noCulpritText is the verdict of episodes no culprit explains.
func noCulpritText(b *strings.Builder, r *correlate.Result) {
	n := len(r.Episodes)
	why := "no periodic pattern"
	if r.Period != nil {
		why = "a recurrence too weak to attribute"
	}
	fmt.Fprintf(b, "No culprit: %s, %s, and no timer, cron job or recurring process is shown to cause %s.\n", english.Count(n, "episode"), why, map[bool]string{true: "it", false: "them"}[n == 1])
	if v := r.VictimReads; v != nil {
		fmt.Fprintf(b, "In %d of the %d episodes the I/O of the analysed scope was the victim's own reads (%s): most likely pages of its own that reclaim took, read back — the stall's effect, not its cause. "+
			"What took them did no I/O in the scope: look outside it (processes marked \"outside the cgroup\" in the timeline, other groups under the same memory limit), at who holds memory while the episodes last (`memdiag mem`), or record with the page-cache chain traced (`--ebpf on`), which tells reading back from causing.\n",
			v.Episodes, v.Of, v.Program)
	}
	if n < fewEpisodes {
		fmt.Fprintf(b, "%s too few to tell a job or process seen in some of them from chance: record longer, over several more runs of a suspected job.\n",
			map[bool]string{true: "One episode is", false: english.Count(n, "episode") + " are"}[n == 1])
	}
}

// togetherText says how many episodes two or more named jobs explain
// together, and whether their schedules combine into the period.
func togetherText(b *strings.Builder, r *correlate.Result) {
	jobs, covered := 0, map[int]bool{}
	var names []string
	for i := range r.Culprits {
		c := &r.Culprits[i]
		if c.Kind == correlate.KindTimer || c.Kind == correlate.KindCron {
			jobs++
			names = append(names, c.Name)
			for _, e := range c.Episodes {
				covered[e] = true
			}
		}
	}
	if jobs > 1 {
		line := fmt.Sprintf("Together, %s explain %d of %d episodes", strings.Join(names, " and "), len(covered), len(r.Episodes))
		if combinedPeriod(r) {
			line += fmt.Sprintf("; their schedules combine into the %s period", correlate.FormatDuration(r.Period.Period))
		}
		fmt.Fprintf(b, "%s.\n\n", line)
	}
}

// culpritText is one culprit's part of the verdict: its title, what it
// explains, its schedule, its processes, its evidence and what to do.
func culpritText(b *strings.Builder, r *correlate.Result, c *correlate.Culprit, md bool, bullet string) {
	ind := "   "
	// Markdown joins lines into one paragraph unless they end in two
	// spaces.
	br := ""
	if md {
		br = "  "
	}
	num, name, conf := fmt.Sprintf("%d.", c.Rank), c.Name, fmt.Sprintf("%s confidence (%.2f)", c.ConfidenceLabel(), c.Confidence)
	if len(c.UndecidedWith) > 0 {
		num, conf = "?", fmt.Sprintf("undecided with %s: not named (correlation score %.2f, which does not tell them apart)", english.List(c.UndecidedWith, "and"), c.Confidence)
	}
	if md {
		name = "**" + name + "**"
	}
	title := fmt.Sprintf("%s %s — %s, %s", num, name, kindName(c), conf)
	fmt.Fprintln(b, title+strings.Repeat(" ", len(br)))
	fmt.Fprintf(b, "%s%s.%s\n", ind, explainsLine(r, c), br)
	if j := c.Job; j != nil {
		fmt.Fprintf(b, "%s%s.%s\n", ind, firesLine(c, j, md), br)
	} else if c.Period > 0 {
		fmt.Fprintf(b, "%sRecurs every %s.%s\n", ind, correlate.FormatDuration(c.Period), br)
	}
	if len(c.Processes) > 0 {
		fmt.Fprintf(b, "%s%s.%s\n", ind, processesLine(c, md), br)
	}
	fmt.Fprintf(b, "%sEvidence:\n", ind)
	for _, e := range evidence(r, c) {
		if md {
			e = mdEscape(e)
		}
		fmt.Fprintf(b, "%s%s%s\n", ind, bullet, e)
	}
	fmt.Fprintf(b, "%sWhat to do:\n", ind)
	for _, a := range advice(c) {
		if !md {
			a = strings.ReplaceAll(a, "`", "")
		}
		fmt.Fprintf(b, "%s%s%s\n", ind, bullet, a)
	}
}

// explainsLine is "Explains 6 of 6 episodes (100%) …": of the spike
// episodes too, and how many of its firings an episode followed.
func explainsLine(r *correlate.Result, c *correlate.Culprit) string {
	line := fmt.Sprintf("Explains %d of %d episodes (%.0f%%)", c.EpisodesExplained, c.EpisodesTotal,
		100*float64(c.EpisodesExplained)/float64(max(1, c.EpisodesTotal)))
	if r.HasLatency {
		line += fmt.Sprintf(" and %d of %d spike episodes", spikesExplained(r, c), spikeEpisodes(r))
	}
	if c.Firings > 0 {
		verb := "were"
		if c.FiringsMatched == 1 {
			verb = "was"
		}
		line += fmt.Sprintf("; %d of its %d firings %s followed by an episode", c.FiringsMatched, c.Firings, verb)
	}
	return line
}

// firesLine is a job's "Fires every …": its period, schedule, command
// and unit.
func firesLine(c *correlate.Culprit, j *timers.Job, md bool) string {
	what := "Fires"
	if c.Period > 0 {
		what += " every " + correlate.FormatDuration(c.Period)
	}
	if len(j.Schedule) > 0 {
		var sched []string
		for _, e := range j.Schedule {
			sched = append(sched, code(e, md))
		}
		what += " (" + strings.Join(sched, ", ") + ")"
	}
	if j.Command != "" {
		what += "; runs " + code(j.Command, md)
	}
	if j.Unit != "" {
		what += " as " + j.Unit
	}
	return what
}

// processesLine is "Its processes (…) did … of I/O per episode"
// (processesText), with the memory it took when that credited it.
func processesLine(c *correlate.Culprit, md bool) string {
	ps, sep := processesText(c.Processes)
	procs := strings.Join(ps, sep)
	if md {
		procs = mdEscape(procs)
	}
	did := fmt.Sprintf("did %s of I/O per episode on average", correlate.FormatBytes(c.BytesPerEpisode))
	if c.Proof != nil {
		if m, ok := memCredit(c.Proof); ok {
			did = fmt.Sprintf("took %s of memory per episode (median resident memory growth) and %s", correlate.FormatBytes(m.bytes), did)
		}
	}
	return fmt.Sprintf("Its processes (%s) %s", procs, did)
}

// mdEscape backslash-escapes the characters Markdown would read as
// emphasis, code, links or HTML in plain text (a cron schedule's *, a
// unit name's _), so Markdown and the HTML page built from it show the
// text as it is.
func mdEscape(s string) string {
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`)

func code(s string, md bool) string {
	if md {
		return "`" + s + "`"
	}
	return s
}

// combinedPeriod says whether the named jobs' schedules make the
// episodes' period: every job's own period is a whole multiple of it
// (within 10 %) and their credited episodes are most of its members.
func combinedPeriod(r *correlate.Result) bool {
	p := r.Period
	if p == nil || p.Period <= 0 {
		return false
	}
	members := map[int]bool{}
	for _, m := range p.Members {
		members[m] = true
	}
	on := map[int]bool{}
	for i := range r.Culprits {
		c := &r.Culprits[i]
		if c.Kind != correlate.KindTimer && c.Kind != correlate.KindCron {
			continue
		}
		if c.Period <= 0 {
			return false
		}
		k := math.Round(float64(c.Period) / float64(p.Period))
		if k < 2 || math.Abs(float64(c.Period)-k*float64(p.Period)) > 0.1*float64(p.Period) {
			return false
		}
		for _, e := range c.Episodes {
			if members[e] {
				on[e] = true
			}
		}
	}
	return 2*len(on) > len(p.Members)
}

// failingText writes the failing-load finding first: a service that
// failed most of the time is never a calm run.
func failingText(b *strings.Builder, r *correlate.Result) {
	f := r.Failing
	if f == nil {
		return
	}
	fmt.Fprintf(b, "The load was failing: %d of %d requests failed (%.1f%%); at least half failed in %d of %d intervals with requests, from %s to %s. Failure was the run's normal state, so it is no spike, and this run cannot show what memory pressure did to the service's latency: check the service and the load's target (refused connections, a wrong URL or port, an error status), then record again.\n\n",
		f.Errors, f.Requests, 100*float64(f.Errors)/float64(f.Requests), f.Failing, f.Intervals,
		in(r, f.Start).Format("15:04:05"), in(r, f.End).Format("15:04:05"))
}

// sustainedText writes the sustained-pressure finding first: pressure
// that never stops is no episode, and never "no pressure".
func sustainedText(b *strings.Builder, r *correlate.Result, bullet string) {
	s := r.Sustained
	if s == nil {
		return
	}
	scope := "the host"
	if s.Scope == correlate.PSICgroup {
		scope = "the recorded cgroup"
	}
	baseline := "It is the baseline of this recording, and no stall rose further above it: no episode."
	if n := len(r.Episodes); n > 0 {
		baseline = fmt.Sprintf("It is the baseline of this recording: the %s below rose further above it.", english.Count(n, "episode"))
	}
	fmt.Fprintf(b, "Sustained memory pressure: %s stalled on memory %.1f%% of the time from %s to %s (%s of stall; %d of %d intervals at or above %.0f%%). %s\n",
		scope, 100*s.MeanShare, in(r, s.Start).Format("15:04:05"), in(r, s.End).Format("15:04:05"),
		correlate.FormatDuration(s.Stall), s.Above, s.Intervals, 100*s.Level, baseline)
	if len(s.Memory) > 0 {
		var ps []string
		for _, m := range s.Memory {
			ps = append(ps, fmt.Sprintf("%s %d (%s anon, %s file)", m.Comm, m.PID, correlate.FormatBytes(m.AnonBytes), correlate.FormatBytes(m.FileBytes)))
		}
		fmt.Fprintf(b, "%sheld the most memory then: %s\n", bullet, strings.Join(ps, ", "))
	}
	if len(s.IO) > 0 {
		var ps []string
		for _, p := range s.IO {
			ps = append(ps, fmt.Sprintf("%s %d (%s)", procName(p), p.PID, correlate.FormatBytes(p.Bytes())))
		}
		fmt.Fprintf(b, "%sdid the most I/O then (reclaim-driving): %s\n", bullet, strings.Join(ps, ", "))
	}
	if s.OutsideLeftOut > 0 {
		fmt.Fprintf(b, "%s%s outside the analysed cgroup left out of these lists: they cannot cause its reclaim\n", bullet, english.Count(s.OutsideLeftOut, "process"))
	}
	if len(s.Memory) == 0 && len(s.IO) == 0 && s.OutsideLeftOut == 0 {
		fmt.Fprintf(b, "%sno per-process memory or I/O was recorded: record as root to see who held the memory\n", bullet)
	}
	b.WriteString("\n")
}

// stallNote gives the recording's total memory stall of the scope, so "no
// episode" is read with what was measured: "(the host stalled on memory
// for 0s in all)".
func stallNote(r *correlate.Result) string {
	if _, ok := r.Baselines[correlate.PSISome]; !ok {
		return ""
	}
	stall, who := r.Totals.MemStall, "the host"
	if r.PSIScope == correlate.PSICgroup {
		stall, who = r.Totals.CgroupMemStall, "the recorded cgroup"
	}
	return fmt.Sprintf(" (%s stalled on memory for %s in all)", who, correlate.FormatDuration(stall))
}

// notNamedText writes "Not named": every job of the recording's
// inventory the verdict does not name, with why. A job that ran, or was
// scheduled near episodes, has a line of its own; jobs with the same
// reason of the other kinds (cannot run here, did not run, whether they
// ran unknown) share one, their names first.
func notNamedText(b *strings.Builder, r *correlate.Result, bullet string) {
	if len(r.NotRun) == 0 {
		return
	}
	named := 0
	for i := range r.Culprits {
		if r.Culprits[i].Job != nil {
			named++
		}
	}
	und := ""
	if n := len(r.Undecided); n > 0 {
		und = fmt.Sprintf("; %d undecided, above", n)
	}
	fmt.Fprintf(b, "\nNot named (%d of the recording's %s%s):\n", len(r.NotRun), english.Count(len(r.NotRun)+named+len(r.Undecided), "periodic job"), und)
	type line struct {
		names  []string
		reason string
	}
	var own, shared []*line
	byReason := map[string]*line{}
	for _, nr := range r.NotRun {
		why := notRunReason(nr)
		switch nr.Kind {
		case correlate.NotRunCannot, correlate.NotRunDidNot, correlate.NotRunUnknown, correlate.NotRunOtherCgroup:
			if l := byReason[why]; l != nil {
				l.names = append(l.names, nr.Name)
				continue
			}
			l := &line{names: []string{nr.Name}, reason: why}
			byReason[why] = l
			shared = append(shared, l)
		default:
			own = append(own, &line{names: []string{nr.Name}, reason: why})
		}
	}
	for _, l := range append(own, shared...) {
		names := strings.Join(l.names, ", ")
		if len(l.names) > 1 {
			names += fmt.Sprintf(" (%d jobs)", len(l.names))
		}
		fmt.Fprintf(b, "%s%s: %s.\n", bullet, names, l.reason)
	}
}

// spikesWhere is where the recording's spike intervals are: in how many
// episodes, and how many spikes (runs of spike intervals) lie outside
// them, so that a count of intervals is not read as all in episodes.
func spikesWhere(r *correlate.Result) string {
	n, eps, lone := english.Count(r.Spikes, "spike interval"), spikeEpisodes(r), len(r.LoneSpikes)
	where := english.Count(eps, "episode")
	if eps > 0 && eps < len(r.Episodes) {
		where = fmt.Sprintf("%d of the %d episodes", eps, len(r.Episodes))
	}
	switch {
	case lone == 0:
		return n + " in " + where
	case eps == 0:
		return n + ", all outside episodes (" + english.Count(lone, "spike") + ")"
	}
	return n + " in " + where + " and " + english.Count(lone, "spike") + " outside them"
}
