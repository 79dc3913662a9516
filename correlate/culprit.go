package correlate

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/timers"
)

// BinomialTail is P(X ≥ k) for X ~ Binomial(n, p): the null model's
// chance of k or more of n events in what covers a share p (episodes
// after a firing here; spikes within an I/O burst in WeighBursts).
func BinomialTail(n, k int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	sum := 0.0
	for i := k; i <= n; i++ {
		lg := lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1)
		sum += math.Exp(lg + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(1, sum)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}

// jobPeriod is the job's typical period: PeriodSeconds, else the median gap
// between its planned firings; 0 if unknown.
func jobPeriod(j *timers.Job, fs []timers.Firing) time.Duration {
	if j.PeriodSeconds != nil && *j.PeriodSeconds > 0 {
		return secs(*j.PeriodSeconds)
	}
	if len(fs) < 2 {
		return 0
	}
	gaps := make([]float64, 0, len(fs)-1)
	for i := 1; i < len(fs); i++ {
		gaps = append(gaps, float64(fs[i].Planned.Sub(fs[i-1].Planned)))
	}
	return time.Duration(median(gaps))
}

// window is the span in which an episode caused by a firing may start.
type window struct {
	earliest time.Time // the firing's Earliest
	from, to time.Time
	inRec    bool // the firing lies within the recording, so it counts
}

// jobWindows returns the job's period, lag and firing windows:
// [Earliest − one interval, Latest + lag], Latest clamped to a quarter of
// the period after Earliest (a wide AccuracySec on a fast timer would
// otherwise cover everything).
func jobWindows(res *Result, job *timers.Job, fs []timers.Firing, o Options) (time.Duration, time.Duration, []window) {
	slices.SortFunc(fs, func(a, b timers.Firing) int { return a.Planned.Compare(b.Planned) })
	period := jobPeriod(job, fs)
	lag := o.LagTolerance
	if period > 0 && lag > period/4 {
		lag = period / 4
	}
	slack := res.Interval
	ws := make([]window, 0, len(fs))
	for _, f := range fs {
		latest := f.Latest
		if period > 0 && latest.Sub(f.Earliest) > period/4 {
			latest = f.Earliest.Add(period / 4)
		}
		ws = append(ws, window{earliest: f.Earliest, from: f.Earliest.Add(-slack), to: latest.Add(lag),
			inRec: !f.Earliest.Before(res.Start) && !f.Earliest.After(res.End.Add(-slack))})
	}
	return period, lag, ws
}

// closestFirings returns, per episode, the shortest delay from a firing
// of any job whose window holds the episode's start (MaxInt64 if none): an
// episode is credited only to the job(s) that fired closest before it, so
// a decoy firing just before another job's episode does not claim it.
func closestFirings(res *Result, jobs []timers.Job, firings map[string][]timers.Firing, o Options) []time.Duration {
	best := make([]time.Duration, len(res.Episodes))
	for i := range best {
		best[i] = math.MaxInt64
	}
	for j := range jobs {
		_, _, ws := jobWindows(res, &jobs[j], firings[jobs[j].Name], o)
		for _, w := range ws {
			for i := range res.Episodes {
				if s := res.Episodes[i].Start; !s.Before(w.from) && !s.After(w.to) {
					best[i] = min(best[i], absDur(s.Sub(w.earliest)))
				}
			}
		}
	}
	return best
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// jobUnits are the systemd units whose processes belong to job: Job.Unit
// and, for "x.timer", "x.service".
func jobUnits(j *timers.Job) []string {
	var us []string
	if j.Unit != "" {
		us = append(us, j.Unit)
	}
	if base, ok := strings.CutSuffix(j.Name, ".timer"); ok && j.Source == timers.Systemd {
		if s := base + ".service"; s != j.Unit {
			us = append(us, s)
		}
	}
	return us
}
