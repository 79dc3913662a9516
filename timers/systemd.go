package timers

// systemd timer units → Jobs (systemd.timer(5)).

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// defaultAccuracy is systemd's AccuracySec= default (systemd.timer(5)).
const defaultAccuracy = time.Minute

// timerTriggers are the [Timer] settings that define when a timer
// elapses. An empty assignment to any of them resets all of them
// (systemd.timer(5): "If the empty string is assigned to any of these
// options, the list of timers is reset").
var timerTriggers = map[string]bool{
	"OnCalendar": true, "OnActiveSec": true, "OnBootSec": true, "OnStartupSec": true,
	"OnUnitActiveSec": true, "OnUnitInactiveSec": true,
}

// manager is one systemd manager's view of a root: the system manager, or
// the user manager with its lingering users.
type manager struct {
	scope string // "system" or "user"
	set   *unitSet
	act   *activation
	// lingering lists users whose user manager starts at boot.
	lingering []string
	// homes maps a home's unit folder (relative to the root) to its user.
	homes map[string]string
}

// systemdJobs returns one Job per timer unit of the manager.
func systemdJobs(root string, m *manager) []Job {
	names := map[string]bool{}
	for _, n := range m.set.listTimers() {
		names[n] = true
	}
	for n := range m.act.reached {
		if strings.HasSuffix(n, ".timer") {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var jobs []Job
	for _, n := range sorted {
		u := m.set.load(n)
		if u.Fragment == "" && len(u.DropIns) == 0 {
			continue // a link to a timer that does not exist
		}
		jobs = append(jobs, timerJob(root, m, u))
	}
	return jobs
}

// timerJob builds the Job of one timer unit, in steps: whose manager
// runs it ([timerOwners]), its [Timer] settings ([readTimerSection]),
// its calendars, schedule and period ([timerSchedule]), the service it
// starts ([timerService]), and whether it runs ([timerActivity]).
func timerJob(root string, m *manager, u *unitFile) Job {
	j := Job{Name: u.Name, Source: Systemd, File: u.Fragment, Errors: append([]string(nil), u.Errors...)}
	owners := timerOwners(&j, m, u)
	if u.Masked {
		j.Reason = fmt.Sprintf("masked (%s is empty or a link to /dev/null)", u.Fragment)
		return j
	}
	j.AccuracySec = defaultAccuracy
	cals, hasMonotonic := readTimerSection(&j, u)
	timerSchedule(&j, cals, hasMonotonic)
	sv := timerService(root, m, &j, u.Name)
	timerActivity(&j, m, u.Name, sv, owners)
	return j
}

// timerOwners sets j.User for a user manager's timer and returns the
// users whose managers run it: every lingering user for a timer of
// every user's (j.User "(every user)"), the one user for a timer under
// a home folder if that user lingers, none otherwise. For the system
// manager it returns m.lingering, which timerActivity does not read.
func timerOwners(j *Job, m *manager, u *unitFile) []string {
	owners := m.lingering
	if m.scope != "user" {
		return owners
	}
	j.User = "(every user)"
	for dir, user := range m.homes {
		if strings.HasPrefix(u.Fragment, dir+"/") {
			j.User, owners = user, nil
			if slices.Contains(m.lingering, user) {
				owners = []string{user}
			}
		}
	}
	return owners
}

// readTimerSection applies u's [Timer] entries to j in order: the
// monotonic settings, AccuracySec=, RandomizedDelaySec= (time spans, in
// seconds when no unit is given; systemd.time(7)), FixedRandomDelay=,
// Persistent= and Unit=. It returns the OnCalendar= entries and whether
// a monotonic setting is left; an empty assignment to any trigger
// resets them all ([timerTriggers]). A bad time span is an error on j
// ("file:line: Key=: reason").
func readTimerSection(j *Job, u *unitFile) (cals []entry, hasMonotonic bool) {
	for _, e := range u.Entries {
		if e.Section != "Timer" {
			continue
		}
		if timerTriggers[e.Key] && e.Value == "" {
			cals = nil
			j.OnActiveSec, j.OnBootSec, j.OnStartupSec, j.OnUnitActiveSec, j.OnUnitInactiveSec = 0, 0, 0, 0, 0
			hasMonotonic = false
			continue
		}
		span := func() time.Duration {
			d, err := parseTimespan(e.Value, time.Second)
			if err != nil {
				j.Errors = append(j.Errors, fmt.Sprintf("%s:%d: %s=: %v", e.File, e.Line, e.Key, err))
			}
			return d
		}
		switch e.Key {
		case "OnCalendar":
			cals = append(cals, e)
		case "OnActiveSec":
			j.OnActiveSec, hasMonotonic = span(), true
		case "OnBootSec":
			j.OnBootSec, hasMonotonic = span(), true
		case "OnStartupSec":
			j.OnStartupSec, hasMonotonic = span(), true
		case "OnUnitActiveSec":
			j.OnUnitActiveSec, hasMonotonic = span(), true
		case "OnUnitInactiveSec":
			j.OnUnitInactiveSec, hasMonotonic = span(), true
		case "AccuracySec":
			j.AccuracySec = span()
		case "RandomizedDelaySec":
			j.RandomizedDelaySec = span()
		case "FixedRandomDelay":
			j.FixedRandomDelay = parseBool(e.Value)
		case "Persistent":
			j.Persistent = parseBool(e.Value)
		case "Unit":
			j.Unit = expandSpecifiers(e.Value, j.Name)
		}
	}
	return cals, hasMonotonic
}

// timerSchedule parses the OnCalendar= entries into j.Schedule (as
// written) and j.Normalized (systemd's form), an expression that does
// not parse being an error on j. A timer with no calendar but a
// monotonic setting gets [monotonicSchedule]. The period, in seconds,
// is that of the calendars together ([calendarsPeriod]), else
// OnUnitActiveSec= or OnUnitInactiveSec=; unset when irregular.
func timerSchedule(j *Job, cals []entry, hasMonotonic bool) {
	var parsed []*calendarSpec
	for _, e := range cals {
		c, err := parseCalendar(e.Value)
		if err != nil {
			j.Errors = append(j.Errors, fmt.Sprintf("%s:%d: OnCalendar=%s: %v", e.File, e.Line, e.Value, err))
			continue
		}
		j.Schedule = append(j.Schedule, e.Value)
		j.Normalized = append(j.Normalized, c.String())
		parsed = append(parsed, c)
	}
	if len(j.Schedule) == 0 && hasMonotonic {
		j.Schedule = monotonicSchedule(*j)
	}
	switch {
	case len(parsed) > 0:
		if p, ok := calendarsPeriod(parsed); ok {
			j.PeriodSeconds = seconds(p)
		}
	case j.OnUnitActiveSec > 0:
		j.PeriodSeconds = seconds(j.OnUnitActiveSec)
	case j.OnUnitInactiveSec > 0:
		j.PeriodSeconds = seconds(j.OnUnitInactiveSec)
	}
}

// startedService is the unit a timer starts, as [timerService] found it.
type startedService struct {
	unit   *unitFile
	found  bool   // a fragment or a drop-in exists
	runs   bool   // its Condition*=/Assert*= hold on the root
	failed string // the condition that does not hold, when !runs
}

// timerService loads the unit timer starts (Unit=, else the timer's
// name as a .service, a template's instance kept) and fills j from it:
// the command (ExecStart= lines joined by " ; ", specifiers expanded,
// prefixes such as "-" dropped), User= (root for a system service that
// names none), Nice=, IOSchedulingClass=, CPUQuota=, MemoryMax=, the
// cgroup from Slice= (system manager only), the conditions and the
// note on known heavy jobs. The service's parse errors join j's.
func timerService(root string, m *manager, j *Job, timer string) startedService {
	if j.Unit == "" {
		prefix, instance, _, tmpl := splitName(timer)
		j.Unit = prefix + ".service"
		if tmpl {
			j.Unit = prefix + "@" + instance + ".service"
		}
	}
	sv := startedService{unit: m.set.load(j.Unit)}
	sv.found = sv.unit.Fragment != "" || len(sv.unit.DropIns) > 0
	j.Errors = append(j.Errors, sv.unit.Errors...)
	var execs []string
	for _, e := range sv.unit.values("Service", "ExecStart") {
		execs = append(execs, strings.TrimLeft(expandSpecifiers(e.Value, j.Unit), "-@:+!|"))
	}
	j.Command = strings.Join(execs, " ; ")
	if e, ok := sv.unit.last("Service", "User"); ok {
		j.User = e.Value
	}
	if m.scope == "system" && j.User == "" && sv.found {
		j.User = "root"
	}
	for key, dst := range map[string]*string{"Nice": &j.Nice, "IOSchedulingClass": &j.IOSchedulingClass, "CPUQuota": &j.CPUQuota, "MemoryMax": &j.MemoryMax} {
		if e, ok := sv.unit.last("Service", key); ok {
			*dst = e.Value
		}
	}
	if m.scope == "system" {
		slice := ""
		if e, ok := sv.unit.last("Service", "Slice"); ok {
			slice = expandSpecifiers(e.Value, j.Unit)
		}
		j.Cgroup = unitCgroup(slice, j.Unit)
	}
	j.Conditions, sv.runs, sv.failed = evalConditions(root, sv.unit)
	j.Note = noteFor(*j)
	return sv
}

// timerActivity sets whether the timer runs: Active and the chain of
// units that pulls it in (ActiveVia, after the user manager of its
// lingering owners for a user timer), or Reason, the first of: nothing
// pulls it in, its service is masked or missing, it has no schedule,
// a service condition fails, no owner lingers.
func timerActivity(j *Job, m *manager, timer string, sv startedService, owners []string) {
	chain := m.act.chain(timer)
	switch {
	case chain == nil:
		j.Reason = "nothing pulls it in: not enabled (no link in a .wants/ or .requires/ folder, no Wants=/Requires=/BindsTo=/Upholds= on a unit started at boot)"
		return
	case sv.unit.Masked:
		j.Reason = fmt.Sprintf("its unit %s is masked", j.Unit)
	case !sv.found:
		j.Reason = fmt.Sprintf("its unit %s does not exist", j.Unit)
	case len(j.Schedule) == 0:
		j.Reason = "no OnCalendar= or monotonic setting: it never elapses"
	case !sv.runs:
		j.Reason = fmt.Sprintf("%s is skipped: %s", j.Unit, sv.failed)
	case m.scope == "user" && len(owners) == 0:
		j.Reason = "user timer: runs only while its user is logged in (no lingering in var/lib/systemd/linger)"
	default:
		j.Active = true
	}
	j.ActiveVia = chain
	if j.Active && m.scope == "user" {
		j.ActiveVia = append([]string{"user manager of " + strings.Join(owners, ", ") + " (lingering)"}, chain...)
	}
}

// monotonicSchedule describes a timer that has only monotonic settings,
// for the SCHEDULE column ("OnBootSec=15min OnUnitActiveSec=1d").
func monotonicSchedule(j Job) []string {
	var out []string
	for _, kv := range []struct {
		k string
		d time.Duration
	}{{"OnActiveSec", j.OnActiveSec}, {"OnBootSec", j.OnBootSec}, {"OnStartupSec", j.OnStartupSec}, {"OnUnitActiveSec", j.OnUnitActiveSec}, {"OnUnitInactiveSec", j.OnUnitInactiveSec}} {
		if kv.d > 0 {
			out = append(out, kv.k+"="+FormatPeriod(kv.d))
		}
	}
	return out
}

// calendarsPeriod is the period of the union of several calendar
// expressions: calendarPeriod for one; for more, the common gap between
// their merged firings when it is constant (pmlogger_check's "*:25" and
// "*:55" → 30 min).
func calendarsPeriod(cs []*calendarSpec) (time.Duration, bool) {
	if len(cs) == 1 {
		return calendarPeriod(cs[0])
	}
	return regularPeriod(func(t time.Time) time.Time {
		var best time.Time
		for _, c := range cs {
			n := c.Next(t, time.UTC)
			if !n.IsZero() && (best.IsZero() || n.Before(best)) {
				best = n
			}
		}
		return best
	})
}

// periodBase is where period estimation starts: a Monday at midnight UTC
// in a non-leap year, so weekly and yearly patterns show up.
var periodBase = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// regularPeriod returns the constant gap between consecutive firings of
// next, computed in UTC from periodBase, or false when gaps differ. It
// looks at least 8 days ahead (weekly patterns) and at least 6 firings
// (so a yearly schedule meets a leap year and a monthly one months of
// different lengths), at most 50000 firings.
func regularPeriod(next func(time.Time) time.Time) (time.Duration, bool) {
	prev := next(periodBase.Add(-time.Nanosecond))
	if prev.IsZero() {
		return 0, false
	}
	var gap time.Duration
	horizon := periodBase.Add(8 * 24 * time.Hour)
	for n := 1; n < 50000; n++ {
		t := next(prev)
		if t.IsZero() {
			return 0, false
		}
		g := t.Sub(prev)
		if gap == 0 {
			gap = g
		} else if g != gap {
			return 0, false
		}
		prev = t
		if n >= 6 && t.After(horizon) {
			break
		}
	}
	return gap, gap > 0
}

func seconds(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}

// parseBool parses a systemd boolean (systemd.syntax(7)).
func parseBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "yes", "y", "true", "t", "on":
		return true
	}
	return false
}

