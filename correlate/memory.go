package correlate

import (
	"time"

	"github.com/memdiag/memdiag/memstate"
)

// OOMKill is an interval in which the kernel OOM-killed processes
// (/proc/vmstat oom_kill rose, on the whole host).
type OOMKill struct {
	Time  time.Time `json:"time"`  // end of the interval
	Count int       `json:"count"` // oom_kill delta, host-wide
	// Victims are the killed processes as the kernel log names them
	// (Sample.OOMKills: recorded by watch from /dev/kmsg); empty when the
	// recording has not them (older recording, log unreadable).
	Victims []OOMVictim `json:"victims,omitempty"`
	// Group is the --cgroup group recorded ("" for none) and InGroup how
	// many of the kills were in it: the rise of its own oom_kill counter
	// (memory.events, v1 memory.oom_control), nil when not recorded. 0
	// means the kills were another group's.
	Group   string `json:"group,omitempty"`
	InGroup *int   `json:"in_group,omitempty"`
	// Exited are the processes whose exit was recorded in that interval
	// ("comm pid"): the victim is among them when process events or
	// polling saw it, with every other process that happened to exit.
	Exited []string `json:"exited,omitempty"`
}

// OOMVictim is one killed process: record.OOMVictim, and whether its
// memory cgroup is outside the --cgroup group analysed.
type OOMVictim struct {
	PID        int    `json:"pid"`
	Comm       string `json:"comm"`
	Cgroup     string `json:"cgroup,omitempty"`     // its memory cgroup (task_memcg)
	OOMCgroup  string `json:"oom_cgroup,omitempty"` // the cgroup whose limit was hit
	Constraint string `json:"constraint,omitempty"` // memcg, global, cpuset, mempolicy
	// OutsideScope: a --cgroup group was recorded and the victim's memory
	// cgroup is neither it, nor a descendant, nor a non-root ancestor.
	OutsideScope bool `json:"outside_scope,omitempty"`
}

// memoryFindings fills Result.Growth (steady anon growth of the recorded
// processes: the top by RSS and every grower, memstate.Growth, each with
// the allocator evidence recorded for it), from fits (Series.fitGrowth),
// and Result.OOMKills.
func memoryFindings(sr *Series, res *Result, fits []memstate.ProcGrowth) {
	for _, g := range fits {
		if g.Growing {
			g.AttachRetention(sr.retention[procKey{g.PID, g.StartTicks}])
			res.Growth = append(res.Growth, g)
		}
	}
	res.OOMKills = append(res.OOMKills, sr.ooms...)
	if sr.leftOutSamples > 0 {
		res.Warnings = append(res.Warnings, Warning{Kind: WarnGrowthLeftOut, Samples: sr.leftOutSamples, Processes: sr.leftOutMax})
	}
}

// fitGrowth fits the RSS growth of the recorded processes
// (memstate.GrowthSeries.Fit, which only sr.growth is read and repacked
// by) on a goroutine of its own and sends the fits, for memoryFindings:
// it takes 0.1 s of a day's analyze that need not wait for the rest.
// Analyze must receive them before it returns.
func (sr *Series) fitGrowth(minWindow time.Duration) <-chan []memstate.ProcGrowth {
	gro := memstate.DefaultGrowthOptions()
	if minWindow > 0 {
		gro.MinObserved = minWindow
	}
	fits := make(chan []memstate.ProcGrowth, 1)
	go func() { fits <- sr.growth.Fit(gro) }()
	return fits
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
			// Under a cgroup scope the group's own onset is the
			// episode's; the host's (another tenant may have stalled)
			// only stands in when the group's was not recorded.
			own, had := o.Scope != "host", e.Onset != nil && e.Onset.Scope != "host"
			if res.PSIScope == PSICgroup && own != had && e.Onset != nil {
				if own {
					e.Onset = o
				}
				continue
			}
			if e.Onset == nil || o.Time.Before(e.Onset.Time) {
				e.Onset = o
			}
		}
	}
}
