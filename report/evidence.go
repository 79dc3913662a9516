package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/timers"
)

// Evidence writes a culprit's evidence, one finding a line, from its
// structured proof (correlate.Proof and the culprit's fields): what the
// text verdict prints and JSON's culprits[].evidence.
func Evidence(r *correlate.Result, c *correlate.Culprit) []string {
	switch c.Kind {
	case correlate.KindTimer, correlate.KindCron:
		if c.Job == nil {
			return nil
		}
		if c.Proof == nil {
			return jobEvidence(r, c, nil, c.Job)[:1]
		}
		return jobEvidence(r, c, c.Proof, c.Job)
	case correlate.KindProcess:
		if c.Proof != nil {
			return processEvidence(r, c, c.Proof)
		}
	}
	var ev []string
	if l := recurrence(r); l != "" {
		ev = append(ev, l)
	}
	return append(ev, "no timer, cron job or process explains it")
}

// recurrence is the episodes' period: "recurs every 10s (±1s): 6 of 8
// episodes on the schedule, 2 missed, 2 off it"; "" without one.
func recurrence(r *correlate.Result) string {
	p := r.Period
	if p == nil {
		return ""
	}
	return fmt.Sprintf("recurs every %s (±%s): %d of %d episodes on the schedule, %d missed, %d off it",
		correlate.FormatDuration(p.Period), correlate.FormatDuration(p.Jitter), p.Matched, len(r.Episodes), p.Missed, p.Extra)
}

func jobEvidence(r *correlate.Result, c *correlate.Culprit, pf *correlate.Proof, job *timers.Job) []string {
	var ev []string
	n := c.EpisodesTotal
	sched := strings.Join(job.Schedule, ", ")
	if sched == "" {
		sched = "no calendar schedule"
	}
	every := ""
	if c.Period > 0 {
		every = "every " + correlate.FormatDuration(c.Period) + " "
	}
	ev = append(ev, fmt.Sprintf("%s job, fires %s(%s), defined in %s", job.Source, every, sched, jobFile(job)))
	if pf == nil {
		return ev
	}
	if len(pf.Ties) > 0 {
		ev = append(ev, "its processes: "+tieSummary(pf.Ties))
	}
	if k := len(pf.Credits); k > 0 {
		var lead string
		var leads []float64
		for _, cr := range pf.Credits {
			if cr.LeadS != nil {
				leads = append(leads, *cr.LeadS)
			}
		}
		if len(leads) > 0 {
			l := correlate.Median(leads)
			iv := r.Interval.Seconds()
			if l <= iv && l >= -iv {
				lead = ", starting with the stall (within one sampling interval, median)"
			} else if l >= 0 {
				lead = fmt.Sprintf(", starting %s before the stall (median)", correlate.FormatDuration(time.Duration(l*float64(time.Second))))
			} else {
				lead = fmt.Sprintf(", starting %s after the stall began (median)", correlate.FormatDuration(time.Duration(-l*float64(time.Second))))
			}
		}
		ev = append(ev, fmt.Sprintf("credited with %d of %d episodes: its processes did %s per episode, %.0f%% of all recorded processes' I/O (median)%s",
			k, n, correlate.FormatBytes(c.BytesPerEpisode), 100*pf.Share, lead))
	}
	if pf.FiringsUsed {
		ev = append(ev, fmt.Sprintf("%d of %d firings in the recording were followed within %s by an episode", c.FiringsMatched, c.Firings, correlate.FormatDuration(c.Lag)))
		if c.FiringsMatched > 0 {
			ev = append(ev, fmt.Sprintf("with episodes at random times, %d of %d firings would be followed by one with p = %.2g", c.FiringsMatched, c.Firings, pf.PFiring))
		}
	} else if note := FiringsNote(pf.FiringsUnused, job); c.Projected && note != "" {
		ev = append(ev, "firings not weighed: "+note)
	}
	if pf.ProcessesRecorded {
		ev = append(ev, fmt.Sprintf("null model: outside episodes its processes were as busy in %d of %d intervals (presence %.2g); a random episode meets that with probability %.2g, and %d of %d episodes by chance with p = %.2g",
			pf.PresentIntervals, pf.OutsideIntervals, pf.Presence, pf.EpisodeChance, len(pf.Credits), n, pf.PNull))
	} else {
		ev = append(ev, "the recording has no per-process data: that it ran is inferred from its schedule only")
	}
	if len(pf.FiresWith) > 0 {
		ev = append(ev, fmt.Sprintf("fires in one wake-up with %s: each is ranked by its own I/O; RandomizedDelaySec= on these timers would spread them apart",
			strings.Join(pf.FiresWith, ", ")))
	}
	if pf.Late {
		ev = append(ev, "its processes started after the stall had begun in every credited episode")
	}
	if job.Source == timers.Systemd && !job.Active {
		ev = append(ev, "the timer is not enabled (nothing pulls it in), yet its processes ran in the episodes: started by hand or by another unit?")
	}
	return ev
}

