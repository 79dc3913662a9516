package timers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/process"
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
	proc := filepath.Join(root, "proc")
	r.Init, _ = process.ReadComm(context.Background(), proc, 1)
	procs, _ := fs.AllProcs()
	for _, p := range procs {
		if c, err := process.ReadComm(context.Background(), proc, p.PID); err == nil && CronDaemon(c) {
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
// || …"), which systemd not running lets through: they run now if a cron
// daemon does. Active and Reason keep what the files say (a mounted
// image, or this host once booted with systemd); IdleNow, LiveNote and
// RunsNow say what happens now, and [Runs] says it in one sentence.
func ApplyRunning(jobs []Job, r Running) {
	for i := range jobs {
		j := &jobs[i]
		guarded := !j.Active && j.StepsAside
		runs := j.Active
		switch {
		case j.Source == Systemd && j.Active && !r.Systemd:
			j.IdleNow, runs = true, false
			j.LiveNote = fmt.Sprintf("does not fire now: systemd is not running (PID 1 is %q)", r.Init)
		case j.Source == Systemd && r.Systemd && j.LiveActive != nil && *j.LiveActive && !j.Active:
			runs = true
			j.LiveNote = startedNote
		case j.Source == Systemd && r.Systemd && j.LiveActive != nil && !*j.LiveActive && j.Active:
			j.IdleNow, runs = true, false
			j.LiveNote = stoppedNote
		case j.Source == Cron && j.Active && !r.Cron:
			j.IdleNow, runs = true, false
			j.LiveNote = "does not run now: no cron daemon is running"
		case j.Source == Cron && guarded && !r.Systemd && r.Cron:
			runs = true
			j.LiveNote = liftedNote
		case j.Source == Cron && guarded && !r.Systemd:
			// What happens now comes first: a terminal cuts the note.
			j.LiveNote = "does not run now: no cron daemon is running (were one running, its /run/systemd/system check would let it through: systemd is not running)"
		case j.Source == Anacron && j.Active:
			viaTimer := false
			for _, v := range j.ActiveVia {
				viaTimer = viaTimer || strings.Contains(v, ".timer")
			}
			switch {
			case viaTimer && !r.Systemd:
				j.IdleNow, runs, j.LiveNote = true, false, "does not run now: anacron is started by a systemd timer and systemd is not running"
			case !viaTimer && !r.Cron:
				j.IdleNow, runs, j.LiveNote = true, false, "does not run now: anacron is started by cron and no cron daemon is running"
			}
		}
		j.RunsNow = &runs
	}
}

// CronDaemon says whether comm (/proc/PID/comm) is a cron daemon's: Debian
// and cronie's cron, crond, which also name the child they fork to run
// each job.
func CronDaemon(comm string) bool { return comm == "cron" || comm == "crond" }

// startedNote and stoppedNote are the live notes of a timer whose live
// state differs from what its unit files say: started by hand though
// nothing pulls it in at boot, or inactive though something does (stopped,
// or the host booted a target that does not pull it in).
const (
	startedNote = "fires now: systemd has it active, started without being enabled (systemctl start): until it is stopped or the host reboots"
	stoppedNote = "does not fire now: systemd has it inactive (stopped, or not pulled in by the target it booted) until it is started"
)

// liftedNote is the live note of a crontab line that steps aside for
// systemd but runs, systemd not running and a cron daemon running.
const liftedNote = "runs now after all: systemd is not running, so its /run/systemd/system check lets it through"

// inactiveReason is the reason of an inactive job whose files gave none.
const inactiveReason = "nothing pulls it in (no boot target wants it, or no cron daemon is the scheduler)"

// Runs says whether job j runs on its host and, when it does not, why, in
// one sentence: `memdiag timers --all` (its ACTIVE column) and analyze's
// "Not named" both say it from here. On the live host (RunsNow, set by
// [ApplyRunning]) what happens now decides; for a mounted image the
// files do (Active, Reason). For a runner, why is the live note when the
// live host overrides the files ("runs now after all: …"), else "".
func Runs(j *Job) (runs bool, why string) {
	reason := strings.TrimSuffix(j.Reason, ".")
	if reason == "" {
		reason = inactiveReason
	}
	switch {
	case j.RunsNow != nil && *j.RunsNow:
		if !j.Active {
			return true, j.LiveNote
		}
		return true, ""
	case j.RunsNow != nil:
		if j.LiveNote != "" {
			return false, j.LiveNote
		}
		return false, reason
	case j.IdleNow:
		return false, j.LiveNote
	case !j.Active && j.LiveNote != "":
		// A recording made before runs_now: the live note of a line
		// that steps aside for systemd is the only record of whether
		// a cron daemon ran ("runs now after all", or "would run now
		// …, but no cron daemon is running").
		return j.LiveNote == liftedNote, j.LiveNote
	case !j.Active:
		return false, reason
	}
	return true, ""
}
