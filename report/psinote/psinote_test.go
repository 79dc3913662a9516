package psinote

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/signal"
)

func TestSentence(t *testing.T) {
	at := time.Date(2026, 12, 6, 8, 0, 20, 0, time.UTC)
	for _, c := range []struct {
		x      signal.PSISuspect
		kernel string
		want   string
	}{
		{signal.PSISuspect{Kind: signal.PSIAveragesVsTotal, Resource: "memory", Line: "some", Avg: 10, From: at.Add(-20 * time.Second), To: at,
			Reported: 2, Bound: 40.25, TotalShare: 100, Checked: 9, Contradicts: 4},
			"", "suspect PSI (kernel version unknown): the host's memory some avg10 read 2 % at 08:00:20 while its total rose 100 % of the 20s before, which allows at least 40.2 % (4 of 9 checks disagree); the averages and total count the same stall time, so one of them is wrong, as a PSI accounting bug of this kernel would make them: what is judged on this PSI is unproven"},
		{signal.PSISuspect{Kind: signal.PSIStallWithoutActivity, Resource: "memory", Line: "some", From: at.Add(-time.Minute), To: at,
			TotalShare: 80, Counters: []string{"pgscan_kswapd", "pgscan_direct", "workingset_refault_file", "pgmajfault"}},
			"5.13.0", "suspect PSI (kernel 5.13.0): the host's memory some total says 80 % of 07:59:20–08:00:20 (1m0s) was stalled, yet none of 4 reclaim, refault, swap, major-fault and allocstall counters moved (pgscan_*, workingset_*, pgmajfault); a memory stall comes from those, so a PSI accounting bug of this kernel is likely (or a cgroup held above memory.high with nothing it can reclaim): what is judged on this PSI is unproven"},
	} {
		if got := Sentence(c.x, "the host", c.kernel, nil); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
