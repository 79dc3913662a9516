package timers

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/redact"
)

// InventoryOptions configures [Inventory].
type InventoryOptions struct {
	// Users also reads the user manager's timers (etc/systemd/user,
	// usr/lib/systemd/user, ~/.config/systemd/user of accounts in
	// etc/passwd). They are active only for users with lingering enabled.
	Users bool
	// Live, when set, adds each system timer's last and next elapse and
	// its service's past starts (see [ProbeLive]). A timer the source
	// cannot answer for keeps nil live fields; reporting that the source
	// is unavailable is the caller's job, once.
	Live LiveSource
	// KeepSecrets keeps commands and the lines quoted in errors as the
	// files write them (--no-redact); otherwise secrets in them (a
	// crontab's mysqldump -pX, a unit's --api-token=) are replaced by
	// redact.String.
	KeepSecrets bool
}

// daemons is what decides whether cron and anacron jobs run on the root.
type daemons struct {
	cronActive       bool
	cronWhy          string   // why cron jobs do not run
	cronVia          []string // what starts cron
	anacronInstalled bool     // usr/sbin/anacron exists and is executable
	systemdInit      bool     // sbin/init is systemd
}

// Inventory lists every periodic job defined under root: systemd timer
// units (with the unit each one starts), /etc/crontab, /etc/cron.d/*,
// /var/spool/cron/crontabs/* and /etc/anacrontab. Jobs are sorted by
// source and name. Each job's TimeZone is the root's zone ([HostZone])
// when the root names one. A malformed file or line never stops the inventory: it
// becomes a Job with Errors ("file:line: reason"), and [Problems] collects
// them. The error is non-nil only when root itself cannot be read.
func Inventory(root string, opts InventoryOptions) ([]Job, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	sys := &manager{scope: "system", set: newUnitSet(root, systemUnitDirs)}
	sys.act = walk(sys.set, bootTargets(sys.set))
	jobs := systemdJobs(root, sys)
	readStamps(root, jobs, time.Now())
	if opts.Live != nil {
		ApplyLive(jobs, opts.Live)
	}
	if opts.Users {
		dirs, homes := userUnitDirs(root)
		usr := &manager{scope: "user", set: newUnitSet(root, dirs), lingering: lingeringUsers(root), homes: homes}
		usr.act = walk(usr.set, bootTargets(usr.set))
		for _, j := range systemdJobs(root, usr) {
			j.Name = "user:" + j.Name
			jobs = append(jobs, j)
		}
	}
	d := findDaemons(root, sys)
	jobs = append(jobs, cronJobs(root, d)...)
	jobs = append(jobs, anacronJobs(root, findAnacronTrigger(root, sys, jobs), d.systemdInit)...)
	// Schedules run in the host's zone; record it so that a Job projects
	// the same firings on another host.
	if z := HostZone(root); z != "" {
		for i := range jobs {
			if jobs[i].TimeZone == "" {
				jobs[i].TimeZone = z
			}
		}
	}
	if !opts.KeepSecrets {
		for i := range jobs {
			j := &jobs[i]
			if len(j.Errors) > 0 && j.User != "" {
				// A malformed line's fields may have shifted ("mysqldump"
				// taken for the user): redact the command with the word
				// before it, so that "-pX" keeps its program.
				j.Command = strings.TrimPrefix(redact.String(j.User+" "+j.Command), j.User+" ")
			}
			jobs[i].Command = redact.String(jobs[i].Command)
			for k, e := range jobs[i].Errors {
				jobs[i].Errors[k] = redact.String(e)
			}
		}
	}
	order := map[Source]int{Systemd: 0, Cron: 1, Anacron: 2}
	sort.SliceStable(jobs, func(a, b int) bool {
		if order[jobs[a].Source] != order[jobs[b].Source] {
			return order[jobs[a].Source] < order[jobs[b].Source]
		}
		if jobs[a].File != jobs[b].File && jobs[a].Source != Systemd {
			return jobs[a].File < jobs[b].File
		}
		if jobs[a].Source != Systemd {
			return jobs[a].Line < jobs[b].Line
		}
		return jobs[a].Name < jobs[b].Name
	})
	return jobs, nil
}

