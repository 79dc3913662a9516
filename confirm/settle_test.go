package confirm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"

	"github.com/memdiag/memdiag/internal/testutil"
	"github.com/memdiag/memdiag/process"
)

func TestCronShellCommand(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/lib/sa/sa1 1 1":             "/usr/lib/sa/sa1 1 1",
		`date +\%F > /tmp/x`:              "date +%F > /tmp/x",
		"mail -s hi root%line one%line 2": "mail -s hi root",
		`a \% b % c`:                      "a % b ",
		"%":                               "",
	} {
		if got := CronShellCommand(in); got != want {
			t.Errorf("CronShellCommand(%q) = %q, want %q", in, got, want)
		}
	}
}

// A real `sh -c CMD`, as cron starts a line, is found by its command;
// a shell running another command is not.
func TestCronInstancesFindsShell(t *testing.T) {
	cmd := "sleep 30; true # memdiag settle test " + t.Name()
	sh := exec.Command("/bin/sh", "-c", cmd)
	other := exec.Command("/bin/sh", "-c", "sleep 30; true # another")
	// Each shell in a process group of its own, ended whole: the shell's
	// fork for sleep goes with it.
	kill := func(c *exec.Cmd) { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() }
	for _, c := range []*exec.Cmd{sh, other} {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kill(c) })
	}
	pids, err := cronInstances(context.Background(), "/proc", cmd)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids, []int{sh.Process.Pid}) {
		t.Errorf("instances %v, want [%d] (the other shell is %d)", pids, sh.Process.Pid, other.Process.Pid)
	}
	kill(sh)
	// The killed group's last member may take a moment to be gone.
	pids, err = instancesUntil(cmd, func(pids []int) bool { return len(pids) == 0 })
	if err != nil || len(pids) != 0 {
		t.Errorf("after it ended: %v, %v; want none", pids, err)
	}
}

// instancesUntil looks for cmd's cron instances in /proc every 20 ms
// until done(pids) holds, an error, or 2 min (a hang bound, not a
// timing: the processes a test starts or kills share its CPU priority,
// and at SCHED_IDLE on a busy host, as CI's fresh clone as nobody runs,
// a fork, exec or exit can wait seconds for the CPU), and returns the
// last look.
func instancesUntil(cmd string, done func(pids []int) bool) ([]int, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pids, err := cronInstances(context.Background(), "/proc", cmd)
		if err != nil || done(pids) || time.Now().After(deadline) {
			return pids, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Settle waits for what runs to end, then for settleQuiet of nothing:
// two looks find the job, the third none, and it returns once nothing
// has run for settleQuiet, saying how long the job kept it waiting. In
// a synctest bubble, whose clock moves only when every goroutine waits:
// on the real clock a look starved of CPU for more than settleQuiet (CI's
// fresh clone as nobody, at SCHED_IDLE) ends the quiet in fewer looks.
func TestSettleWaitsUntilNothingRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		running := func(context.Context) ([]int, error) {
			calls++
			if calls <= 2 {
				return []int{42}, nil
			}
			return nil, nil
		}
		start := time.Now()
		waited, left, err := Settle(context.Background(), running, time.Minute)
		took := time.Since(start)
		if err != nil || left != nil {
			t.Fatalf("left %v, err %v", left, err)
		}
		// Looks at 0, 100 (the job), 200 (none: the quiet begins), 300,
		// 400 and 500 ms (250 ms of quiet).
		if waited != 2*settlePoll || took != 5*settlePoll || calls != 6 {
			t.Errorf("waited %s, took %s, %d looks; want %s, %s, 6", waited, took, calls, 2*settlePoll, 5*settlePoll)
		}
	})
}

// Nothing running: no wait reported, but the quiet is looked at.
func TestSettleNothingRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		waited, left, err := Settle(context.Background(), func(context.Context) ([]int, error) { calls++; return nil, nil }, time.Minute)
		// Looks at 0 (the quiet begins), 100, 200 and 300 ms.
		if waited != 0 || left != nil || err != nil || calls != 4 {
			t.Errorf("waited %s, left %v, err %v after %d looks; want 0, none, nil after 4", waited, left, err, calls)
		}
	})
}

