package gatereport

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/record"
)

// The synthetic runs of gate's own tests (gate/eval_test.go), to render.

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func u64(x uint64) *uint64 { return &x }

// step is one synthetic sample: PSI memory totals in µs and avg10, and a
// few counters (nil: absent).
type step struct {
	sec                 float64
	someUS, fullUS      int64
	avg10               float64
	pswpout, refault    *uint64
	oomKill, pgscanDrct *uint64
}

func psiSnap(st step) *record.PSI {
	return &record.PSI{Memory: &record.PSIResource{
		Some: record.PSILine{Avg10: st.avg10, Total: time.Duration(st.someUS) * time.Microsecond},
		Full: &record.PSILine{Total: time.Duration(st.fullUS) * time.Microsecond},
	}}
}

// host builds host-scope samples (PSI and VMStat).
func host(steps ...step) []record.Sample {
	var out []record.Sample
	for i, st := range steps {
		out = append(out, record.Sample{Seq: i, Time: at(st.sec), PSI: psiSnap(st),
			VMStat: &record.VMStat{Pswpout: st.pswpout, WorkingsetRefaultFile: st.refault, OOMKill: st.oomKill, PgscanDirect: st.pgscanDrct}})
	}
	return out
}

func mustParse(t *testing.T, exprs ...string) []*gate.Threshold {
	t.Helper()
	ths, err := gate.ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return ths
}
