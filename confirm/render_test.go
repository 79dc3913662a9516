package confirm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/golden"
)

func renderReport(t *testing.T) Report {
	t.Helper()
	bl := blocksFromP99([]float64{600, 640, 580, 620, 650}, []float64{500, 520, 490, 510, 520})
	for i := range bl {
		bl[i].Index = i
		bl[i].Start = t0.Add(time.Duration(i) * 10 * time.Second)
		bl[i].MemorySome = 250 * time.Millisecond
		if bl[i].Arm == HeldOff {
			bl[i].MemorySome = 20 * time.Millisecond
		}
	}
	res, err := Analyze(bl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := Change{Kind: KindCron, Job: "cron.d/pcp-pmlogger:8", File: "/etc/cron.d/pcp-pmlogger", Line: 8}
	return Report{Job: c.Job, Jobs: []string{c.Job}, Change: []string{c.Describe()}, Command: []string{"k6", "run", "load.js"}, Block: 10 * time.Second, Pairs: 5, Blocks: bl, Result: &res}
}

func TestRenderTable(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, renderReport(t), format.Table, 100, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/confirmed.table.txt", b.String())
}

func TestRenderJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, renderReport(t), format.JSON, 0, time.UTC); err != nil {
		t.Fatal(err)
	}
	var got struct {
		HeldOff string `json:"held_off"`
		Blocks  []struct {
			Block   int   `json:"block"`
			Pair    int   `json:"pair"`
			Arm     Arm   `json:"arm"`
			P99NS   int64 `json:"p99_ns"`
			Spikes  int   `json:"spikes"`
			StallUS int64 `json:"memory_some_stall_us"`
		} `json:"blocks"`
		Result Result `json:"result"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Blocks) != 10 || got.Blocks[1].Arm != HeldOff || got.Blocks[1].P99NS != int64(500*time.Millisecond) || got.Blocks[0].StallUS != 250000 || got.Blocks[0].Spikes != 2 {
		t.Errorf("blocks %+v", got.Blocks)
	}
	if got.Result.Verdict != Confirmed || got.Result.P != 1.0/32 {
		t.Errorf("result %+v", got.Result)
	}
	// Pairs count from 1 in the result as in the blocks.
	if len(got.Result.Pairs) != 5 || got.Result.Pairs[0].Pair != 1 || got.Result.Pairs[4].Pair != 5 || got.Blocks[0].Pair != 1 {
		t.Errorf("pairs %+v, first block's pair %d", got.Result.Pairs, got.Blocks[0].Pair)
	}
}

// TestRenderJobsTogether: two jobs held off together are each listed,
// in the table and in the JSON's jobs and held_off.
func TestRenderJobsTogether(t *testing.T) {
	r := renderReport(t)
	a := Change{Kind: KindSystemd, Job: "pmlogger_check.timer", Unit: "pmlogger_check.timer", WasActive: true}
	b := Change{Kind: KindSystemd, Job: "pmlogger_farm_check.timer", Unit: "pmlogger_farm_check.timer", WasActive: true}
	r.Job, r.Jobs, r.Change = a.Job, []string{a.Job, b.Job}, []string{a.Describe(), b.Describe()}
	var tb bytes.Buffer
	if err := Render(&tb, r, format.Table, 100, time.UTC); err != nil {
		t.Fatal(err)
	}
	want := "Held off in B blocks, together:\n" +
		"  - pmlogger_check.timer: stopped (systemctl stop) for each run of B blocks and started again after it\n" +
		"  - pmlogger_farm_check.timer: stopped (systemctl stop) for each run of B blocks and started again after it\n"
	if !strings.HasPrefix(tb.String(), want) {
		t.Errorf("table begins\n%s\nwant\n%s", tb.String()[:min(len(tb.String()), 300)], want)
	}
	var jb bytes.Buffer
	if err := Render(&jb, r, format.JSON, 0, time.UTC); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Job     string   `json:"job"`
		Jobs    []string `json:"jobs"`
		HeldOff string   `json:"held_off"`
	}
	if err := json.Unmarshal(jb.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Job != a.Job || strings.Join(got.Jobs, ",") != a.Job+","+b.Job || got.HeldOff != a.Describe()+"; "+b.Describe() {
		t.Errorf("JSON %+v", got)
	}
}

// TestRenderFix: with --with, the report says what was in place, labels
// the B blocks with the fix and says whether it removed the effect, in
// the table and the JSON; the verdict's statistics are the same.
func TestRenderFix(t *testing.T) {
	r := renderReport(t)
	c := Change{Kind: KindDropIn, Job: "pmlogger_check.timer", Unit: "pmlogger_check.service", Fix: "fix.conf",
		File: "/etc/systemd/system/pmlogger_check.service.d/50-memdiag-confirm.conf"}
	r.Job, r.Jobs, r.Change, r.Fix = c.Job, []string{c.Job}, []string{c.Describe()}, c.Fix
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, 100, time.UTC); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/fix-confirmed.table.txt", b.String())
	b.Reset()
	if err := Render(&b, r, format.JSON, 0, time.UTC); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Fix        string `json:"fix"`
		FixOutcome string `json:"fix_outcome"`
		Result     Result `json:"result"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Fix != "fix.conf" || got.FixOutcome != "the fix removed the effect" || got.Result.Verdict != Confirmed {
		t.Errorf("JSON: %+v", got)
	}
	for v, want := range map[Verdict]string{Refuted: "the fix did not remove the effect", Inconclusive: "inconclusive: cannot say whether the fix removed the effect"} {
		res := *r.Result
		res.Verdict = v
		r.Result = &res
		if got := r.FixOutcome(); got != want {
			t.Errorf("%s: %q, want %q", v, got, want)
		}
	}
	if got := renderReport(t).FixOutcome(); got != "" {
		t.Errorf("without a fix: %q", got)
	}
}

