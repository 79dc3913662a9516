package timers

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeManager stands for go-systemd's *dbus.Conn: the Timer properties
// systemd returns for each unit, as D-Bus "t" values (uint64 µs), and
// the Unit interface's ActiveState.
type fakeManager struct {
	props  map[string]map[string]any
	state  map[string]string
	closed bool
}

func (f *fakeManager) GetUnitTypePropertiesContext(_ context.Context, unit, unitType string) (map[string]any, error) {
	if unitType == "Unit" {
		if s, ok := f.state[unit]; ok {
			return map[string]any{"ActiveState": s}, nil
		}
	}
	if unitType != "Timer" {
		return nil, errors.New("Unknown interface")
	}
	p, ok := f.props[unit]
	if !ok {
		return nil, errors.New("Unit " + unit + " not found.")
	}
	return p, nil
}

func (f *fakeManager) Close() { f.closed = true }

func TestManagerLiveTimer(t *testing.T) {
	fm := &fakeManager{props: map[string]map[string]any{
		// 2026-11-29 11:55:03 and 12:25:41 UTC in µs since the epoch.
		"pmlogger_check.timer": {"LastTriggerUSec": uint64(1795953303000000), "NextElapseUSecRealtime": uint64(1795955141000000)},
		// Never triggered; only monotonic settings (USEC_INFINITY).
		"systemd-tmpfiles-clean.timer": {"LastTriggerUSec": uint64(0), "NextElapseUSecRealtime": uint64(math.MaxUint64)},
	}, state: map[string]string{"pmlogger_check.timer": "inactive"}}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := probeLive(context.Background(), root, func(context.Context) (unitProperties, error) { return fm, nil })
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Timer("pmlogger_check.timer")
	if err != nil {
		t.Fatal(err)
	}
	if want := utc("2026-11-29 11:55:03"); !got.LastTrigger.Equal(want) || got.LastTrigger.Location() != time.UTC {
		t.Errorf("LastTrigger = %v, want %v in UTC", got.LastTrigger, want)
	}
	if want := utc("2026-11-29 12:25:41"); !got.NextElapse.Equal(want) {
		t.Errorf("NextElapse = %v, want %v", got.NextElapse, want)
	}
	if got.ActiveState != "inactive" {
		t.Errorf("ActiveState = %q, want inactive", got.ActiveState)
	}
	got, err = m.Timer("systemd-tmpfiles-clean.timer")
	if err != nil || !got.LastTrigger.IsZero() || !got.NextElapse.IsZero() {
		t.Errorf("never-triggered timer = %+v, %v; want zero times", got, err)
	}
	if _, err := m.Timer("gone.timer"); err == nil || !strings.Contains(err.Error(), "gone.timer") {
		t.Errorf("unknown timer: error %v, want one naming gone.timer", err)
	}
	if err := m.Close(); err != nil || !fm.closed {
		t.Errorf("Close = %v, closed %v", err, fm.closed)
	}

	// Through Inventory, the live state lands on the job.
	jobs, err := Inventory(fixture(t, "debian"), InventoryOptions{Live: &ManagerLive{ctx: context.Background(), conn: fm}})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Name == "pmlogger_check.timer" && (j.LastTrigger == nil || !j.LastTrigger.Equal(utc("2026-11-29 11:55:03")) || j.LiveActive == nil || *j.LiveActive) {
			t.Errorf("pmlogger_check.timer LastTrigger = %v, LiveActive %v (want false: stopped)", j.LastTrigger, j.LiveActive)
		}
		if j.Name == "systemd-tmpfiles-clean.timer" && j.LiveActive != nil {
			t.Errorf("systemd-tmpfiles-clean.timer LiveActive %v, want nil (no ActiveState read)", *j.LiveActive)
		}
	}
}

func TestProbeLiveUnavailable(t *testing.T) {
	dialed := false
	dial := func(context.Context) (unitProperties, error) {
		dialed = true
		return nil, errors.New("dial unix /run/dbus/system_bus_socket: connect: no such file or directory")
	}
	// No /run/systemd/system: PID 1 is not systemd; D-Bus is not tried.
	_, err := probeLive(context.Background(), t.TempDir(), dial)
	var ue *UnavailableError
	if !errors.As(err, &ue) || err.Error() != NotPID1+" (LAST is shown only from Persistent= timers' stamp files; NEXT is projected from the unit files)" || dialed {
		t.Errorf("without run/systemd/system: %v (dialed %v), want an UnavailableError saying systemd is not PID 1", err, dialed)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = probeLive(context.Background(), root, dial)
	if !errors.As(err, &ue) || !strings.Contains(ue.Hint, "no such file") {
		t.Errorf("bus down: %v, want an UnavailableError carrying the dial error", err)
	}
}