// ApplyLive adds each systemd timer's last and next elapse and its
// service's past starts from live (see [InventoryOptions.Live]), for
// the system manager's timers. A timer
// live cannot answer for keeps nil live fields. Calling it after
// [Inventory] lets a caller bound the time live takes (a D-Bus timeout)
// without the unit files' parsing counted in it.
func ApplyLive(jobs []Job, live LiveSource) {
	for i := range jobs {
		// System timers only: a user manager's ("user:NAME") are not the
		// system manager's to answer for.
		if jobs[i].Source != Systemd || strings.HasPrefix(jobs[i].Name, "user:") {
			continue
		}
		lt, err := live.Timer(jobs[i].Name)
		if err != nil {
			continue
		}
		if !lt.LastTrigger.IsZero() {
			jobs[i].LastTrigger = &lt.LastTrigger
		}
		if !lt.NextElapse.IsZero() {
			jobs[i].NextElapse = &lt.NextElapse
		}
		jobs[i].PastStarts = lt.Starts
		switch lt.ActiveState {
		case "active", "reloading", "activating":
			jobs[i].LiveActive = new(true)
		case "inactive", "failed", "deactivating":
			jobs[i].LiveActive = new(false)
		}
	}
}

// Problems returns every job's errors, in job order.
func Problems(jobs []Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Errors...)
	}
	return out
}

// cronUnits are the names Debian (cron, cronie, busybox, systemd-cron)
// gives the cron daemon's service.
var cronUnits = []string{"cron.service", "cronie.service", "crond.service"}

// findDaemons decides whether cron runs on the root: its service is
// pulled in at boot (or, on a root without systemd, its daemon exists).
func findDaemons(root string, sys *manager) daemons {
	d := daemons{}
	// sbin/init is a link to systemd on Debian with systemd-sysv; the
	// link target need not exist under a fixture root.
	if t, err := os.Readlink(filepath.Join(root, "sbin/init")); err == nil && strings.HasSuffix(t, "systemd/systemd") {
		d.systemdInit = true
	} else if t, err := resolveIn(root, "sbin/init"); err == nil && strings.HasSuffix(t, "systemd/systemd") {
		d.systemdInit = true
	}
	if isExecutable(root, "usr/sbin/anacron") {
		d.anacronInstalled = true
	}
	for _, n := range cronUnits {
		if c := sys.act.chain(n); c != nil && !sys.set.load(n).Masked {
			d.cronActive, d.cronVia = true, c
			return d
		}
	}
	binary := ""
	for _, b := range []string{"usr/sbin/cron", "usr/sbin/crond", "sbin/crond"} {
		if isExecutable(root, b) {
			binary = b
			break
		}
	}
	hasUnit := false
	for _, n := range cronUnits {
		if p, _ := sys.set.find(n); p != "" {
			hasUnit = true
		}
	}
	switch {
	case binary == "":
		d.cronWhy = "no cron daemon installed (usr/sbin/cron missing)"
	case hasUnit && d.systemdInit:
		d.cronWhy = "cron.service is not enabled (nothing pulls it in at boot)"
	default:
		d.cronActive = true
		d.cronVia = []string{binary + " (no systemd; started by init)"}
	}
	return d
}

// findAnacronTrigger decides what starts anacron: anacron.timer when it
// is active, else an active cron line that runs anacron.
func findAnacronTrigger(root string, sys *manager, jobs []Job) anacronTrigger {
	if !isExecutable(root, "usr/sbin/anacron") {
		return anacronTrigger{Why: "anacron is not installed (usr/sbin/anacron missing)"}
	}
	for _, j := range jobs {
		if j.Source == Systemd && j.Name == "anacron.timer" && j.Active {
			t := anacronTrigger{Via: j.ActiveVia, Jitter: j.RandomizedDelaySec, Accuracy: j.AccuracySec}
			for _, s := range j.Schedule {
				t.Schedules = append(t.Schedules, "systemd:"+s)
			}
			return t
		}
	}
	for _, j := range jobs {
		if j.Source == Cron && j.Active && strings.Contains(j.Command, "anacron") {
			// cron starts within the minute (see Project).
			return anacronTrigger{Schedules: []string{"cron:" + j.Schedule[0]}, Via: append(append([]string(nil), j.ActiveVia...), j.Name), Accuracy: time.Minute}
		}
	}
	return anacronTrigger{Why: "nothing starts anacron periodically (anacron.timer inactive, no active cron line runs it)"}
}

func isExecutable(root, rel string) bool {
	fi, err := rootfs.Stat(root, rel)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