// Something runs throughout: Settle gives up at the first look past its
// bound and says what still runs.
func TestSettleGivesUpAtItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		waited, left, err := Settle(context.Background(), func(context.Context) ([]int, error) { return []int{7}, nil }, 250*time.Millisecond)
		if err != nil || !slices.Equal(left, []int{7}) || waited != 3*settlePoll {
			t.Errorf("waited %s, left %v, err %v; want %s (the look past 250ms) and [7] left", waited, left, err, 3*settlePoll)
		}
	})
}

func TestSettleCancelled(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	boom := errors.New("interrupted")
	cancel(boom)
	_, _, err := Settle(ctx, func(context.Context) ([]int, error) { return []int{7}, nil }, time.Minute)
	if !errors.Is(err, boom) {
		t.Errorf("err %v, want %v", err, boom)
	}
}

func TestSettleMax(t *testing.T) {
	for block, want := range map[time.Duration]time.Duration{
		0: time.Minute, 3 * time.Second: 30 * time.Second, time.Minute: 2 * time.Minute, time.Hour: 10 * time.Minute,
	} {
		if got := SettleMax(block); got != want {
			t.Errorf("SettleMax(%s) = %s, want %s", block, got, want)
		}
	}
}

// B blocks wait with the hold in place, and the A block that the hold's
// end begins waits with it lifted (a restarted timer's job runs at once);
// the first A block, before any hold, does not wait. What still ran at
// the bound is kept on the block and said in the report.
func TestExperimentSettlesAroundHolds(t *testing.T) {
	e, file, _ := newExperiment(t, 2)
	var looks []bool // the hold in place at each look, in order
	var asked []int
	e.RunBlock = func(_ context.Context, b Block) (Measurement, error) {
		return Measurement{Block: b, Wall: time.Second}, nil
	}
	e.Running = func(context.Context) ([]int, error) {
		looks = append(looks, heldNow(t, file))
		return []int{99}, nil
	}
	e.SettleMax = 150 * time.Millisecond
	e.Waiting = func(b Block, _ []int, _ time.Duration) { asked = append(asked, b.Index) }
	done, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.State.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []int{1, 2, 3}) {
		t.Errorf("waited before blocks %v, want [1 2 3] (the B blocks of AB BA, and the A after them)", asked)
	}
	// Blocks 2 and 3 (B) look with the hold in place, then block 4 (A)
	// without: the hold stays between the two B blocks.
	if first := slices.Index(looks, false); first <= 0 || slices.Contains(looks[first:], true) {
		t.Errorf("the hold in place at each look: %v; want it held for the B blocks', lifted for the last A's", looks)
	}
	for _, m := range done {
		if (m.Index > 0) != (len(m.StillRunning) == 1 && m.Settled >= 150*time.Millisecond) {
			t.Errorf("block %d (%s): settled %s, still running %v", m.Index+1, m.Arm, m.Settled, m.StillRunning)
		}
	}
	note := settleNote(Report{Blocks: done})
	for _, want := range []string{"Before B blocks 2, 3 memdiag waited for the job's instance started before the hold", "B blocks 2, 3 began with it still running",
		"Before A block 4 memdiag waited for the job's run started when the hold ended", "A block 4 began with it still running (the wait's bound passed): part of that run counts as A's there."} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
}

