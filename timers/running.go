package timers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/procfs"
)

// Running is what runs on the live host, which unit files and crontabs
// cannot say: whether systemd is the running init (so timers fire) and
// whether a cron daemon is running (so crontab lines run).
type Running struct {
	Systemd bool   // sd_booted(3): /run/systemd/system exists
	Init    string // PID 1's name (/proc/1/comm), for messages
	Cron    bool   // a process named cron, crond or busybox crond runs
}

// ProbeRunning reads Running from the host root "/" (<root>/run and
// <root>/proc). ok is false for any other root: a mounted image has no
// running state, and its jobs are what its files say.
func ProbeRunning(root string) (r Running, ok bool) {
	if filepath.Clean(root) != "/" {
		return Running{}, false
	}
	_, err := os.Stat(filepath.Join(root, "run/systemd/system"))
	r.Systemd = err == nil
	fs, err := procfs.NewFS(filepath.Join(root, "proc"))
	if err != nil {
		return r, true
	}
	if p, err := fs.Proc(1); err == nil {
		r.Init, _ = p.Comm()
	}
	procs, _ := fs.AllProcs()
	for _, p := range procs {
		if c, err := p.Comm(); err == nil && (c == "cron" || c == "crond") {
			r.Cron = true
			break
		}
	}
	return r, true
}

// ApplyRunning notes, for the live host, the jobs whose files say they
// run but which cannot run now — systemd timers while PID 1 is not
// systemd, crontab and anacron jobs while no cron daemon runs — and the
// crontab lines that step aside for systemd ("test -e /run/systemd/system
// || …") but do run because systemd is not running. Active and Reason keep
// what the files say (a mounted image, or this host once booted with
// systemd); IdleNow and LiveNote say what happens now.
func ApplyRunning(jobs []Job, r Running) {
	for i := range jobs {
		j := &jobs[i]
		guarded := !j.Active && strings.Contains(j.Reason, "/run/systemd/system")
		switch {
		case j.Source == Systemd && j.Active && !r.Systemd:
			j.IdleNow = true
			j.LiveNote = fmt.Sprintf("does not fire now: systemd is not running (PID 1 is %q)", r.Init)
		case j.Source == Cron && j.Active && !r.Cron:
			j.IdleNow = true
			j.LiveNote = "does not run now: no cron daemon is running"
		case j.Source == Cron && guarded && !r.Systemd && r.Cron:
			j.LiveNote = "runs now after all: systemd is not running, so its /run/systemd/system check lets it through"
		case j.Source == Cron && guarded && !r.Systemd:
			j.LiveNote = "would run now (systemd is not running, so its /run/systemd/system check lets it through), but no cron daemon is running"
		case j.Source == Anacron && j.Active:
			viaTimer := false
			for _, v := range j.ActiveVia {
				viaTimer = viaTimer || strings.Contains(v, ".timer")
			}
			switch {
			case viaTimer && !r.Systemd:
				j.IdleNow, j.LiveNote = true, "does not run now: anacron is started by a systemd timer and systemd is not running"
			case !viaTimer && !r.Cron:
				j.IdleNow, j.LiveNote = true, "does not run now: anacron is started by cron and no cron daemon is running"
			}
		}
	}
}