// TestRenderUnknownIsNotZero: blocks without probe requests and without
// PSI (a --root without proc/pressure) have unknown latency and stall:
// null in JSON, never 0; and the report says why there is no verdict.
func TestRenderUnknownIsNotZero(t *testing.T) {
	bl := make([]Measurement, 4)
	for i := range bl {
		bl[i] = Measurement{Block: Block{Index: i, Pair: i / 2, Arm: AsIs}, Wall: time.Second, Start: time.Date(2026, 12, 7, 12, 0, i, 0, time.UTC)}
		if i%2 == 1 {
			bl[i].Arm = HeldOff
		}
	}
	rep, err := Conclude(Report{Job: "cron.d/backup:1", Jobs: []string{"cron.d/backup:1"}, Command: []string{"true"}, Pairs: 2}, bl, nil, Options{})
	if err == nil || rep.Result != nil || !strings.Contains(rep.NoVerdict, "no memory PSI") {
		t.Fatalf("Conclude: %v, result %v, no verdict %q", err, rep.Result, rep.NoVerdict)
	}
	var b bytes.Buffer
	if err := Render(&b, rep, format.Table, 100, time.UTC); err != nil {
		t.Fatal(err)
	}
	if want := "Verdict: none — nothing to compare: the blocks had no probe requests"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	if err := Render(&b, rep, format.JSON, 0, time.UTC); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NoVerdict string           `json:"no_verdict"`
		Blocks    []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.NoVerdict != rep.NoVerdict || len(doc.Blocks) != 4 {
		t.Fatalf("JSON: no_verdict %q, %d blocks", doc.NoVerdict, len(doc.Blocks))
	}
	for _, k := range []string{"p99_ns", "memory_some_stall_us", "memory_full_stall_us", "memory_some_stall_share"} {
		if v, ok := doc.Blocks[0][k]; !ok || v != nil {
			t.Errorf("block 1 %s = %v (present %v), want null", k, v, ok)
		}
	}
}

// TestTooShortToRefute: blocks of one run of the load (--block 0) all
// shorter than the time between the job's firings cannot refute (they
// may hold no firing); long enough ones can; a confirmed verdict stands
// either way; an explicit --block was warned about and is left alone.
func TestTooShortToRefute(t *testing.T) {
	for _, c := range []struct {
		block, wall time.Duration
		in, want    Verdict
	}{
		{0, 5 * time.Second, Refuted, Inconclusive},
		{0, 2 * time.Minute, Refuted, Refuted},
		{0, 5 * time.Second, Confirmed, Confirmed},
		{4 * time.Second, 4 * time.Second, Refuted, Refuted},
	} {
		bl := []Measurement{{Block: Block{Arm: AsIs}, Wall: c.wall}, {Block: Block{Index: 1, Arm: HeldOff}, Wall: c.wall}}
		rep := Report{Block: c.block, FiringGap: 2 * time.Minute, Blocks: bl, Result: &Result{Verdict: c.in}}
		tooShortToRefute(&rep)
		if rep.Result.Verdict != c.want {
			t.Errorf("A blocks of %s, %s: %s, want %s (%q)", c.wall, c.in, rep.Result.Verdict, c.want, rep.Result.Reasons)
		}
	}
}
