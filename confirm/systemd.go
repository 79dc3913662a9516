package confirm

import (
	"context"
	"fmt"
	"strings"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"

	"github.com/memdiag/memdiag/timers"
)

// UnitControl is the part of go-systemd's *dbus.Conn that holding a timer
// or putting a drop-in in place uses (org.freedesktop.systemd1.Manager
// StopUnit, StartUnit, Reload, and the unit's ActiveState and
// DropInPaths); tests fake it.
type UnitControl interface {
	ListUnitsByNamesContext(ctx context.Context, units []string) ([]sddbus.UnitStatus, error)
	StopUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	StartUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	ReloadContext(ctx context.Context) error
	GetUnitPropertyContext(ctx context.Context, unit, propertyName string) (*sddbus.Property, error)
	// GetServicePropertyContext reads a property of the Service
	// interface (MainPID, ControlPID), which the Unit interface lacks.
	GetServicePropertyContext(ctx context.Context, service, propertyName string) (*sddbus.Property, error)
	Close()
}

// SystemUnits connects to the system's systemd manager over D-Bus.
func SystemUnits(ctx context.Context) (UnitControl, error) {
	return sddbus.NewWithContext(ctx)
}

func prepareSystemd(ctx context.Context, job timers.Job, env Env, now time.Time) (Change, error) {
	if userTimer(job) {
		return Change{}, &CannotHoldError{Culprit: job.Name, Why: "it is a user timer (systemctl --user)", Advice: "run systemctl --user stop " + job.Name + " as " + job.User + " for the B runs"}
	}
	active, err := withUnits(ctx, env, func(u UnitControl) (bool, error) { return isActive(ctx, u, job.Name) })
	if err != nil {
		return Change{}, err
	}
	return Change{Kind: KindSystemd, Job: job.Name, At: now, Unit: job.Name, WasActive: active}, nil
}

// userTimer says whether job is a user manager's timer: its unit file is
// in a systemd/user folder (etc/systemd/user, usr/lib/systemd/user,
// ~/.config/systemd/user; systemd.unit(5)). Job.User alone does not say
// it: a system timer's User= is the user its service runs as (pcp's
// pmlogger_check.service runs as pcp).
func userTimer(job timers.Job) bool {
	return strings.Contains("/"+job.File, "/systemd/user/")
}

func applySystemd(ctx context.Context, c Change, env Env) error {
	if !c.WasActive {
		return nil
	}
	_, err := withUnits(ctx, env, func(u UnitControl) (bool, error) { return true, runJob(ctx, u.StopUnitContext, c.Unit, "stop") })
	return err
}

// undoSystemd starts the timer again if memdiag stopped it; starting an
// active unit does nothing, so this is safe to repeat.
func undoSystemd(ctx context.Context, c Change, env Env) error {
	if !c.WasActive {
		return nil
	}
	_, err := withUnits(ctx, env, func(u UnitControl) (bool, error) { return true, runJob(ctx, u.StartUnitContext, c.Unit, "start") })
	return err
}

func withUnits(ctx context.Context, env Env, fn func(UnitControl) (bool, error)) (bool, error) {
	if env.Units == nil {
		return false, ErrNoSystemd
	}
	u, err := env.Units(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrNoSystemd, err)
	}
	defer u.Close()
	return fn(u)
}

func isActive(ctx context.Context, u UnitControl, unit string) (bool, error) {
	st, err := u.ListUnitsByNamesContext(ctx, []string{unit})
	if err != nil {
		return false, fmt.Errorf("%s: %w", unit, err)
	}
	if len(st) == 0 || st[0].LoadState == "not-found" {
		return false, fmt.Errorf("%s: no such unit", unit)
	}
	return st[0].ActiveState == "active", nil
}

// runJob queues a start or stop job ("replace" mode) and waits for its
// result ("done", or "failed", "timeout", … per org.freedesktop.systemd1(5)).
func runJob(ctx context.Context, call func(context.Context, string, string, chan<- string) (int, error), unit, verb string) error {
	ch := make(chan string, 1)
	if _, err := call(ctx, unit, "replace", ch); err != nil {
		return fmt.Errorf("systemctl %s %s: %w", verb, unit, err)
	}
	select {
	case res := <-ch:
		if res != "done" {
			return fmt.Errorf("systemctl %s %s: job %s", verb, unit, res)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("systemctl %s %s: %w", verb, unit, context.Cause(ctx))
	}
}
