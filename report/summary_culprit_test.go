package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
)

// TestSetCulprit: the verdict's first culprit and all its processes, by
// PID and start time, lead the summary; a row without start times (a
// result of an older analysis) gives its PIDs with start 0; no result or
// no culprit leaves the options as they are.
func TestSetCulprit(t *testing.T) {
	o := SummaryOptions{TopN: 5}
	o.SetCulprit(nil)
	o.SetCulprit(&correlate.Result{})
	if o.Culprit != "" || o.CulpritProcs != nil {
		t.Fatalf("no culprit: %+v", o)
	}
	res := &correlate.Result{Culprits: []correlate.Culprit{
		{Name: "backup.timer", Processes: []correlate.ProcActivity{
			{PIDs: []int{10, 11}, ProcIDs: []correlate.ProcID{{PID: 10, StartTicks: 500}, {PID: 11, StartTicks: 501}}},
			{PIDs: []int{12}},
		}},
		{Name: "other.service", Processes: []correlate.ProcActivity{{PIDs: []int{99}, ProcIDs: []correlate.ProcID{{PID: 99, StartTicks: 7}}}}},
	}}
	o.SetCulprit(res)
	want := []correlate.ProcID{{PID: 10, StartTicks: 500}, {PID: 11, StartTicks: 501}, {PID: 12}}
	if diff := cmp.Diff(want, o.CulpritProcs); o.Culprit != "backup.timer" || o.TopN != 5 || diff != "" {
		t.Errorf("culprit %q, top %d; want backup.timer, 5; processes (-want +got):\n%s", o.Culprit, o.TopN, diff)
	}
}

// TestSummaryStarsCulpritByStart is issue 30's item 12 after PID reuse
// (case C12 in testdata/cases): in a long watch the culprit's dd (PID
// 20, started at tick 100) exited and a later, unrelated dd was given PID
// 20 (tick 300). Only the culprit's is starred and leads the list; the
// other, though it did more I/O, is listed by its I/O, unmarked. A
// process whose start time is unknown (PID 21, 0 from an older recording)
// is matched by its PID, as before.
func TestSummaryStarsCulpritByStart(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	sm := record.NewSummary(&record.Header{PageSize: 4096})
	sm.Add(&record.Sample{Time: t0})
	sm.Add(&record.Sample{Time: t0.Add(time.Second), Procs: []record.ProcIO{
		{PID: 20, StartTicks: 100, Comm: "dd", Unit: "mdjob.service", DeltaWriteBytes: 300 << 20},
		{PID: 21, Comm: "python3", Unit: "mdjob.service", DeltaReadBytes: 100 << 20},
		{PID: 40, StartTicks: 50, Comm: "postgres", Unit: "postgresql.service", DeltaWriteBytes: 50 << 20},
	}})
	sm.Add(&record.Sample{Time: t0.Add(time.Hour), Procs: []record.ProcIO{
		{PID: 20, StartTicks: 300, Comm: "dd", Unit: "tenant.service", DeltaWriteBytes: 900 << 20},
	}})
	var b bytes.Buffer
	WriteSummaryWith(&b, sm, "run.jsonl", SummaryOptions{TopN: 3, Culprit: "mdjob.timer",
		CulpritProcs: []correlate.ProcID{{PID: 20, StartTicks: 100}, {PID: 21, StartTicks: 400}}})
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 3 && strings.HasPrefix(l, "    ") && f[0] != "PROCESS" {
			rows = append(rows, f[0]+" "+f[1]+" "+f[2]+map[bool]string{true: "*", false: ""}[strings.HasSuffix(l, " *")])
		}
	}
	want := []string{"dd 20 mdjob.service*", "python3 21 mdjob.service*", "dd 20 tenant.service"}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s\n%s", diff, b.String())
	}
}
