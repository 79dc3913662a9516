package confirm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// FindJob returns the host's job named name, as `memdiag timers` names it
// ("pmlogger_check.timer", "cron.d/pcp-pmlogger:8"); a timer may be given
// without ".timer".
func FindJob(jobs []timers.Job, name string) (timers.Job, error) {
	for _, j := range jobs {
		if j.Name == name || (j.Source == timers.Systemd && j.Name == name+".timer") {
			return j, nil
		}
	}
	var near []string
	for _, j := range jobs {
		if strings.Contains(j.Name, name) || strings.Contains(name, strings.TrimSuffix(j.Name, ".timer")) {
			near = append(near, j.Name)
		}
	}
	if len(near) > 0 {
		return timers.Job{}, fmt.Errorf("no job %q on this host; did you mean %s? (memdiag timers lists them)", name, strings.Join(near, ", "))
	}
	return timers.Job{}, fmt.Errorf("no job %q on this host (memdiag timers lists them)", name)
}

// Culprits are the jobs to hold off together among the host's jobs: the
// ones named (--job, FindJob each), else the jobs the verdict of the
// recording file at path names (--recording, CulpritJobs). A recording
// that cannot be read is a *rootfs.NamedError of --recording.
func Culprits(jobs []timers.Job, names []string, path string) ([]timers.Job, error) {
	if len(names) > 0 {
		var out []timers.Job
		for _, n := range names {
			j, err := FindJob(jobs, n)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(out, func(o timers.Job) bool { return o.Name == j.Name }) {
				return nil, fmt.Errorf("--job %s names %s, given already", n, j.Name)
			}
			out = append(out, j)
		}
		return out, nil
	}
	rec, err := record.ReadFile(path)
	if err != nil {
		return nil, &rootfs.NamedError{Flag: "--recording", Path: path, Err: err}
	}
	return CulpritJobs(rec, jobs)
}

// CulpritJobs are the jobs a recording's verdict names (the same verdict
// as `memdiag analyze`), in its order, looked up among the host's jobs
// as they are now: every culprit that is a job, since jobs named together
// (the reference case's two pcp timers, each explaining its own share of
// the episodes) take the effect away only together. A process named
// first is a *CannotHoldError; no culprit is an error saying so.
func CulpritJobs(rec *record.Recording, jobs []timers.Job) ([]timers.Job, error) {
	res := analysis.Verdict(rec)
	if len(res.Culprits) == 0 && len(res.Undecided) > 0 {
		var names []string
		for _, u := range res.Undecided {
			names = append(names, u.Name)
		}
		return nil, fmt.Errorf("the recording's verdict is undecided between %s (fired together, none standing out by its I/O): "+
			"confirm each with --job NAME to tell them apart", english.List(names, "and"))
	}
	if len(res.Culprits) == 0 {
		return nil, fmt.Errorf("the recording's verdict names no culprit: nothing to confirm (give --job NAME to test a job anyway)")
	}
	if c := res.Culprits[0]; c.Job == nil {
		return nil, ProcessCulprit(c.Name)
	}
	var out []timers.Job
	for _, c := range res.Culprits {
		if c.Job == nil {
			continue
		}
		j, err := FindJob(jobs, c.Job.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// JobNames are the jobs' names, in order.
func JobNames(jobs []timers.Job) []string {
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	return names
}

// FiringGap is the longest time an A block can go without a firing of
// the jobs held off, and what it is: one job's period; for jobs held
// together, the longest gap between their merged firings over the next
// two of their longest periods, up to two days (two timers every 20 s,
// 10 s apart, fire every 10 s), or, when their calendars project no
// firings (monotonic timers), the shortest of their periods.
func FiringGap(jobs []timers.Job, now time.Time, loc *time.Location) (time.Duration, string) {
	period := func(j timers.Job) time.Duration {
		if j.PeriodSeconds == nil {
			return 0
		}
		return time.Duration(*j.PeriodSeconds * float64(time.Second))
	}
	if len(jobs) == 1 {
		return period(jobs[0]), jobs[0].Name + "'s period"
	}
	var longest, shortest time.Duration
	for _, j := range jobs {
		p := period(j)
		longest = max(longest, p)
		if p > 0 && (shortest == 0 || p < shortest) {
			shortest = p
		}
	}
	fs := timers.Project(jobs, now, now.Add(min(2*longest, 48*time.Hour)), loc)
	if len(fs) < 2 {
		return shortest, "the shortest period of the jobs held off"
	}
	var gap time.Duration
	for i := 1; i < len(fs); i++ {
		gap = max(gap, fs[i].Planned.Sub(fs[i-1].Planned))
	}
	return gap, "the longest gap between the held jobs' firings"
}
