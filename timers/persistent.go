package timers

import (
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// stampDir is where the system manager keeps the stamp file of each
// timer with Persistent=true: stamp-UNIT, whose modification time is the
// timer's last trigger, kept across reboots and stops. systemd.timer(5),
// Persistent=; src/core/timer.c (timer_setup_persistent, timer_start
// reads it, timer_enter_running touches it).
const stampDir = "var/lib/systemd/timers"

// readStamps sets LastTrigger of every system timer with Persistent=true
// from its stamp file under root: what systemd itself loads when the
// timer starts. A stamp dated after now is left out, as systemd leaves
// it ("Not using persistent file timestamp … as it is in the future"); a
// timer without a stamp never ran (systemd makes one at its first start).
// Live state, read after, replaces it ([ApplyLive]).
func readStamps(root string, jobs []Job, now time.Time) {
	for i := range jobs {
		j := &jobs[i]
		if j.Source != Systemd || !j.Persistent || len(j.Schedule) == 0 {
			continue
		}
		fi, err := rootfs.Stat(root, stampDir+"/stamp-"+j.Name)
		if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(now) {
			continue
		}
		t := fi.ModTime().UTC()
		j.LastTrigger = &t
	}
}

// CatchUp reports the run systemd owes a Persistent=true timer: an
// elapse of its calendar (missed) came after its last trigger
// (Job.LastTrigger) and is not after now, so systemd starts the service
// as soon as the timer starts — at boot when the timer is enabled, at
// once when it is started by hand after a stop — instead of waiting for
// the next elapse. systemd computes the next elapse from the last
// trigger and moves one already past to the manager's start, plus
// RandomizedDelaySec= (src/core/timer.c timer_enter_waiting). ok is false
// when nothing is owed: not Persistent=, no calendar, no last trigger
// known, or no elapse since it. A timer systemd has active now has
// already been given its run (its LastTrigger is live); callers say
// CatchUp only for one that is not running (a mounted image, a stopped
// timer).
func CatchUp(j Job, now time.Time, loc *time.Location) (missed time.Time, ok bool) {
	if j.Source != Systemd || !j.Persistent || j.LastTrigger == nil {
		return time.Time{}, false
	}
	next, _ := jobNext(j, loc)
	if next == nil {
		return time.Time{}, false
	}
	e := next(*j.LastTrigger)
	if e.IsZero() || e.After(now) {
		return time.Time{}, false
	}
	return e, true
}
