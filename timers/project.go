package timers

// Projection of firings over a time window, from Jobs alone: the schedule
// strings are parsed again, so a Job read from a recording's header on
// another host projects the same firings.
//
// What each source contributes:
//   - systemd OnCalendar=: every elapse of the union of the expressions,
//     in the job's TimeZone (or loc), with Earliest = planned and
//     Latest = planned + AccuracySec + RandomizedDelaySec. systemd picks
//     one point inside the accuracy window per boot, and the random delay
//     anew per elapse (or fixed per machine with FixedRandomDelay); we do
//     not know either, so the whole window is given.
//   - Monotonic settings (OnBootSec=, OnUnitActiveSec=, ...) count from
//     boot or from the unit's last activation, which a Job does not know:
//     they contribute no firings. Their period is in PeriodSeconds, so a
//     correlator can still match them by period. A timer with both
//     (pmlogger_check: OnBootSec=1min and two OnCalendar= lines) projects
//     its calendar firings only.
//   - cron: every match of the time spec, Latest = planned + 1 min (cron
//     checks its tables once a minute). @reboot projects nothing.
//   - anacron: the trigger's firings (anacron.timer's calendar or a cron
//     line) are walked; a job runs at the first trigger inside
//     START_HOURS_RANGE on which its period has elapsed since its last run
//     (LastRun, else assumed to have run on the last day before the window
//     whose day number is a multiple of the period), at trigger + Delay;
//     Latest adds the trigger's jitter, RANDOM_DELAY and accuracy.

import (
	"context"
	"sort"
	"strings"
	"time"
)

// Project returns every firing of every job between from (inclusive) and
// to (exclusive), sorted by planned time, then job name. Times are
// computed in loc unless a job names its own TimeZone (or an OnCalendar=
// expression carries a zone suffix). Jobs are projected whether active or
// not; callers choose which jobs to pass.
func Project(jobs []Job, from, to time.Time, loc *time.Location) []Firing {
	out, _ := ProjectContext(context.Background(), jobs, from, to, loc)
	return out
}

// ProjectContext is [Project] that stops when ctx is done, returning
// ctx's error (its cause, when it has one) and no firings: a window of
// weeks over a job that fires every few seconds walks millions of
// firings.
func ProjectContext(ctx context.Context, jobs []Job, from, to time.Time, loc *time.Location) ([]Firing, error) {
	var out []Firing
	for _, j := range jobs {
		var fs []Firing
		if j.Source == Anacron {
			fs = projectJob(j, from, to, loc)
		} else {
			next, late := jobNext(j, loc)
			fs = firingsContext(ctx, j.Name, next, from, to, 0, late)
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		out = append(out, fs...)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Planned.Equal(out[b].Planned) {
			return out[a].Planned.Before(out[b].Planned)
		}
		return out[a].Job < out[b].Job
	})
	return out, nil
}

// horizonYears bounds the search for a job's next firings: 400 years are
// one whole cycle of the Gregorian calendar (leap days included), so a
// calendar or cron schedule that can match at all matches within it
// (systemd's own calendar ends in 2199).
const horizonYears = 400

// Next returns the first n firings of j after after, searching up to
// 400 years ahead: a leap-day schedule lists n leap days. An anacron
// job, whose runs depend on its trigger's, is searched for up to
// 400 days plus twice its period. Fewer than n firings mean there are no
// more; see [Never] for none at all.
func Next(j Job, after time.Time, n int, loc *time.Location) []Firing {
	if n <= 0 {
		return nil
	}
	if next, late := jobNext(j, loc); next != nil {
		end := after.AddDate(horizonYears, 0, 0)
		var out []Firing
		for t := next(after); len(out) < n && !t.IsZero() && t.Before(end); t = next(t) {
			out = append(out, Firing{Job: j.Name, Planned: t, Earliest: t, Latest: t.Add(late)})
		}
		return out
	}
	if j.Source != Anacron || len(j.Schedule) == 0 {
		return nil
	}
	days, err := anacronPeriod(j.Schedule[0])
	if err != nil {
		return nil
	}
	end := after.AddDate(0, 0, 400+2*max(days, 31))
	var out []Firing
	for span := 24 * time.Hour; ; span *= 4 {
		to := after.Add(span)
		if !to.Before(end) {
			to = end
		}
		out = projectJob(j, after.Add(time.Nanosecond), to, loc)
		if len(out) >= n {
			return out[:n]
		}
		if to.Equal(end) {
			return out
		}
	}
}