func processEvidence(r *correlate.Result, c *correlate.Culprit, pf *correlate.Proof) []string {
	var ev []string
	k := len(pf.Credits)
	var best correlate.ProcActivity
	if len(c.Processes) > 0 {
		best = c.Processes[0]
	}
	if c.NewEachTime {
		starter := "no timer or cron job starts it: a script, a loop or a service starts it on a schedule"
		if len(best.StartedBy) > 0 {
			starter = "no timer or cron job starts it; recorded ancestors: " + strings.Join(best.StartedBy, " ← ")
		}
		ev = append(ev, fmt.Sprintf("recurs every %s, %s, a new %s process each time (%d PIDs) and %s",
			correlate.FormatDuration(c.Period), didEach(best, k), c.Name, c.Runs, starter))
	} else {
		ev = append(ev, fmt.Sprintf("recurs every %s, %s, no timer or cron job: an in-process schedule?",
			correlate.FormatDuration(c.Period), didEach(best, k)))
	}
	if sp := pf.StartsPeriod; sp != nil {
		ev = append(ev, fmt.Sprintf("its runs started every %s (±%s) by the recorded exec events: %d of %d starts on the schedule",
			correlate.FormatDuration(sp.Period), correlate.FormatDuration(time.Duration(sp.JitterS*float64(time.Second))), sp.Matched, len(pf.Starts)))
	}
	if l := recurrence(r); l != "" {
		ev = append(ev, l)
	}
	for _, p := range c.Programs {
		ev = append(ev, fmt.Sprintf("%s did %.0f%% of the recorded I/O (median) in %d of the %d recurring episodes no job explains, at least 3 times its rate outside episodes",
			p.Program, 100*p.Share, p.Episodes, p.Of))
	}
	ev = append(ev, fmt.Sprintf("null model: outside episodes it was as busy in %d of %d intervals (presence %.2g); %d of %d episodes by chance with p = %.2g",
		pf.PresentIntervals, pf.OutsideIntervals, pf.Presence, k, c.EpisodesTotal, pf.PNull))
	return ev
}

// FiringsNote says why a job's firings were not weighed ("" when they
// were): JSON's proof.firings_note.
func FiringsNote(u correlate.Unused, job *timers.Job) string {
	switch u {
	case correlate.UnusedNotProjected:
		return "its schedule was not projected over the recording"
	case correlate.UnusedIdleNow:
		note := "the recording says it could not fire then"
		if job != nil && job.LiveNote != "" {
			note += " (" + job.LiveNote + ")"
		}
		return note
	case correlate.UnusedUnpredictable:
		d := time.Duration(0)
		if job != nil {
			d = job.RandomizedDelaySec
		}
		return fmt.Sprintf("RandomizedDelaySec=%s is at least half its period: its firing times are unpredictable, so it is matched by process evidence only", correlate.FormatDuration(d))
	case correlate.UnusedNoneInRecording:
		return "no firing fell within the recording"
	case correlate.UnusedNoJob:
		return "no timer or cron job runs it"
	}
	return ""
}

// NotRunReason says why a job scheduled near episodes is not named:
// JSON's not_run[].reason.
// A job that cannot run here (timers.Job.Active false: not pulled in from
// the boot target, cron not the scheduler, a guard that makes it do
// nothing) is said to be inactive, with why, never "scheduled but did not
// run": not running is what it does.
func NotRunReason(nr correlate.NotRun) string {
	if j := nr.Job; j != nil && !j.Active {
		why := j.Reason
		if why == "" {
			why = "nothing pulls it in (no boot target wants it, or no cron daemon is the scheduler)"
		}
		return "inactive, it cannot run here: " + strings.TrimSuffix(why, ".")
	}
	if nr.FiringsNear > 0 {
		return fmt.Sprintf("scheduled but did not run: %d of its firings fell near episodes, but no process of it was recorded", nr.FiringsNear)
	}
	return "scheduled but did not run: " + FiringsNote(nr.FiringsUnused, nr.Job)
}

// tieSummary says how processes were tied: "pmlogger_check 1001 (unit
// pmlogger_check.service), pressure.py 4200 (started by periodic.sh 4100,
// the job's)".
func tieSummary(ts []correlate.Tie) string {
	seen := map[string]bool{}
	var parts []string
	for _, t := range ts {
		var s string
		switch t.How {
		case correlate.TieUnit:
			s = fmt.Sprintf("%s (unit %s)", t.Program, t.Via)
		case correlate.TieAncestry:
			s = fmt.Sprintf("%s (started by %s, the job's)", t.Program, t.Via)
		default:
			s = fmt.Sprintf("%s (a program of the job's command)", t.Program)
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("%d more", len(parts)-5))
	}
	return strings.Join(parts, ", ")
}

// didEach says what a process did per episode: "postgres
// (postgresql.service) wrote 1.2 GiB each time".
func didEach(p correlate.ProcActivity, eps int) string {
	who := p.Program
	if who == "" {
		who = p.Comm
	}
	if p.Unit != "" {
		who += " (" + p.Unit + ")"
	}
	eps = max(eps, 1)
	verb, per := "wrote", p.WriteBytes/uint64(eps)
	if p.ReadBytes > p.WriteBytes {
		verb, per = "read", p.ReadBytes/uint64(eps)
	}
	return fmt.Sprintf("%s %s %s each time", who, verb, correlate.FormatBytes(per))
}

func jobFile(j *timers.Job) string {
	if j.Line > 0 {
		return fmt.Sprintf("%s:%d", j.File, j.Line)
	}
	if j.File == "" {
		return "(unknown file)"
	}
	return j.File
}
