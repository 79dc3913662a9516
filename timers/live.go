package timers

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"

	"github.com/memdiag/memdiag/internal/hostenv"
)

// LiveTimer is what a running systemd knows about a timer and the journal
// about its service: the last and next elapse (org.freedesktop.systemd1
// Timer properties LastTriggerUSec, NextElapseUSecRealtime) and past start
// times.
type LiveTimer struct {
	LastTrigger time.Time
	NextElapse  time.Time
	Starts      []time.Time
	// ActiveState is the unit's ActiveState ("active" while the timer
	// waits to elapse, "inactive" once stopped); "" when not read.
	ActiveState string
}

// LiveSource reads live timer state. It is the narrow seam in front of
// D-Bus and the journal, which tests cannot run; [ManagerLive] is the
// D-Bus implementation.
type LiveSource interface {
	Timer(name string) (LiveTimer, error)
}

// UnavailableError says live state cannot be read, and why: memdiag's one
// [hostenv.Unavailable]. Commands print it once.
type UnavailableError = hostenv.Unavailable

// unitProperties is the part of go-systemd's *dbus.Conn that live state
// uses; tests fake it.
type unitProperties interface {
	GetUnitTypePropertiesContext(ctx context.Context, unit, unitType string) (map[string]any, error)
	Close()
}

// ManagerLive reads timers' live state from the host's systemd manager
// over D-Bus (the system bus, or systemd's private socket for root). Close
// it when done.
type ManagerLive struct {
	ctx  context.Context
	conn unitProperties
}

// Timer returns the timer unit's LastTriggerUSec and NextElapseUSecRealtime
// (µs since the Unix epoch, CLOCK_REALTIME; 0 means never or none), in
// UTC, and its ActiveState. A timer with only monotonic settings (OnBootSec=, OnUnitActiveSec=)
// has no realtime next elapse; its NextElapse stays zero. Past starts
// (the journal) are not read. Source: org.freedesktop.systemd1(5),
// "Timer Unit Objects".
func (m *ManagerLive) Timer(name string) (LiveTimer, error) {
	props, err := m.conn.GetUnitTypePropertiesContext(m.ctx, name, "Timer")
	if err != nil {
		return LiveTimer{}, fmt.Errorf("%s: %w", name, err)
	}
	lt := LiveTimer{LastTrigger: usecTime(props["LastTriggerUSec"]), NextElapse: usecTime(props["NextElapseUSecRealtime"])}
	// Whether it waits to fire is the Unit interface's ActiveState: a
	// timer started without being enabled (systemctl start) fires, one
	// stopped (systemctl stop, memdiag confirm's hold) does not, whatever
	// the unit files' links say.
	if unit, err := m.conn.GetUnitTypePropertiesContext(m.ctx, name, "Unit"); err == nil {
		lt.ActiveState, _ = unit["ActiveState"].(string)
	}
	return lt, nil
}

// usecTime converts a D-Bus "t" property in µs since the epoch; 0 and
// UINT64_MAX (systemd's USEC_INFINITY) are "none", the zero time.
func usecTime(v any) time.Time {
	u, ok := v.(uint64)
	if !ok || u == 0 || u >= math.MaxInt64 {
		return time.Time{}
	}
	return time.UnixMicro(int64(u)).UTC()
}

// Close closes the D-Bus connection. It returns nil; the error result
// makes ManagerLive an io.Closer.
func (m *ManagerLive) Close() error {
	m.conn.Close()
	return nil
}

// NotPID1 says that no systemd manager runs (sd_booted(3): no
// /run/systemd/system), in the words every command uses.
const NotPID1 = "systemd is not PID 1 here (no /run/systemd/system), so timers do not fire by themselves"

// ProbeLiveSource is ProbeLive as a ListOptions.Live: a nil LiveSource,
// not a nil *ManagerLive in one, when there is nothing to connect to.
func ProbeLiveSource(ctx context.Context, root string) (LiveSource, error) {
	m, err := ProbeLive(ctx, root)
	if m == nil {
		return nil, err
	}
	return m, nil
}

// ProbeLive connects to the systemd manager of the host memdiag runs on.
// It returns nil and no error when root is not "/": a mounted image or a
// fixture tree has unit files but no running manager, and that is nothing
// to report. It returns an *UnavailableError when no systemd manager runs
// (sd_booted(3): /run/systemd/system is missing, so PID 1 is not systemd)
// or when neither the D-Bus system bus nor systemd's private socket
// answers. The context bounds the connection and every later call.
func ProbeLive(ctx context.Context, root string) (*ManagerLive, error) {
	if filepath.Clean(root) != "/" {
		return nil, nil
	}
	return probeLive(ctx, root, func(ctx context.Context) (unitProperties, error) { return sddbus.NewWithContext(ctx) })
}

func probeLive(ctx context.Context, root string, dial func(context.Context) (unitProperties, error)) (*ManagerLive, error) {
	p := filepath.Join(root, "run/systemd/system")
	if _, err := os.Stat(p); err != nil {
		return nil, &UnavailableError{Need: NotPID1, Hint: "LAST is shown only from Persistent= timers' stamp files; NEXT is projected from the unit files", Err: err}
	}
	conn, err := dial(ctx)
	if err != nil {
		return nil, &UnavailableError{Path: "/run/dbus/system_bus_socket", Need: "the D-Bus system bus or /run/systemd/private", Hint: err.Error()}
	}
	return &ManagerLive{ctx: ctx, conn: conn}, nil
}
