package correlate

import (
	"strconv"
	"time"

	"github.com/memdiag/memdiag/memview"
	"github.com/memdiag/memdiag/record"
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
// top processes by RSS, memview.Growth) and Result.OOMKills.
func memoryFindings(rec *record.Recording, res *Result) {
	for _, g := range memview.Growth(record.RSSSamples(rec.Samples), memview.DefaultGrowthOptions()) {
		if g.Growing {
			res.Growth = append(res.Growth, g)
		}
	}
	for i := 1; i < len(rec.Samples); i++ {
		prev, cur := rec.Samples[i-1].VMStat, rec.Samples[i].VMStat
		if prev == nil || cur == nil || prev.OOMKill == nil || cur.OOMKill == nil || *cur.OOMKill <= *prev.OOMKill {
			continue
		}
		k := OOMKill{Time: rec.Samples[i].Time, Count: int(*cur.OOMKill - *prev.OOMKill)}
		for _, e := range rec.Samples[i].Events {
			if e.Kind == "exit" {
				k.Exited = append(k.Exited, e.Comm+" "+strconv.Itoa(e.PID))
			}
		}
		res.OOMKills = append(res.OOMKills, k)
	}
}

// attachOnsets gives each episode the first stall onset recorded between
// the sample before its first interval and its end: a precise start of
// the stall, with the processes seen at that moment.
func attachOnsets(rec *record.Recording, res *Result) {
	if len(res.Episodes) == 0 {
		return
	}
	var onsets []*record.StallOnset
	for i := range rec.Samples {
		for j := range rec.Samples[i].Onsets {
			onsets = append(onsets, &rec.Samples[i].Onsets[j])
		}
	}
	for i := range res.Episodes {
		e := &res.Episodes[i]
		from := e.Start.Add(-res.Interval)
		for _, o := range onsets {
			if o.Time.Before(from) || o.Time.After(e.End) {
				continue
			}
			if e.Onset == nil || o.Time.Before(e.Onset.Time) {
				e.Onset = o
			}
		}
	}
}
