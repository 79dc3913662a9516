// Package timers finds every periodic job on a host — systemd .timer units,
// cron (/etc/crontab, /etc/cron.d, user crontabs), anacron and the run-parts
// folders — and projects their firings over a time window.
//
// Sources: systemd.timer(5), systemd.time(7), systemd.unit(5), crontab(5),
// anacrontab(5).
package timers

import "time"

// Source says which scheduler runs a job.
type Source string

// Schedulers.
const (
	Systemd Source = "systemd"
	Cron    Source = "cron"
	Anacron Source = "anacron"
)

// Job is one periodic job: a systemd timer with the service it starts, a
// cron line, or an anacron line (with the run-parts scripts it runs).
// A Job is self-contained: it is stored in a recording's header and
// [Project] computes its firings from it later, on another host, so it
// keeps the schedule as written and every field that moves a firing.
type Job struct {
	Name   string `json:"name"`   // "pmlogger_check.timer", "cron.d/pcp-pmlogger:3", "anacron:cron.daily"
	Source Source `json:"source"` // systemd, cron or anacron
	File   string `json:"file"`   // file that defines it (relative to the root)
	Line   int    `json:"line,omitempty"`

	// Schedule lists the expressions as written: OnCalendar= values, a cron
	// time spec ("*/10 * * * *", "@daily") or an anacron period ("1", "@weekly").
	Schedule   []string `json:"schedule"`
	Normalized []string `json:"normalized,omitempty"` // OnCalendar in systemd's normalized form

	// Monotonic timer settings (systemd.timer(5)); zero when unset.
	OnActiveSec        time.Duration `json:"on_active_ns,omitempty"`
	OnBootSec          time.Duration `json:"on_boot_ns,omitempty"`
	OnStartupSec       time.Duration `json:"on_startup_ns,omitempty"`
	OnUnitActiveSec    time.Duration `json:"on_unit_active_ns,omitempty"`
	OnUnitInactiveSec  time.Duration `json:"on_unit_inactive_ns,omitempty"`
	AccuracySec        time.Duration `json:"accuracy_ns,omitempty"`         // systemd default 1 min
	RandomizedDelaySec time.Duration `json:"randomized_delay_ns,omitempty"` // also anacron RANDOM_DELAY (minutes) and delay
	FixedRandomDelay   bool          `json:"fixed_random_delay,omitempty"`
	Persistent         bool          `json:"persistent,omitempty"`
	TimeZone           string        `json:"time_zone,omitempty"` // IANA zone the schedule is computed in; "" = host local

	// anacron: what starts anacron ("systemd:*-*-* 07..23:30",
	// "cron:30 7-23 * * *"), the job's fixed delay, START_HOURS_RANGE
	// ("3-22") and the date of its last run from
	// /var/spool/anacron/<job-id> ("20261129"). The random part
	// (RANDOM_DELAY plus the trigger's own) is in RandomizedDelaySec.
	Trigger         []string      `json:"trigger,omitempty"`
	Delay           time.Duration `json:"delay_ns,omitempty"`
	StartHoursRange string        `json:"start_hours_range,omitempty"`
	LastRun         string        `json:"last_run,omitempty"`

	// PeriodSeconds is the typical interval between firings, nil when the
	// schedule is irregular.
	PeriodSeconds *float64 `json:"period_seconds"`

	Unit string `json:"unit,omitempty"` // the activated service, e.g. "pmlogger_check.service"
	// Cgroup is the cgroup a system timer's service runs in, from its
	// Slice= (systemd.resource-control(5); default system.slice, and for
	// a template's instance system-<template>.slice): "/system.slice/x.service",
	// "/app.slice/app-batch.slice/x.service". "" for cron, anacron and
	// user timers, whose cgroup the files do not fix.
	Cgroup  string   `json:"cgroup,omitempty"`
	Command string   `json:"command"`           // ExecStart, cron command, anacron command
	Scripts []string `json:"scripts,omitempty"` // run-parts scripts run by the job
	// IdleScripts are the Scripts that exit at once on this host because
	// systemd is the init system and their own timer does the work
	// (Debian's logrotate, man-db, apt-compat, dpkg, sysstat cron scripts).
	IdleScripts []string `json:"idle_scripts,omitempty"`
	// IdleIOScripts are the Scripts (not IdleScripts) that run their work
	// in the idle I/O class themselves (ionice -c3, start-stop-daemon
	// --iosched idle), as Debian's plocate and man-db cron scripts do.
	IdleIOScripts []string `json:"idle_io_scripts,omitempty"`
	User          string   `json:"user,omitempty"`

	// Resource settings of the activated service as written
	// (systemd.exec(5), systemd.resource-control(5)); "" when unset.
	Nice              string `json:"nice,omitempty"`
	IOSchedulingClass string `json:"io_scheduling_class,omitempty"`
	CPUQuota          string `json:"cpu_quota,omitempty"`
	MemoryMax         string `json:"memory_max,omitempty"`

	// Conditions lists the service's Condition*=/Assert*= settings with
	// what they evaluate to on the root: "ConditionPathExists=!/etc/cron.d/pcp-pmlogger: true",
	// "ConditionACPower=true: not checked".
	Conditions []string `json:"conditions,omitempty"`

	// Live state from a running systemd ([LiveSource]); nil when it was
	// not read (no systemd manager, no D-Bus client). LastTrigger of a
	// Persistent=true timer is its stamp file's time when live state has
	// none (a mounted image, a host without a running manager).
	LastTrigger *time.Time  `json:"last_trigger,omitempty"`
	NextElapse  *time.Time  `json:"next_elapse,omitempty"`
	PastStarts  []time.Time `json:"past_starts,omitempty"` // from the journal
	// LiveActive is whether systemd has the timer active (waiting to
	// elapse) now, from its ActiveState; nil when not read. It can differ
	// from Active: a timer started by hand without being enabled, or an
	// enabled one stopped (ApplyRunning says so in LiveNote).
	LiveActive *bool `json:"live_active,omitempty"`

	Active    bool     `json:"active"`               // will run: pulled in from the boot target / cron is the scheduler
	ActiveVia []string `json:"active_via,omitempty"` // the chain that pulls it in
	Reason    string   `json:"reason,omitempty"`     // why it is inactive ("nothing pulls it in", "masked")
	// StepsAside: a crontab line that does nothing because the host
	// boots with systemd — its command, or the script it runs, checks
	// /run/systemd/system and leaves the work to a systemd timer (Reason
	// says which). ApplyRunning lets it through when systemd is not
	// running. Not recorded (the v1 format is frozen): Reason says it.
	StepsAside bool `json:"-"`
	// IdleNow: the files say it runs, but on the live host it cannot now
	// (systemd or the cron daemon is not running); LiveNote says why, or
	// that a job the files rule out runs after all. Set by ApplyRunning on
	// the running host only, never for a mounted image.
	IdleNow  bool   `json:"idle_now,omitempty"`
	LiveNote string `json:"live_note,omitempty"`
	// RunsNow says whether the job runs on the live host now, whatever
	// its files say (a crontab line that steps aside for systemd runs
	// when systemd is not running and a cron daemon is); nil when the
	// running state was not read. Set by ApplyRunning; [Runs] reads it.
	RunsNow *bool    `json:"runs_now,omitempty"`
	Note    string   `json:"note,omitempty"`   // e.g. "PCP archive check: heavy disk I/O"
	Errors  []string `json:"errors,omitempty"` // "file:line: reason"
}

// Firing is one planned run of a job, with the window in which it may
// actually start given AccuracySec and RandomizedDelaySec.
type Firing struct {
	Job      string    `json:"job"` // Job.Name
	Planned  time.Time `json:"planned"`
	Earliest time.Time `json:"earliest"`
	Latest   time.Time `json:"latest"`
}

// Unpredictable reports whether a job's firing times say little about
// when it starts: its random delay (RandomizedDelaySec=, anacron's
// RANDOM_DELAY) is at least half its period, so a run may start anywhere
// between one planned time and the next. An unknown period (0) is never
// unpredictable. correlate sets such a job's firings aside by the same
// rule (correlate/credit.go unpredictable).
func Unpredictable(delay, period time.Duration) bool {
	return delay > 0 && period > 0 && 2*delay >= period
}
