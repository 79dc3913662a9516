package exposition

import (
	"slices"
	"sort"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// RecentFirings is how many of a job's last firings within the analysis
// window its stall ratio is taken over.
const RecentFirings = 10

// JobForecast is what a periodic job's recent firings did, from the last
// analysis round: of its last Firings planned firings within the
// analysed window (at most RecentFirings), Stalled were followed by an
// episode of the analysed scope (the victim's cgroup, or the host) within
// the job's lag; Streak is how many of the most recent ones in a row
// were.
type JobForecast struct {
	Job     string // record.Job Name
	Label   string // its periodic_job label
	Firings int
	Stalled int
	Streak  int
	// Latency is the highest latency peak of the episodes that followed
	// its firings over the recording's latency baseline (Stat: p99 …);
	// 0 when no latency was recorded.
	Latency float64
	Stat    string
	// Service: the analysed scope is a service's (a victim or a cgroup
	// was recorded), not the host's.
	Service bool
}

// Ratio is Stalled/Firings, 0 without firings.
func (f JobForecast) Ratio() float64 {
	if f.Firings == 0 {
		return 0
	}
	return float64(f.Stalled) / float64(f.Firings)
}

// forecast judges each job's last RecentFirings planned firings in res
// (the analysis of the header hdr's recording): a firing counts when its
// whole window, [Earliest − one interval, Latest + lag], lies within the
// analysed span, and stalled when an episode starts in that window. The
// window is the correlator's (correlate.jobWindows): Latest is clamped
// to a quarter of the period after Earliest, lag is Options.LagTolerance
// capped at a quarter of the period. A job whose random delay is half its
// period or more (timers.Unpredictable) is left out: its planned times
// say little of when it runs. The cost is one projection of the jobs over
// the window, done once per analysis round, never per scrape.
func forecast(res *correlate.Result, hdr *record.Header, o correlate.Options) []JobForecast {
	if res == nil || len(hdr.Jobs) == 0 || o.Project == nil || res.End.IsZero() {
		return nil
	}
	lagTol := o.LagTolerance
	if lagTol <= 0 {
		lagTol = 60 * time.Second
	}
	jobs := record.TimersJobs(hdr.Jobs)
	byJob := map[string][]timers.Firing{}
	for _, f := range o.Project(jobs, res.Start, res.End, res.Location) {
		byJob[f.Job] = append(byJob[f.Job], f)
	}
	starts := make([]time.Time, len(res.Episodes))
	for i, ep := range res.Episodes {
		starts[i] = ep.Start
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	labels := jobLabels(hdr.Jobs)
	service := res.Victim != nil || res.Cgroup != ""
	var out []JobForecast
	seen := map[string]bool{}
	for _, j := range jobs {
		if seen[j.Name] {
			continue
		}
		seen[j.Name] = true
		fs := byJob[j.Name]
		slices.SortFunc(fs, func(a, b timers.Firing) int { return a.Planned.Compare(b.Planned) })
		period := jobPeriod(j, fs)
		if timers.Unpredictable(j.RandomizedDelaySec, period) {
			continue
		}
		lag := lagTol
		if period > 0 && lag > period/4 {
			lag = period / 4
		}
		type win struct{ from, to time.Time }
		var ws []win
		for _, f := range fs {
			latest := f.Latest
			if period > 0 && latest.Sub(f.Earliest) > period/4 {
				latest = f.Earliest.Add(period / 4)
			}
			w := win{f.Earliest.Add(-res.Interval), latest.Add(lag)}
			if f.Earliest.Before(res.Start) || w.to.After(res.End) {
				continue // not wholly seen: neither stalled nor calm yet
			}
			ws = append(ws, w)
		}
		if len(ws) > RecentFirings {
			ws = ws[len(ws)-RecentFirings:]
		}
		jf := JobForecast{Job: j.Name, Label: labels[j.Name], Firings: len(ws), Stat: string(res.Stat), Service: service}
		streak := true
		for i := len(ws) - 1; i >= 0; i-- {
			k := sort.Search(len(starts), func(k int) bool { return !starts[k].Before(ws[i].from) })
			hit := k < len(starts) && !starts[k].After(ws[i].to)
			if hit {
				jf.Stalled++
				for _, ep := range res.Episodes {
					if !ep.Start.Before(ws[i].from) && !ep.Start.After(ws[i].to) && ep.LatencyPeak > 0 && res.LatencyBaseline > 0 {
						jf.Latency = max(jf.Latency, float64(ep.LatencyPeak)/float64(res.LatencyBaseline))
					}
				}
			}
			if streak && hit {
				jf.Streak++
			} else {
				streak = false
			}
		}
		out = append(out, jf)
	}
	return out
}

// jobPeriod is the job's period, or the median gap between its firings.
func jobPeriod(j timers.Job, fs []timers.Firing) time.Duration {
	if j.PeriodSeconds != nil && *j.PeriodSeconds > 0 {
		return time.Duration(*j.PeriodSeconds * float64(time.Second))
	}
	if len(fs) < 2 {
		return 0
	}
	gaps := make([]time.Duration, 0, len(fs)-1)
	for i := 1; i < len(fs); i++ {
		gaps = append(gaps, fs[i].Planned.Sub(fs[i-1].Planned))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// Next is the forecast the live view shows: the job, among those with at
// least two firings of which half or more stalled the scope, whose next
// planned firing comes first after now, with that firing. ok is false
// when there is none (or no analysis ran yet).
func (e *Exporter) Next(now time.Time) (f JobForecast, at time.Time, ok bool) {
	fd := e.an.found.Load()
	if fd == nil {
		return f, at, false
	}
	v := e.view()
	var fs map[string][2]time.Time
	for _, jf := range fd.forecast {
		if jf.Stalled < 2 || 2*jf.Stalled < jf.Firings {
			continue
		}
		if fs == nil {
			fs = v.firingsAt(now, correlate.Location(&v.hdr, nil))
		}
		n := fs[jf.Job][1]
		if n.IsZero() || (ok && !n.Before(at)) {
			continue
		}
		f, at, ok = jf, n, true
	}
	return f, at, ok
}