// A job's command exec'd by the shell in its place (dash and bash exec a
// simple command) is found as a child of a process named cron: here a
// copy of the shell named "cron" that starts `sleep 30` as its child.
func TestCronInstancesFindsExecdCommand(t *testing.T) {
	cron := filepath.Join(t.TempDir(), "cron")
	b, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(cron, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := "sleep 31"
	parent := exec.Command(cron, "-c", cmd+"; true")
	parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // ended whole, its sleep with it
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-parent.Process.Pid, syscall.SIGKILL); _ = parent.Wait() })
	// The same words not under cron: not an instance.
	stray := exec.Command("sleep", "31")
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stray.Process.Kill(); _ = stray.Wait() })
	// The child may not have exec'd sleep yet.
	pids, err := instancesUntil(cmd, func(pids []int) bool { return len(pids) > 0 })
	if err != nil || len(pids) != 1 || pids[0] == stray.Process.Pid {
		t.Fatalf("instances %v, %v; want the one child of %d (not %d)", pids, err, parent.Process.Pid, stray.Process.Pid)
	}
	st, err := process.ReadStat(context.Background(), "/proc", pids[0])
	if err != nil || st.PPID != parent.Process.Pid {
		t.Errorf("instance %d: parent %d, %v; want %d", pids[0], st.PPID, err, parent.Process.Pid)
	}
}

// statesUnits answers ListUnitsByNames with fixed states, and a
// service's MainPID (its ControlPID when main is 0).
type statesUnits struct {
	fakeUnits
	active, sub string
	main        uint32
}

func (s statesUnits) ListUnitsByNamesContext(_ context.Context, units []string) ([]sddbus.UnitStatus, error) {
	return []sddbus.UnitStatus{{Name: units[0], LoadState: "loaded", ActiveState: s.active, SubState: s.sub}}, nil
}

func (s statesUnits) GetServicePropertyContext(_ context.Context, _, name string) (*sddbus.Property, error) {
	switch name {
	case "MainPID":
		return &sddbus.Property{Name: name, Value: dbus.MakeVariant(s.main)}, nil
	case "ControlPID":
		return &sddbus.Property{Name: name, Value: dbus.MakeVariant(uint32(4322))}, nil
	}
	return nil, fmt.Errorf("fake: no service property %s", name)
}

func TestServiceRunning(t *testing.T) {
	for _, tc := range []struct {
		active, sub string
		main        uint32
		want        []int
	}{
		{"activating", "start", 0, []int{4322}}, // a oneshot while it runs: its control process
		{"active", "running", 4321, []int{4321}},
		{"activating", "start-post", 0, []int{4322}}, // main exited, ExecStartPost= running
		{"deactivating", "stop-sigterm", 4321, []int{4321}},
		{"active", "exited", 0, nil}, // RemainAfterExit=yes, done
		{"inactive", "dead", 0, nil},
		{"failed", "failed", 0, nil},
	} {
		env := Env{Units: func(context.Context) (UnitControl, error) {
			return statesUnits{active: tc.active, sub: tc.sub, main: tc.main}, nil
		}}
		got, err := serviceRunning(context.Background(), env, "pmlogger_check.service")
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s/%s: %v, %v; want %v", tc.active, tc.sub, got, err, tc.want)
		}
	}
}

// The shell's own fork for the first command of the line, caught before
// its exec, carries the shell's argv too: it is part of the instance its
// parent is, not a second one (CI at 92b3657 saw [4684 4685]). Fake /proc:
// 100 the shell under cron's 50, 101 its fork, 200 an unrelated shell.
func TestCronInstancesSkipsShellsFork(t *testing.T) {
	proc := t.TempDir()
	cmd := "sleep 30; true"
	put := func(pid, ppid int, comm string, argv ...string) {
		testutil.WriteProc(t, proc, pid, ppid, 100, comm, map[string]string{"comm": comm + "\n", "cmdline": strings.Join(argv, "\x00") + "\x00"})
	}
	put(50, 1, "cron", "/usr/sbin/cron", "-f")
	put(100, 50, "sh", "/bin/sh", "-c", cmd)
	put(101, 100, "sh", "/bin/sh", "-c", cmd)
	put(200, 1, "sh", "/bin/sh", "-c", "sleep 30; true # another")
	pids, err := cronInstances(context.Background(), proc, cmd)
	if err != nil || !slices.Equal(pids, []int{100}) {
		t.Errorf("instances %v, %v; want [100]", pids, err)
	}
}
