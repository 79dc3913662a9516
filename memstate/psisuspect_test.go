package memstate

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/signal"
)

// The two real reads of testdata/activity (reclaim and refaults, no stall) are not
// suspect; the same reads with the second one's counters frozen at the
// first's while its memory total rises 96 % of the interval are.
func TestSuspectPSI(t *testing.T) {
	prev, cur := activitySnapshot(t, "0"), activitySnapshot(t, "1")
	cur.Kernel = "6.18.44-fc-v1098"
	if r := Build(cur.Time, prev, cur, Host{}, nil, ProcScan{}, nil, KernelLog{}); len(r.SuspectPSI) != 0 {
		t.Errorf("real reads: false alarm %+v", r.SuspectPSI)
	}

	frozen := cur
	frozen.VMStat = prev.VMStat
	p := *prev.PSI
	dt := cur.Time.Sub(prev.Time)
	p.Some.Total += time.Duration(0.96 * float64(dt))
	frozen.PSI = &p
	r := Build(cur.Time, prev, frozen, Host{}, nil, ProcScan{}, nil, KernelLog{})
	if len(r.SuspectPSI) != 1 || r.Kernel != "6.18.44-fc-v1098" {
		t.Fatalf("frozen counters: %+v (kernel %q), want one finding", r.SuspectPSI, r.Kernel)
	}
	x := r.SuspectPSI[0]
	if x.Kind != signal.PSIStallWithoutActivity || math.Abs(x.TotalShare-96) > 0.01 || !x.From.Equal(prev.Time) || !x.To.Equal(cur.Time) {
		t.Errorf("finding %+v, want a 96 %% stall without activity over the interval", x)
	}
}
