package timers

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// LiveTimer is what a running systemd knows about a timer and the journal
// about its service: the last and next elapse (org.freedesktop.systemd1
// Timer properties LastTriggerUSec, NextElapseUSecRealtime) and past start
// times.
type LiveTimer struct {
	LastTrigger time.Time
	NextElapse  time.Time
	Starts      []time.Time
}

// LiveSource reads live timer state. It is the narrow seam in front of
// D-Bus and the journal, which tests cannot run; a D-Bus implementation
// plugs in here.
type LiveSource interface {
	Timer(name string) (LiveTimer, error)
}

// UnavailableError says live state cannot be read, and why. Commands
// print it once.
type UnavailableError struct {
	Path string
	Need string
	Hint string
}

func (e *UnavailableError) Error() string {
	s := fmt.Sprintf("%s: unavailable: %s", e.Path, e.Need)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// ProbeLive reports whether a systemd manager runs on the root's host:
// sd_booted(3) tests for /run/systemd/system. Without one there is no
// live state, and ProbeLive returns an *UnavailableError. With one it
// also returns an *UnavailableError for now: memdiag does not link a D-Bus
// client, so the listing always comes from the unit files.
func ProbeLive(root string) (LiveSource, error) {
	p := filepath.Join(root, "run/systemd/system")
	if _, err := os.Stat(p); err != nil {
		return nil, &UnavailableError{Path: p, Need: "a running systemd (PID 1 is not systemd)", Hint: "last/next elapse and past runs are not shown; schedules come from the unit files"}
	}
	return nil, &UnavailableError{Path: p, Need: "a D-Bus client for org.freedesktop.systemd1", Hint: "not built in; schedules come from the unit files"}
}