// Never reports whether j has a calendar or cron schedule that never
// matches after after ("*-02-30", "0 0 30 2 *", a date in the past)
// within the 400-year horizon of [Next]. Monotonic timers, @reboot and
// anacron jobs, which have no calendar of their own, are never "never".
func Never(j Job, after time.Time, loc *time.Location) bool {
	next, _ := jobNext(j, loc)
	if next == nil {
		return false
	}
	t := next(after)
	return t.IsZero() || !t.Before(after.AddDate(horizonYears, 0, 0))
}

// jobNext returns the next-function of a systemd or cron job's schedule
// in its zone, and how late after the planned time it may start; nil for
// anacron, for a malformed cron line and for a schedule with nothing to
// project (monotonic settings only, @reboot).
func jobNext(j Job, loc *time.Location) (nextFunc, time.Duration) {
	if j.Source != Systemd && len(j.Errors) > 0 {
		return nil, 0 // a malformed cron or anacron line never runs
	}
	loc = jobLocation(j, loc)
	switch j.Source {
	case Systemd:
		return calendarNext(j.Schedule, loc), j.AccuracySec + j.RandomizedDelaySec
	case Cron:
		if len(j.Schedule) == 0 {
			return nil, 0
		}
		return cronNext(j.Schedule[0], loc), time.Minute
	}
	return nil, 0
}

// jobLocation is the zone a job's schedule is computed in.
func jobLocation(j Job, loc *time.Location) *time.Location {
	if j.TimeZone != "" {
		if l, err := time.LoadLocation(j.TimeZone); err == nil {
			return l
		}
	}
	if loc == nil {
		return time.UTC
	}
	return loc
}

// nextFunc returns the first firing strictly after t, or the zero time.
type nextFunc func(t time.Time) time.Time

// calendarNext returns the next-function of a list of OnCalendar=
// expressions (the union), skipping monotonic descriptions and
// expressions that do not parse.
func calendarNext(exprs []string, loc *time.Location) nextFunc {
	var fns []nextFunc
	for _, s := range exprs {
		if isMonotonicDesc(s) {
			continue
		}
		c, err := parseCalendar(s)
		if err != nil {
			continue
		}
		fns = append(fns, func(t time.Time) time.Time { return c.Next(t, loc) })
	}
	return earliest(fns)
}

// earliest is the next-function of a union of schedules: the earliest
// of fns' next times (zero when none has one); nil without fns.
func earliest(fns []nextFunc) nextFunc {
	if len(fns) == 0 {
		return nil
	}
	return func(t time.Time) time.Time {
		var best time.Time
		for _, f := range fns {
			n := f(t)
			if !n.IsZero() && (best.IsZero() || n.Before(best)) {
				best = n
			}
		}
		return best
	}
}

// isMonotonicDesc reports whether a Schedule entry is a monotonic setting
// ("OnBootSec=15min") rather than an OnCalendar= expression.
func isMonotonicDesc(s string) bool {
	return strings.HasPrefix(s, "On") && strings.Contains(s, "=")
}

// cronNext returns the next-function of a cron time spec.
func cronNext(spec string, loc *time.Location) nextFunc {
	c, err := parseCron(spec)
	if err != nil || c.Reboot {
		return nil
	}
	return func(t time.Time) time.Time { return c.Next(t, loc) }
}

// firings walks next from from to to.
func firings(name string, next nextFunc, from, to time.Time, early, late time.Duration) []Firing {
	return firingsContext(context.Background(), name, next, from, to, early, late)
}

