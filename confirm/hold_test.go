package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/supervise"
	"github.com/memdiag/memdiag/timers"
)

var t0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// pcpCron is Debian pcp's /etc/cron.d/pcp-pmlogger (pcp 6.3.7), without
// a trailing newline on purpose: the restore must keep that too.
const pcpCron = `#
# Performance Co-Pilot crontab entries for a monitored site
# with one or more pmlogger instances running
#
# daily processing of archive logs (with compression enabled)
10     0  *  *  *  root  [ -z "$PCP_DIR" ] && /usr/libexec/pcp/bin/pmlogger_daily
# every 30 minutes, check pmlogger instances are running
25,55  *  *  *  *  root  [ -z "$PCP_DIR" ] && /usr/libexec/pcp/bin/pmlogger_check -C`

func cronRoot(t *testing.T) (root, file string) {
	t.Helper()
	root = t.TempDir()
	file = filepath.Join(root, "etc/cron.d/pcp-pmlogger")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(pcpCron), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	return root, file
}

func checkJob() timers.Job {
	return timers.Job{Name: "cron.d/pcp-pmlogger:8", Source: timers.Cron, File: "etc/cron.d/pcp-pmlogger", Line: 8}
}

func TestCronHoldAndRelease(t *testing.T) {
	root, file := cronRoot(t)
	env := Env{Root: root}
	ctx := context.Background()
	if !hasJob(t, root, "cron.d/pcp-pmlogger:8") {
		t.Fatal("the inventory does not list cron.d/pcp-pmlogger:8 before the hold")
	}
	c, err := Prepare(ctx, checkJob(), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	wantOrig := `25,55  *  *  *  *  root  [ -z "$PCP_DIR" ] && /usr/libexec/pcp/bin/pmlogger_check -C`
	if c.Original != wantOrig || c.Held != "#memdiag-confirm-hold: "+wantOrig || c.File != file {
		t.Fatalf("change %+v", c)
	}
	st, err := OpenState(filepath.Join(root, "state"), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	// The hold is stamped when it is made (a B block), not when the
	// run prepared it: --restore says since when a job was held off.
	heldAt := t0.Add(95 * time.Second)
	st.Now = func() time.Time { return heldAt }
	if err := st.Hold(ctx, c); err != nil {
		t.Fatal(err)
	}
	if doc, err := readState(filepath.Join(root, "state")); err != nil || len(doc.Changes) != 1 || !doc.Changes[0].At.Equal(heldAt) {
		t.Fatalf("state after the hold: %+v, %v; want the change stamped %s", doc, err, heldAt)
	}
	b, _ := os.ReadFile(file)
	lines := strings.Split(string(b), "\n")
	if len(lines) != 8 || lines[7] != c.Held || lines[5] != strings.Split(pcpCron, "\n")[5] {
		t.Fatalf("held file:\n%s", b)
	}
	// The job is gone for cron: the inventory lists line 8 as held off.
	if hasJob(t, root, "cron.d/pcp-pmlogger:8") {
		t.Error("the held line is still a job that runs")
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(file)
	if string(b) != pcpCron {
		t.Errorf("restored file differs:\n%s", cmp.Diff(pcpCron, string(b)))
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(root, "state")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left after a clean close: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "etc/cron.d/.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// hasJob says whether the inventory lists the job as one that runs (a
// line held off is listed, but as held, not running).
func hasJob(t *testing.T, root, name string) bool {
	t.Helper()
	jobs, _ := timers.Inventory(root, timers.InventoryOptions{})
	for _, j := range jobs {
		if j.Name == name {
			return !strings.HasPrefix(j.Reason, "held off by memdiag confirm")
		}
	}
	return false
}

// writeDeadState writes a state file as a run killed with SIGKILL leaves
// it: owned by a PID that no longer runs.
func writeDeadState(t *testing.T, path string, cs ...Change) {
	t.Helper()
	b, _ := json.Marshal(stateDoc{Version: 1, PID: 1 << 30, Start: 1, Began: t0, Changes: cs})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRestoreAfterKill(t *testing.T) {
	ctx := context.Background()
	t.Run("held", func(t *testing.T) {
		root, file := cronRoot(t)
		env := Env{Root: root}
		c, _ := Prepare(ctx, checkJob(), env, t0)
		if err := Apply(ctx, c, env); err != nil {
			t.Fatal(err)
		}
		state := filepath.Join(root, "confirm.state")
		writeDeadState(t, state, c)
		if _, err := OpenState(state, env, t0); !errors.Is(err, ErrPending) || !strings.Contains(err.Error(), "--restore") {
			t.Fatalf("OpenState over a dead run's state: %v", err)
		}
		undone, err := Restore(ctx, state, env)
		if err != nil || len(undone) != 1 {
			t.Fatalf("restore: %v %v", undone, err)
		}
		if b, _ := os.ReadFile(file); string(b) != pcpCron {
			t.Errorf("not restored:\n%s", b)
		}
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state left: %v", err)
		}
		// Nothing more to do the second time.
		if undone, err := Restore(ctx, state, env); err != nil || undone != nil {
			t.Errorf("second restore: %v %v", undone, err)
		}
	})
	t.Run("recorded but never made", func(t *testing.T) {
		root, file := cronRoot(t)
		env := Env{Root: root}
		c, _ := Prepare(ctx, checkJob(), env, t0)
		state := filepath.Join(root, "confirm.state")
		writeDeadState(t, state, c)
		if _, err := Restore(ctx, state, env); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(file); string(b) != pcpCron {
			t.Errorf("changed:\n%s", b)
		}
	})
	t.Run("edited meanwhile", func(t *testing.T) {
		root, file := cronRoot(t)
		env := Env{Root: root}
		c, _ := Prepare(ctx, checkJob(), env, t0)
		if err := Apply(ctx, c, env); err != nil {
			t.Fatal(err)
		}
		// Someone added a line above the held one: it moved to line 9.
		b, _ := os.ReadFile(file)
		if err := os.WriteFile(file, append([]byte("MAILTO=ops\n"), b...), 0o640); err != nil {
			t.Fatal(err)
		}
		state := filepath.Join(root, "confirm.state")
		writeDeadState(t, state, c)
		if _, err := Restore(ctx, state, env); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(file); string(b) != "MAILTO=ops\n"+pcpCron {
			t.Errorf("restored:\n%s", b)
		}
	})
	t.Run("line gone", func(t *testing.T) {
		root, file := cronRoot(t)
		env := Env{Root: root}
		c, _ := Prepare(ctx, checkJob(), env, t0)
		if err := os.WriteFile(file, []byte("# emptied\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		state := filepath.Join(root, "confirm.state")
		writeDeadState(t, state, c)
		_, err := Restore(ctx, state, env)
		if err == nil || !strings.Contains(err.Error(), "put this line back by hand: "+c.Original) {
			t.Fatalf("err %v", err)
		}
		if _, serr := os.Stat(state); serr != nil {
			t.Errorf("state must stay when a change could not be undone: %v", serr)
		}
	})
}

func TestStateRefusesLiveOwner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "confirm.state")
	// PID 1 runs, with its own start time: a live owner.
	start, ok := supervise.StartOf(1)
	if !ok {
		t.Skip("no /proc/1/stat")
	}
	b, _ := json.Marshal(stateDoc{Version: 1, PID: 1, Start: start, Began: t0})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenState(path, Env{}, t0); err == nil || !strings.Contains(err.Error(), "another memdiag confirm (pid 1) is running") {
		t.Errorf("OpenState: %v", err)
	}
	if _, err := Restore(context.Background(), path, Env{}); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("Restore: %v", err)
	}
	if err := os.WriteFile(path, []byte("{\"version\":2}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(context.Background(), path, Env{}); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Restore of a v2 file: %v", err)
	}
}

func TestPrepareCronRejects(t *testing.T) {
	root, _ := cronRoot(t)
	env := Env{Root: root}
	for _, tc := range []struct {
		line int
		want string
	}{
		{7, "not a job line"},
		{20, "has 8 lines"},
	} {
		j := checkJob()
		j.Line = tc.line
		if _, err := Prepare(context.Background(), j, env, t0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("line %d: %v, want %q", tc.line, err, tc.want)
		}
	}
	var ch *CannotHoldError
	if _, err := Prepare(context.Background(), timers.Job{Name: "anacron:cron.daily", Source: timers.Anacron}, env, t0); !errors.As(err, &ch) {
		t.Errorf("anacron: %v", err)
	}
	if err := ProcessCulprit("pmlogger (pid 812)"); !errors.As(err, &ch) || !strings.Contains(err.Error(), "kill -STOP") {
		t.Errorf("process: %v", err)
	}
}

// fakeUnits is systemd's manager as far as holding a timer or putting a
// drop-in in place goes. Reload reads root's
// etc/systemd/system/UNIT.d/*.conf for the units it knows, which
// DropInPaths lists (as live paths) until the next Reload.
type fakeUnits struct {
	active  map[string]bool
	calls   *[]string
	root    string
	dropIns map[string][]string
}

func (f fakeUnits) ReloadContext(context.Context) error {
	*f.calls = append(*f.calls, "reload")
	for name := range f.active {
		got, _ := filepath.Glob(filepath.Join(f.root, "etc/systemd/system", name+".d", "*.conf"))
		for i, p := range got {
			got[i] = "/" + strings.TrimPrefix(p, f.root+"/")
		}
		f.dropIns[name] = got
	}
	return nil
}

func (f fakeUnits) GetUnitPropertyContext(_ context.Context, unit, name string) (*sddbus.Property, error) {
	if name != "DropInPaths" {
		return nil, fmt.Errorf("fake: no property %s", name)
	}
	return &sddbus.Property{Name: name, Value: dbus.MakeVariant(f.dropIns[unit])}, nil
}

func (f fakeUnits) GetServicePropertyContext(_ context.Context, _, name string) (*sddbus.Property, error) {
	return nil, fmt.Errorf("fake: no service property %s", name)
}

func (f fakeUnits) ListUnitsByNamesContext(_ context.Context, units []string) ([]sddbus.UnitStatus, error) {
	a, ok := f.active[units[0]]
	if !ok {
		return []sddbus.UnitStatus{{Name: units[0], LoadState: "not-found", ActiveState: "inactive"}}, nil
	}
	s := "inactive"
	if a {
		s = "active"
	}
	return []sddbus.UnitStatus{{Name: units[0], LoadState: "loaded", ActiveState: s}}, nil
}

func (f fakeUnits) StopUnitContext(_ context.Context, name, mode string, ch chan<- string) (int, error) {
	*f.calls = append(*f.calls, "stop "+name+" "+mode)
	f.active[name] = false
	ch <- "done"
	return 1, nil
}

func (f fakeUnits) StartUnitContext(_ context.Context, name, mode string, ch chan<- string) (int, error) {
	*f.calls = append(*f.calls, "start "+name+" "+mode)
	f.active[name] = true
	ch <- "done"
	return 2, nil
}

func (fakeUnits) Close() {}

func TestSystemdHold(t *testing.T) {
	ctx := context.Background()
	var calls []string
	fu := fakeUnits{active: map[string]bool{"pmlogger_check.timer": true, "idle.timer": false}, calls: &calls}
	env := Env{Units: func(context.Context) (UnitControl, error) { return fu, nil }}
	dir := t.TempDir()
	st, err := OpenState(filepath.Join(dir, "s"), env, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pmlogger_check.timer", "idle.timer"} {
		// A system timer whose service runs as another user (pcp's
		// pmlogger_check.service has User=pcp) is held like any other.
		c, err := Prepare(ctx, timers.Job{Name: name, Source: timers.Systemd, User: "pcp", File: "usr/lib/systemd/system/" + name}, env, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Hold(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if fu.active["pmlogger_check.timer"] {
		t.Error("timer still active while held")
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"stop pmlogger_check.timer replace", "start pmlogger_check.timer replace"}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !fu.active["pmlogger_check.timer"] || fu.active["idle.timer"] {
		t.Errorf("after close: %v (the inactive timer must stay inactive)", fu.active)
	}
	if _, err := Prepare(ctx, timers.Job{Name: "gone.timer", Source: timers.Systemd}, env, t0); err == nil || !strings.Contains(err.Error(), "no such unit") {
		t.Errorf("missing unit: %v", err)
	}
	var ch *CannotHoldError
	if _, err := Prepare(ctx, timers.Job{Name: "backup.timer", Source: timers.Systemd, User: "alice", File: "home/alice/.config/systemd/user/backup.timer"}, env, t0); !errors.As(err, &ch) || !strings.Contains(err.Error(), "systemctl --user stop backup.timer as alice") {
		t.Errorf("user timer: %v", err)
	}
	if _, err := Prepare(ctx, timers.Job{Name: "x.timer", Source: timers.Systemd}, Env{}, t0); !errors.Is(err, ErrNoSystemd) {
		t.Errorf("no systemd: %v", err)
	}
}
