package confirm

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/tables"
)

// Report is a finished (or interrupted) experiment: what was held off,
// each block, and the statistics.
type Report struct {
	// Job is the first (or only) job held off, Jobs all of them, in the
	// order given; Change says what B blocks change for each
	// (Change.Describe), one line per job in the table, joined by "; " in
	// the JSON.
	Job     string        `json:"job"`
	Jobs    []string      `json:"jobs"`
	Change  []string      `json:"-"`
	Command []string      `json:"command"`
	Block   time.Duration `json:"block_ns"` // 0: one run of the command per block
	Pairs   int           `json:"pairs"`
	Blocks  []Measurement `json:"-"`
	Result  *Result       `json:"result,omitempty"` // nil when the blocks could not be compared
	// NoVerdict says why there is no Result: too few blocks ran, or the
	// blocks that ran have nothing to compare (Analyze's error).
	NoVerdict string `json:"no_verdict,omitempty"`
	// FiringGap is the longest an A block can go without a firing of the
	// jobs ([FiringGap]); 0 when not known. A blocks all shorter than it
	// cannot refute (Conclude).
	FiringGap time.Duration `json:"firing_gap_ns,omitempty"`
	// Stopped says why the run ended early ("" when every block ran).
	Stopped string `json:"stopped,omitempty"`
	// Fix is the --with file in place in B blocks ("" when the job was
	// held off instead).
	Fix string `json:"fix,omitempty"`
}

// FixOutcome says what the verdict means for the fix in place in B
// blocks: whether it removed the effect, did not, or cannot be told; ""
// without a fix or a verdict. The statistics are the hold-off
// experiment's: "removed" means B with the fix beats A as is by at least
// the smallest effect that matters.
func (r Report) FixOutcome() string {
	if r.Fix == "" || r.Result == nil {
		return ""
	}
	switch r.Result.Verdict {
	case Confirmed:
		return "the fix removed the effect"
	case Refuted:
		return "the fix did not remove the effect"
	}
	return "inconclusive: cannot say whether the fix removed the effect"
}

// blockJSON is a block in the JSON report: the measurement's summary,
// without each request's latency.
type blockJSON struct {
	Index    int       `json:"block"`
	Pair     int       `json:"pair"`
	Arm      Arm       `json:"arm"`
	HeldOff  bool      `json:"held_off"`
	Start    time.Time `json:"start"`
	WallNS   int64     `json:"wall_ns"`
	Requests int       `json:"requests"`
	Errors   int       `json:"errors"`
	// P99NS is null when the block has no successful probe request;
	// the stall fields are null where the block has no PSI: unknown,
	// never 0.
	P99NS      *int64   `json:"p99_ns"`
	Spikes     int      `json:"spikes"`
	StallSome  *int64   `json:"memory_some_stall_us"`
	StallFull  *int64   `json:"memory_full_stall_us"`
	StallShare *float64 `json:"memory_some_stall_share"`
	// SettledNS and StillRunning: Measurement.Settled and StillRunning.
	SettledNS    int64 `json:"settled_ns,omitempty"`
	StillRunning []int `json:"still_running,omitempty"`
}