// firingsContext is firings that stops (with what it has) when ctx is
// done; it looks every 1024 firings.
func firingsContext(ctx context.Context, name string, next nextFunc, from, to time.Time, early, late time.Duration) []Firing {
	if next == nil {
		return nil
	}
	var out []Firing
	t := next(from.Add(-time.Nanosecond))
	for i := 0; !t.IsZero() && t.Before(to) && i < 1_000_000; i++ {
		if i%1024 == 1023 && ctx.Err() != nil {
			return out
		}
		out = append(out, Firing{Job: name, Planned: t, Earliest: t.Add(early), Latest: t.Add(late)})
		t = next(t)
	}
	return out
}

func projectJob(j Job, from, to time.Time, loc *time.Location) []Firing {
	if j.Source == Anacron {
		if len(j.Errors) > 0 {
			return nil // a malformed anacron line never runs
		}
		return projectAnacron(j, from, to, jobLocation(j, loc))
	}
	next, late := jobNext(j, loc)
	return firings(j.Name, next, from, to, 0, late)
}

// triggerNext is the next-function of an anacron job's triggers.
func triggerNext(trig []string, loc *time.Location) nextFunc {
	var fns []nextFunc
	for _, t := range trig {
		kind, expr, _ := strings.Cut(t, ":")
		switch kind {
		case "systemd":
			if f := calendarNext([]string{expr}, loc); f != nil {
				fns = append(fns, f)
			}
		case "cron":
			if f := cronNext(expr, loc); f != nil {
				fns = append(fns, f)
			}
		}
	}
	return earliest(fns)
}

// dayNumber counts days since 1970-01-01 of the calendar date of t.
func dayNumber(t time.Time) int {
	y, m, d := t.Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

func projectAnacron(j Job, from, to time.Time, loc *time.Location) []Firing {
	if len(j.Schedule) == 0 {
		return nil
	}
	next := triggerNext(j.Trigger, loc)
	if next == nil {
		return nil
	}
	days, err := anacronPeriod(j.Schedule[0])
	if err != nil {
		return nil
	}
	lo, hi, _ := parseHoursRange(j.StartHoursRange)
	// Start the walk far enough back that the run before the window is seen.
	walkFrom := from.Add(-time.Duration(max(days, 31)+1) * 24 * time.Hour).In(loc)
	lastDay := -1 << 31 // day number of the last run
	var lastY int
	var lastM time.Month
	lr, err := time.ParseInLocation("20060102", j.LastRun, loc)
	switch {
	case err == nil && lr.After(walkFrom):
		lastDay, lastY, lastM = dayNumber(lr), lr.Year(), lr.Month()
	case err == nil:
		// A real but old last run: the job is overdue and runs at the
		// first trigger.
	default:
		// Unknown last run: assume a run on the last day before the walk
		// whose day number is a multiple of the period, so the phase does
		// not depend on the window.
		d := dayNumber(walkFrom)
		if days > 0 {
			d -= d % days
		} else {
			d--
		}
		lastDay = d
		lt := time.Unix(int64(d)*86400, 0).UTC()
		lastY, lastM = lt.Year(), lt.Month()
	}
	var out []Firing
	t := next(walkFrom)
	for i := 0; !t.IsZero() && t.Before(to) && i < 1_000_000; i++ {
		lt := t.In(loc)
		h := lt.Hour()
		if h >= lo && h < hi {
			due := false
			switch j.Schedule[0] {
			case "@monthly":
				due = lt.Year() != lastY || lt.Month() != lastM
			case "@yearly", "@annually":
				due = lt.Year() != lastY
			default:
				due = dayNumber(lt)-lastDay >= days
			}
			if due {
				lastDay, lastY, lastM = dayNumber(lt), lt.Year(), lt.Month()
				p := t.Add(j.Delay)
				if !p.Before(from) && p.Before(to) {
					out = append(out, Firing{Job: j.Name, Planned: p, Earliest: p, Latest: p.Add(j.RandomizedDelaySec + j.AccuracySec)})
				}
			}
		}
		t = next(t)
	}
	return out
}
