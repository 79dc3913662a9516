package report

import (
	"testing"

	"github.com/memdiag/memdiag/correlate"
)

// TestSetCulprit: the verdict's first culprit and all its processes' PIDs
// lead the summary; no result or no culprit leaves the options as they are.
func TestSetCulprit(t *testing.T) {
	o := SummaryOptions{TopN: 5}
	o.SetCulprit(nil)
	o.SetCulprit(&correlate.Result{})
	if o.Culprit != "" || o.CulpritPIDs != nil {
		t.Fatalf("no culprit: %+v", o)
	}
	res := &correlate.Result{Culprits: []correlate.Culprit{
		{Name: "backup.timer", Processes: []correlate.ProcActivity{{PIDs: []int{10, 11}}, {PIDs: []int{12}}}},
		{Name: "other.service", Processes: []correlate.ProcActivity{{PIDs: []int{99}}}},
	}}
	o.SetCulprit(res)
	if o.Culprit != "backup.timer" || len(o.CulpritPIDs) != 3 || o.CulpritPIDs[2] != 12 || o.TopN != 5 {
		t.Errorf("got %+v, want backup.timer with PIDs 10 11 12", o)
	}
}