// Render writes the report as a table (text, for a terminal of width
// columns) or as JSON, in loc's time.
func Render(w io.Writer, r Report, f format.Format, width int, loc *time.Location) error {
	if f == format.JSON {
		return renderJSON(w, r)
	}
	var b strings.Builder
	what := "Held off in B blocks"
	if r.Fix != "" {
		what = "In place in B blocks"
	}
	if len(r.Change) == 1 {
		fmt.Fprintf(&b, "%s: %s\n", what, r.Change[0])
	} else {
		fmt.Fprintf(&b, "%s, together:\n", what)
		for _, c := range r.Change {
			fmt.Fprintf(&b, "  - %s\n", c)
		}
	}
	fmt.Fprintf(&b, "Load: %s, %s, %d pairs (AB BA …)\n\n", strings.Join(r.Command, " "), blockWords(r.Block), r.Pairs)
	b.WriteString(blockTable(r, loc).Text(tables.Options{Width: width}))
	b.WriteString("\n\n")
	b.WriteString(settleNote(r))
	if r.Stopped != "" {
		fmt.Fprintf(&b, "Stopped early: %s.\n", r.Stopped)
	}
	if r.Result == nil {
		fmt.Fprintf(&b, "Verdict: none — %s.\n", r.NoVerdict)
	} else {
		writeVerdict(&b, *r.Result, r.FixOutcome(), fixNote(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// settleNote says which blocks waited for an instance of the job before
// they began — B blocks for one started before the hold, A blocks for
// the run systemd started when the hold ended — and which began with one
// still running; "" when none did.
func settleNote(r Report) string {
	var b strings.Builder
	for _, arm := range []Arm{HeldOff, AsIs} {
		var waited, spilled []string
		var longest time.Duration
		for _, m := range r.Blocks {
			if m.Arm != arm || (m.Settled <= 0 && len(m.StillRunning) == 0) {
				continue
			}
			waited = append(waited, fmt.Sprint(m.Index+1))
			longest = max(longest, m.Settled)
			if len(m.StillRunning) > 0 {
				spilled = append(spilled, fmt.Sprint(m.Index+1))
			}
		}
		if len(waited) == 0 {
			continue
		}
		what, arms := "the job's instance started before the hold", "part of the job's effect counts as B's there"
		if arm == AsIs {
			what = "the job's run started when the hold ended (systemd runs a timer's job at once when it is started again after missing an elapse)"
			arms = "part of that run counts as A's there"
		}
		fmt.Fprintf(&b, "Before %s block%s %s memdiag waited for %s to end (longest %s).\n",
			arm, plural(len(waited)), strings.Join(waited, ", "), what, longest.Round(time.Millisecond))
		if len(spilled) > 0 {
			fmt.Fprintf(&b, "%s block%s %s began with it still running (the wait's bound passed): %s.\n",
				arm, plural(len(spilled)), strings.Join(spilled, ", "), arms)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "\n"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func blockWords(d time.Duration) string {
	if d == 0 {
		return "one run per block"
	}
	return d.String() + " blocks"
}

func blockTable(r Report, loc *time.Location) *tables.Table {
	spikeOver := time.Duration(0)
	if r.Result != nil {
		spikeOver = r.Result.SpikeOver
	}
	t := tables.New("BLOCK", "ARM", "START", "WALL", "REQUESTS", "P99", "SPIKES", "MEM STALL")
	for _, m := range r.Blocks {
		arm := "A as is"
		switch {
		case m.Arm == HeldOff && r.Fix != "":
			arm = "B with fix"
		case m.Arm == HeldOff:
			arm = "B held off"
		}
		req, p99, spikes := "-", "-", "-"
		if len(m.Latencies) > 0 || m.Errors > 0 {
			req = fmt.Sprintf("%d", len(m.Latencies)+m.Errors)
			p99 = m.P99().Round(time.Microsecond * 100).String()
			if spikeOver > 0 {
				spikes = fmt.Sprintf("%d", m.Spikes(spikeOver))
			}
		}
		stall := "-"
		if m.HasPSI {
			stall = fmt.Sprintf("%.2f%% (%s)", 100*m.StallShare(), m.MemorySome.Round(time.Millisecond))
		}
		t.AppendRow(m.Index+1, arm, m.Start.In(loc).Format("15:04:05"), m.Wall.Round(time.Second/10), req, p99, spikes, stall)
	}
	return t
}

// writeVerdict writes the verdict of r, with what it means for a fix
// (outcome, Report.FixOutcome, on the verdict's line, and note after the
// reasons) when there is one.
func writeVerdict(b *strings.Builder, r Result, outcome, note string) {
	unit := func(v float64) string {
		if r.Metric == P99Latency {
			return time.Duration(v * float64(time.Second)).Round(100 * time.Microsecond).String()
		}
		return fmt.Sprintf("%.2f points", 100*v)
	}
	what := "p99 latency"
	if r.Metric == MemoryStall {
		what = "memory stall (PSI some, share of wall time)"
	}
	if outcome != "" {
		outcome = " — " + outcome
	}
	fmt.Fprintf(b, "Verdict: %s%s\n", strings.ToUpper(string(r.Verdict)), outcome)
	fmt.Fprintf(b, "  %s: A %s, B %s; effect A−B %s (%.1f%% of A), 95%% CI [%s, %s] (bootstrap over %d pairs)\n",
		what, unit(r.MeanA), unit(r.MeanB), unit(r.Effect), 100*r.Relative, unit(r.CILow), unit(r.CIHigh), len(r.Pairs))
	exact := "exact"
	if !r.Exact {
		exact = "100000 random"
	}
	fmt.Fprintf(b, "  p = %.3g (one-sided sign-flip permutation, %s); smallest effect that matters: %s\n", r.P, exact, unit(r.MinEffect))
	if r.SpikeOver > 0 {
		fmt.Fprintf(b, "  spikes over %s: A %d, B %d\n", r.SpikeOver.Round(100*time.Microsecond), r.SpikesA, r.SpikesB)
	}
	fmt.Fprintf(b, "  memory stall over all blocks: A %.2f%%, B %.2f%%\n", 100*r.StallA, 100*r.StallB)
	for _, why := range r.Reasons {
		fmt.Fprintf(b, "  %s\n", why)
	}
	if note != "" {
		fmt.Fprintf(b, "  %s\n", note)
	}
}

// fixNote is the line after the verdict's reasons that says what
// "removed" and "did not" rest on; "" without a fix.
func fixNote(r Report) string {
	if r.FixOutcome() == "" {
		return ""
	}
	switch r.Result.Verdict {
	case Confirmed:
		return "B, with the fix in place, beats A as is by at least the smallest effect that matters; whether all of the job's effect is gone, a run holding the job off says"
	case Refuted:
		return "with the fix in place, B gains less than the smallest effect that matters over A as is"
	}
	return ""
}

func renderJSON(w io.Writer, r Report) error {
	type out struct {
		Report
		HeldOff    string      `json:"held_off"`
		FixOutcome string      `json:"fix_outcome,omitempty"`
		Blocks     []blockJSON `json:"blocks"`
	}
	o := out{Report: r, HeldOff: strings.Join(r.Change, "; "), FixOutcome: r.FixOutcome()}
	for _, m := range r.Blocks {
		bj := blockJSON{Index: m.Index + 1, Pair: m.Pair + 1, Arm: m.Arm, HeldOff: m.Arm == HeldOff, Start: m.Start.UTC(), WallNS: int64(m.Wall),
			Requests: len(m.Latencies) + m.Errors, Errors: m.Errors,
			SettledNS: int64(m.Settled), StillRunning: m.StillRunning}
		if len(m.Latencies) > 0 {
			bj.P99NS = new(int64(m.P99()))
		}
		if m.HasPSI {
			bj.StallSome, bj.StallFull, bj.StallShare = new(m.MemorySome.Microseconds()), new(m.MemoryFull.Microseconds()), new(m.StallShare())
		}
		if r.Result != nil && r.Result.SpikeOver > 0 {
			bj.Spikes = m.Spikes(r.Result.SpikeOver)
		}
		o.Blocks = append(o.Blocks, bj)
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(o)
}