// lingeringUsers lists var/lib/systemd/linger: users whose user manager
// runs from boot (loginctl enable-linger).
func lingeringUsers(root string) []string {
	des, err := rootfs.ReadDir(root, "var/lib/systemd/linger")
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	sort.Strings(out)
	return out
}

// userUnitDirs returns the user manager's search path: each home's
// ~/.config/systemd/user (from etc/passwd), then the global folders; and
// which user each home folder belongs to. The homes of all users share
// one search path here, a simplification: a unit name used by two users
// is read from the first home only.
func userUnitDirs(root string) ([]string, map[string]string) {
	var dirs []string
	homes := map[string]string{}
	lines, _ := readLines(root, "etc/passwd")
	for _, l := range lines {
		f := strings.Split(l, ":")
		if len(f) < 6 {
			continue
		}
		uid, err := strconv.Atoi(f[2])
		if err != nil || uid < 1000 || f[5] == "" || f[5] == "/" {
			continue
		}
		d := path.Join(strings.TrimPrefix(f[5], "/"), ".config/systemd/user")
		if fi, err := rootfs.Stat(root, d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
			homes[d] = f[0]
		}
	}
	return append(dirs, globalUserUnitDirs...), homes
}

// unitCgroup is the cgroup a system service runs in, below the cgroup
// mount (systemd.slice(5): a slice "a-b.slice" is a.slice/a-b.slice;
// systemd.resource-control(5) Slice=, default system.slice; an instance
// of a template is put in system-<template>.slice): unitCgroup("",
// "x.service") is "/system.slice/x.service", unitCgroup("app-batch.slice",
// "x.service") "/app.slice/app-batch.slice/x.service".
func unitCgroup(slice, unit string) string {
	if slice == "" {
		slice = "system.slice"
		if prefix, _, ok := strings.Cut(strings.TrimSuffix(unit, ".service"), "@"); ok {
			slice = "system-" + strings.ReplaceAll(prefix, "-", `\x2d`) + ".slice"
		}
	}
	name := strings.TrimSuffix(slice, ".slice")
	if name == "-" || name == "" {
		return "/" + unit
	}
	var parts []string
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '-' {
			parts = append(parts, name[:i]+".slice")
		}
	}
	return "/" + strings.Join(parts, "/") + "/" + unit
}
