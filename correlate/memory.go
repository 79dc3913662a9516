package correlate

import (
	"time"

	"github.com/memdiag/memdiag/memstate"
)

// OOMKill is an interval in which the kernel OOM-killed processes
// (/proc/vmstat oom_kill rose), with the processes that exited in it.
type OOMKill struct {
	Time  time.Time `json:"time"`  // end of the interval
	Count int       `json:"count"` // oom_kill delta
	// Exited are the processes whose exit was recorded in that interval
	// ("comm pid"): the victim is among them when process events or
	// polling saw it.
	Exited []string `json:"exited,omitempty"`
}

// memoryFindings fills Result.Growth (steady anon growth of the recorded
// top processes by RSS, memstate.Growth) and Result.OOMKills.
func memoryFindings(sr *Series, res *Result, minWindow time.Duration) {
	gro := memstate.DefaultGrowthOptions()
	if minWindow > 0 {
		gro.MinObserved = minWindow
	}
	for _, g := range sr.growth.Fit(gro) {
		if g.Growing {
			res.Growth = append(res.Growth, g)
		}
	}
	res.OOMKills = append(res.OOMKills, sr.ooms...)
}

// attachOnsets gives each episode the first stall onset recorded between
// the sample before its first interval and its end: a precise start of
// the stall, with the processes seen at that moment.
func attachOnsets(sr *Series, res *Result) {
	if len(res.Episodes) == 0 {
		return
	}
	for i := range res.Episodes {
		e := &res.Episodes[i]
		from := e.Start.Add(-res.Interval)
		for j := range sr.onsets {
			o := &sr.onsets[j]
			if o.Time.Before(from) || o.Time.After(e.End) {
				continue
			}
			if e.Onset == nil || o.Time.Before(e.Onset.Time) {
				e.Onset = o
			}
		}
	}
}
