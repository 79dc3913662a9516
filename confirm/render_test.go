package confirm

import (
	"bytes"
	"encoding/json"
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
	return Report{Job: c.Job, Change: c.Describe(), Command: []string{"k6", "run", "load.js"}, Block: 10 * time.Second, Pairs: 5, Blocks: bl, Result: &res}
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
}
