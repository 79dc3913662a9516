package timers

// anacron: /etc/anacrontab (anacrontab(5), Debian anacron 2.3). anacron
// itself is started by something else — on Debian by anacron.timer
// (OnCalendar=*-*-* 07..23:30, RandomizedDelaySec=5m) under systemd, by
// /etc/cron.d/anacron otherwise — and runs each job whose period has
// elapsed since the date in /var/spool/anacron/<job-id>, after the job's
// delay plus a random delay of up to RANDOM_DELAY minutes, when the hour is
// inside START_HOURS_RANGE.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// ErrAnacronParse is wrapped by errors about malformed anacrontab lines.
var ErrAnacronParse = errors.New("malformed anacrontab line")

// anacronPeriods are the named periods anacron accepts.
var anacronPeriods = map[string]int{"@daily": 1, "@weekly": 7, "@monthly": 0, "@yearly": 0, "@annually": 0}

// anacronTrigger is what starts anacron, as the Job records it.
type anacronTrigger struct {
	Schedules []string      // "systemd:*-*-* 07..23:30", "cron:30 7-23 * * *"
	Via       []string      // the chain that makes the trigger run
	Jitter    time.Duration // the trigger's own RandomizedDelaySec
	Accuracy  time.Duration // the trigger's AccuracySec (0 for cron)
	Why       string        // why anacron never runs, when Schedules is empty
}

// anacronJobs reads etc/anacrontab.
func anacronJobs(root string, trig anacronTrigger, systemdInit bool) []Job {
	const rel = "etc/anacrontab"
	lines, err := readLines(root, rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return []Job{{Name: "anacron", Source: Anacron, File: rel, Errors: []string{err.Error()}}}
	}
	return parseAnacrontab(root, rel, lines, trig, systemdInit)
}

// parseAnacrontab turns the lines of rel (an anacrontab under root) into
// jobs; root is read only for the jobs' timestamps and run-parts folders.
func parseAnacrontab(root, rel string, lines []string, trig anacronTrigger, systemdInit bool) []Job {
	var jobs []Job
	var startHours string
	var randomDelay time.Duration
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if envLine.MatchString(l) {
			k, v, _ := strings.Cut(l, "=")
			k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"'`)
			switch k {
			case "START_HOURS_RANGE":
				startHours = v
			case "RANDOM_DELAY":
				n, err := strconv.Atoi(v)
				if err != nil {
					jobs = append(jobs, Job{Name: fmt.Sprintf("anacron:%d", i+1), Source: Anacron, File: rel, Line: i + 1,
						Errors: []string{fmt.Sprintf("%s:%d: %v: RANDOM_DELAY=%q is not a number of minutes", rel, i+1, ErrAnacronParse, v)}})
					continue
				}
				randomDelay = time.Duration(n) * time.Minute
			}
			continue
		}
		f := cronFields(l)
		j := Job{Source: Anacron, File: rel, Line: i + 1, User: "root"}
		if len(f) < 4 {
			j.Name = fmt.Sprintf("anacron:%d", i+1)
			j.Errors = []string{fmt.Sprintf("%s:%d: %v: want period, delay, job id, command: %q", rel, i+1, ErrAnacronParse, l)}
			jobs = append(jobs, j)
			continue
		}
		j.Name = "anacron:" + f[2]
		j.Schedule = []string{f[0]}
		j.Command = strings.Trim(cutFields(l, 3), " \t")
		days, err := anacronPeriod(f[0])
		if err != nil {
			j.Errors = append(j.Errors, fmt.Sprintf("%s:%d: %v", rel, i+1, err))
		}
		if !validAnacronID(f[2]) {
			j.Errors = append(j.Errors, fmt.Sprintf("%s:%d: %v: job id %q may not contain '/' or be \".\" or \"..\" (anacrontab(5)): it names a file in /var/spool/anacron", rel, i+1, ErrAnacronParse, f[2]))
		}
		delay, err := strconv.Atoi(f[1])
		if err != nil || delay < 0 {
			j.Errors = append(j.Errors, fmt.Sprintf("%s:%d: %v: delay %q is not a number of minutes", rel, i+1, ErrAnacronParse, f[1]))
		}
		if len(j.Errors) > 0 {
			j.Reason = "malformed line"
			jobs = append(jobs, j)
			continue
		}
		if days > 0 {
			j.PeriodSeconds = seconds(time.Duration(days) * 24 * time.Hour)
		}
		j.Delay = time.Duration(delay) * time.Minute
		j.StartHoursRange = startHours
		j.RandomizedDelaySec = randomDelay + trig.Jitter
		j.AccuracySec = trig.Accuracy
		j.Trigger = trig.Schedules
		// The id is checked above: it names a file in var/spool/anacron.
		if b, err := rootfs.ReadFile(context.Background(), root, path.Join("var/spool/anacron", f[2]), 64); err == nil && len(b) >= 8 {
			j.LastRun = string(b[:8])
		}
		if dir := runPartsDir(j.Command); dir != "" {
			j.Scripts = runPartsScripts(root, strings.TrimPrefix(dir, "/"))
			j.IdleScripts = idleScripts(root, j.Scripts, systemdInit)
			j.IdleIOScripts = idleIOScripts(root, j.Scripts, j.IdleScripts)
		}
		j.Note = noteFor(j)
		if len(trig.Schedules) == 0 {
			j.Reason = trig.Why
		} else {
			j.Active = true
			j.ActiveVia = trig.Via
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// validAnacronID reports whether id may name a timestamp file in
// /var/spool/anacron: anacrontab(5) allows "any non-blank character except
// slashes"; "." and ".." would name the folder or its parent.
func validAnacronID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsRune(id, '/') && !strings.ContainsRune(id, 0)
}

// anacronPeriod returns a period in days; 0 with no error for @monthly
// and @yearly, which follow the calendar.
func anacronPeriod(s string) (int, error) {
	if d, ok := anacronPeriods[s]; ok {
		return d, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: period %q is neither a number of days nor @daily/@weekly/@monthly/@yearly", ErrAnacronParse, s)
	}
	return n, nil
}

// parseHoursRange parses START_HOURS_RANGE ("3-22"): anacron starts jobs
// only when the hour h satisfies from <= h < to.
func parseHoursRange(s string) (from, to int, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 24, s == ""
	}
	x, err1 := strconv.Atoi(strings.TrimSpace(a))
	y, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return 0, 24, false
	}
	return x, y, true
}
