// Package gatetest builds the synthetic runs that gate's tests judge and
// report/gatereport's tests render: host-scope samples whose PSI memory
// totals and counters are given step by step.
package gatetest

import (
	"time"

	"github.com/memdiag/memdiag/record"
)

// T0 is the time of a run's first sample.
var T0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// At is sec seconds after T0.
func At(sec float64) time.Time { return T0.Add(time.Duration(sec * float64(time.Second))) }

// U64 is a pointer to x (a counter present in a sample).
func U64(x uint64) *uint64 { return &x }

// Step is one synthetic sample: PSI memory totals in µs and avg10, and a
// few counters (nil: absent).
type Step struct {
	Sec                 float64
	SomeUS, FullUS      int64
	Avg10               float64
	Pswpout, Refault    *uint64
	OOMKill, PgscanDrct *uint64
}

// PSI is st's memory pressure as a sample holds it.
func PSI(st Step) *record.PSI {
	return &record.PSI{Memory: &record.PSIResource{
		Some: record.PSILine{Avg10: st.Avg10, Total: time.Duration(st.SomeUS) * time.Microsecond},
		Full: &record.PSILine{Total: time.Duration(st.FullUS) * time.Microsecond},
	}}
}

// Host builds host-scope samples (PSI and VMStat), one per step.
func Host(steps ...Step) []record.Sample {
	var out []record.Sample
	for i, st := range steps {
		out = append(out, record.Sample{Seq: i, Time: At(st.Sec), PSI: PSI(st),
			VMStat: &record.VMStat{Pswpout: st.Pswpout, WorkingsetRefaultFile: st.Refault, OOMKill: st.OOMKill, PgscanDirect: st.PgscanDrct}})
	}
	return out
}
