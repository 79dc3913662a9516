package procevents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/process"
)

// TestListenerShortChildren runs children that each live well under a
// second and write a known number of bytes, and checks that every exec and
// exit is received with the child's own write_bytes from taskstats.
func TestListenerShortChildren(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector and taskstats (CAP_NET_ADMIN)")
	l, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.Start(ctx)
	defer func() { cancel(); l.Close(); l.Wait() }()
	time.Sleep(100 * time.Millisecond)

	dir := t.TempDir()
	const n, size = 5, 4 << 20
	var pids []int
	for i := 0; i < n; i++ {
		c := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(dir, fmt.Sprint(i)), "bs=1M", fmt.Sprintf("count=%d", size>>20), "conv=fsync", "status=none")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("dd: %v %s", err, out)
		}
		pids = append(pids, c.Process.Pid)
	}
	time.Sleep(300 * time.Millisecond)
	evs, st := l.Drain()
	if st.LostKernel != 0 || st.LostBuffer != 0 {
		t.Errorf("lost events: %+v", st)
	}
	for _, pid := range pids {
		var exec, exit bool
		for _, e := range evs {
			if e.PID != pid {
				continue
			}
			switch e.Kind {
			case "exec":
				exec = true
				if e.Comm != "dd" {
					t.Errorf("pid %d exec comm %q, want dd", pid, e.Comm)
				}
			case "exit":
				exit = true
				if e.Source != "taskstats" || e.Comm != "dd" {
					t.Errorf("pid %d exit = %+v, want taskstats record of dd", pid, e)
				}
				// dd's own 4 MiB, and up to 64 KiB more: write_bytes counts
				// pages as they are dirtied, and a page dirtied again while
				// background writeback (another process's) is writing it
				// counts twice. Measured from /proc/PID/io of dd's zombie
				// (no listener involved), 40 runs beside a 4 GB writer:
				// +8 KiB once, +12 KiB once; quiet: +0 in 40 of 40.
				if e.WriteBytes < size || e.WriteBytes > size+64<<10 {
					t.Errorf("pid %d wrote %d bytes per taskstats, want %d (+ at most 64 KiB)", pid, e.WriteBytes, size)
				}
			}
		}
		if !exec || !exit {
			t.Errorf("pid %d: exec seen %v, exit seen %v", pid, exec, exit)
		}
	}
	_ = os.RemoveAll(dir)
}

// forkStorm runs n short processes (/bin/true) from one shell and returns
// the shell's PID.
// stormProgram is a copy of /bin/true under a name of this test run's
// own, so that the count is of the storm's processes alone: on a shared
// host other tests and builds run /bin/true too (the count was 3001 and
// 3004 of 3000 while an e2e test ran beside it).
func stormProgram(t *testing.T) (path, comm string) {
	t.Helper()
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	comm = fmt.Sprintf("mdstorm%d", os.Getpid()%1000000) // within TASK_COMM_LEN
	path = filepath.Join(t.TempDir(), comm)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, comm
}

// forkStorm runs prog n times, one after another, from one shell (its
// loop and test are dash builtins: the shell's only children are prog's
// processes), and returns the shell's PID.
func forkStorm(t *testing.T, prog string, n int) int {
	t.Helper()
	c := exec.Command("/bin/sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done", n, prog))
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("storm: %v %s", err, out)
	}
	return c.Process.Pid
}

// countExecsOf counts the exec events of the children of the given
// parents, named or not: an exec read after its process ended carries no
// comm when no taskstats record names it (the listener does not guess),
// and is an exec seen all the same.
func countExecsOf(evs []process.Event, parents ...int) int {
	n := 0
	for _, e := range evs {
		if e.Kind == process.Exec && slices.Contains(parents, e.PPID) {
			n++
		}
	}
	return n
}

// countComm counts the exec and exit events of processes named comm.
func countComm(evs []process.Event, comm string) (execs, exits int) {
	for _, e := range evs {
		if e.Comm != comm {
			continue
		}
		switch e.Kind {
		case process.Exec:
			execs++
		case process.Exit:
			exits++
		}
	}
	return
}

// reusedPIDs counts the PIDs whose exits in evs include one named comm
// and one named otherwise: the storm's processes that shared their PID
// with another process exiting while the listener read (before or after
// them), the case in which an exec could be named after the wrong one.
func reusedPIDs(evs []process.Event, comm string) int {
	ours, others := map[int]bool{}, map[int]bool{}
	for _, e := range evs {
		if e.Kind != process.Exit {
			continue
		}
		if e.Comm == comm {
			ours[e.PID] = true
		} else {
			others[e.PID] = true
		}
	}
	n := 0
	for pid := range ours {
		if others[pid] {
			n++
		}
	}
	return n
}

// logMisnamed logs every event of a PID whose exit carries comm but whose
// exec does not, or the reverse: the evidence when the storm's count is off.
func logMisnamed(t *testing.T, evs []process.Event, comm string) {
	t.Helper()
	type seen struct{ exec, exit bool }
	by := map[int]*seen{}
	for _, e := range evs {
		if e.Comm != comm || (e.Kind != process.Exec && e.Kind != process.Exit) {
			continue
		}
		s := by[e.PID]
		if s == nil {
			s = &seen{}
			by[e.PID] = s
		}
		s.exec = s.exec || e.Kind == process.Exec
		s.exit = s.exit || e.Kind == process.Exit
	}
	for pid, s := range by {
		if s.exec && s.exit {
			continue
		}
		for _, e := range evs {
			if e.PID == pid {
				t.Logf("pid %d: %s %s source %s comm %q ppid %d exe %q cgroup %q", pid, e.Time.Format("15:04:05.000000"), e.Kind, e.Source, e.Comm, e.PPID, e.Exe, e.Cgroup)
			}
		}
	}
}

// TestForkStormAccounting: thousands of short processes are either all
// recorded, or the loss is reported: every missing exec is covered by the
// kernel-drop count taken from the connector's sequence numbers.
func TestForkStormAccounting(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector and taskstats")
	const n = 3000
	prog, comm := stormProgram(t)
	t.Run("reading", func(t *testing.T) {
		l, err := Open(Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		l.Start(ctx)
		defer func() { cancel(); l.Close(); l.Wait() }()
		forkStorm(t, prog, n)
		time.Sleep(1500 * time.Millisecond)
		evs, st := l.Drain()
		execs, exits := countComm(evs, comm)
		t.Logf("execs %d exits %d stats %+v; %d of the storm's PIDs were also another exiting process's",
			execs, exits, st, reusedPIDs(evs, comm))
		lost := st.LostKernel + st.LostBuffer
		if uint64(n-execs) > lost {
			t.Errorf("%d of %d execs missing but only %d events reported lost", n-execs, n, lost)
		}
		if lost == 0 && (execs != n || exits != n) {
			t.Errorf("no loss reported, but execs %d exits %d, want %d each", execs, exits, n)
			logMisnamed(t, evs, comm)
		}
	})
	t.Run("stalled-reader", func(t *testing.T) {
		// Open but do not read until the storm is over, with a small
		// buffer: the kernel must drop events, and the drop is counted.
		l, err := Open(Options{ReadBuffer: 64 << 10, NoTaskstats: true})
		if err != nil {
			t.Fatal(err)
		}
		first := forkStorm(t, prog, n)
		ctx, cancel := context.WithCancel(context.Background())
		l.Start(ctx)
		defer func() { cancel(); l.Close(); l.Wait() }()
		second := forkStorm(t, prog, 10) // events after the gap reveal it in the sequence numbers
		time.Sleep(500 * time.Millisecond)
		evs, st := l.Drain()
		// By parent, not by comm: without taskstats, the execs read after
		// the storm was over have no comm to read.
		execs := countExecsOf(evs, first, second)
		named, _ := countComm(evs, comm)
		t.Logf("execs %d of %d (%d of them named) stats %+v", execs, n+10, named, st)
		if st.LostKernel == 0 {
			t.Fatalf("a 64 KiB buffer left unread during %d processes lost nothing? stats %+v", n, st)
		}
		// What the sequence gaps count is a lower bound once a socket
		// overflowed (Overruns): a CPU none of whose events was read
		// before the overflow has no earlier number to measure its gap
		// from (CI, 2026-12-07: 2,534 counted for ~2,950 execs missing).
		// Without an overrun said, every missing exec must be counted.
		if missing := uint64(n + 10 - execs); missing > st.LostKernel+st.LostBuffer && st.Overruns == 0 {
			t.Errorf("%d execs missing, only %d reported lost and no overrun", missing, st.LostKernel)
		}
	})
}

// startShell starts `/bin/sh -c script` with a pipe to its stdin, killed
// and reaped at the end of the test.
func startShell(t *testing.T, script string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	sh := exec.Command("/bin/sh", "-c", script)
	in, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	return sh, in
}

// TestListenerExecLineage checks that every exec carries what ties a
// process to the job that ran it: the parent PID (also for a process
// forked before the listener started, whose fork was never seen), the
// program (/proc/PID/exe) and the command line with an interpreter's
// script.
func TestListenerExecLineage(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector (CAP_NET_ADMIN)")
	py, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		testenv.Unmet(t, "/usr/bin/python3 missing: apt-get install python3-minimal")
	}
	sleep, err := filepath.EvalSymlinks("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "job.py")
	if err := os.WriteFile(script, []byte("pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runner := filepath.Join(dir, "runner.sh")
	if err := os.WriteFile(runner, []byte("#!/bin/sh\n/usr/bin/python3 "+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	// Forked before the listener: it waits on stdin, then execs sleep.
	early, in := startShell(t, "read x; exec /bin/sleep 0.1")

	l, err := Open(Options{Cmdline: func(argv []string) string { return strings.Join(argv, " ") }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.Start(ctx)
	defer func() { cancel(); l.Close(); l.Wait() }()
	time.Sleep(100 * time.Millisecond)

	in.Write([]byte("go\n"))
	if err := early.Wait(); err != nil {
		t.Fatalf("early process: %v", err)
	}
	sh := exec.Command("/bin/sh", runner)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("runner: %v %s", err, out)
	}
	time.Sleep(300 * time.Millisecond)
	evs, _ := l.Drain()

	var gotEarly, gotPy bool
	for _, e := range evs {
		if e.Kind != "exec" {
			continue
		}
		switch {
		case e.PID == early.Process.Pid && e.Comm == "sleep":
			gotEarly = true
			if e.PPID != os.Getpid() || e.Exe != sleep {
				t.Errorf("exec of a process forked before the listener: ppid %d exe %q, want %d and %q", e.PPID, e.Exe, os.Getpid(), sleep)
			}
		case e.Comm == "python3" && strings.Contains(e.Cmdline, script):
			gotPy = true
			if e.PPID != sh.Process.Pid || e.Exe != py || e.Cmdline != "/usr/bin/python3 "+script {
				t.Errorf("python3 exec = ppid %d exe %q cmdline %q; want ppid %d (runner.sh), exe %q, cmdline naming %s",
					e.PPID, e.Exe, e.Cmdline, sh.Process.Pid, py, script)
			}
		}
	}
	if !gotEarly || !gotPy {
		t.Errorf("exec events: early sleep seen %v, python3 seen %v; events %+v", gotEarly, gotPy, evs)
	}
}

// TestListenerDescribesParent checks that the exec of a child whose
// parent was running before the listener started (a loop's shell)
// carries the parent's comm, command line and parent PID, once per
// parent: the only record of the loop's identity.
func TestListenerDescribesParent(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector (CAP_NET_ADMIN)")
	// The shell waits on a second line before it exits, so its /proc
	// entry is there whenever the listener gets to its children's execs
	// (the listener reads the parent's identity then; under load that can
	// be well after the exec).
	loop, in := startShell(t, "read x; /bin/true; /bin/true; read y; exit 0")
	// Start returns once the shell's exec has closed its close-on-exec
	// fds, which is before the kernel sends the exec event: without a
	// pause the listener can still see the shell's own exec, and then
	// rightly does not describe it at its children's.
	time.Sleep(200 * time.Millisecond)

	l, err := Open(Options{Cmdline: func(argv []string) string { return strings.Join(argv, " ") }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.Start(ctx)
	defer func() { cancel(); l.Close(); l.Wait() }()
	time.Sleep(100 * time.Millisecond)
	in.Write([]byte("go\n"))
	var kids []process.Event
	var lost uint64
	for deadline := time.Now().Add(10 * time.Second); len(kids) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		evs, st := l.Drain()
		lost += st.LostKernel + st.LostBuffer + st.Overruns
		for _, e := range evs {
			if e.Kind == process.Exec && e.PPID == loop.Process.Pid {
				kids = append(kids, e)
			}
		}
	}
	in.Write([]byte("done\n"))
	if err := loop.Wait(); err != nil {
		t.Fatalf("loop: %v", err)
	}
	if len(kids) != 2 {
		t.Fatalf("%d execs with ppid %d, want 2 (/bin/true twice); %d events lost: %+v", len(kids), loop.Process.Pid, lost, kids)
	}
	first, second := kids[0], kids[1]
	if first.ParentComm != "sh" || first.ParentCmdline != "/bin/sh -c read x; /bin/true; /bin/true; read y; exit 0" || first.ParentPPID != os.Getpid() {
		t.Errorf("first child's parent: comm %q cmdline %q ppid %d; want sh, its command line, %d",
			first.ParentComm, first.ParentCmdline, first.ParentPPID, os.Getpid())
	}
	if second.ParentComm != "" || second.ParentCmdline != "" || second.ParentPPID != 0 {
		t.Errorf("second child's exec describes its parent again: %+v; want once per parent", second)
	}
}

// TestExecAfterItsExit: the connector's exec event and the taskstats
// exit come on two sockets read by two goroutines, and a child as short
// as /bin/true can have its exit read first, when /proc/PID is already
// gone. Its exec then keeps what its fork recorded — parent, cgroup —
// and the parent from taskstats' ac_ppid. (Before, the exit took the
// fork's record and the exec went out with PPID 0 and no cgroup:
// TestListenerDescribesParent missed a child about once in 80 runs under
// load, with nothing lost.)
func TestExecAfterItsExit(t *testing.T) {
	root := t.TempDir()
	const parent, child = 4100, 4123
	for pid, comm := range map[int]string{parent: "sh", child: "sh"} {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"comm": comm + "\n", "cgroup": "0::/system.slice/cron.service\n", "stat": statLine(pid, comm, 1, 100)} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	l := newListener(Options{ProcRoot: root, MaxEvents: 16, Now: func() time.Time { return now }})
	l.tsOn = true
	l.tracked[parent] = &procInfo{comm: "sh", ppid: 1, hasExec: true}
	l.handleConnector(procEvent{What: whatFork, PID: child, TGID: child, ParentPID: parent, ParentTGID: parent}, now)
	// The child execs /bin/true and exits before either event is read;
	// the taskstats reader gets there first.
	if err := os.RemoveAll(filepath.Join(root, fmt.Sprint(child))); err != nil {
		t.Fatal(err)
	}
	l.handleExit(taskExit{PID: child, TGID: child, PPID: parent, Comm: "true"}, now.Add(2*time.Millisecond))
	l.handleConnector(procEvent{What: whatExec, PID: child, TGID: child}, now.Add(time.Millisecond))
	l.handleConnector(procEvent{What: whatExit, PID: child, TGID: child, ParentPID: parent, ParentTGID: parent}, now.Add(2*time.Millisecond))
	evs, st := l.Drain()
	if len(evs) != 2 || st.LostBuffer != 0 {
		t.Fatalf("events %+v, stats %+v; want the exec and the exit", evs, st)
	}
	ex, exit := evs[0], evs[1]
	if ex.Kind != process.Exec || ex.PID != child || ex.PPID != parent || ex.Comm != "true" || ex.Cgroup != "/system.slice/cron.service" || ex.Unit != "cron.service" {
		t.Errorf("exec %+v; want pid %d, ppid %d, comm true, cgroup /system.slice/cron.service, unit cron.service", ex, child, parent)
	}
	if exit.Kind != process.Exit || exit.PID != child || exit.PPID != parent || exit.Unit != "cron.service" {
		t.Errorf("exit %+v", exit)
	}
}

// TestPIDReuseAttribution replays one PID's two lives as the listener's
// two readers can see them: a long-running sleep (A) exits, and a storm
// child (B) is then forked at the same PID, execs mdstorm and exits. The
// connector's events (A's exit, B's fork, exec and exit) and the
// taskstats records (A's, B's) are each in order, but the two streams
// interleave in any way; every interleaving is tried, with B alive when
// its exec is read or already gone. Whatever the order, B's exec must
// carry B's comm or none, never A's, and neither exit the other's
// program. (Before, a taskstats exit of A still held when B's exec was
// read named B "sleep": 9 of 20 storms failed beside a loop of sleeps.)
func TestPIDReuseAttribution(t *testing.T) {
	const pid, shell = 4242, 4100
	const storm = "mdstorm123"
	cn := []string{"exitA", "forkB", "execB", "exitB"}
	ts := []string{"tsA", "tsB"}
	for _, order := range interleavings(cn, ts) {
		for _, alive := range []bool{true, false} {
			if alive && slices.Index(order, "tsB") < slices.Index(order, "execB") {
				continue // B's exit cannot have been read while it lives
			}
			name := strings.Join(order, ",")
			if alive {
				name += "/alive"
			} else {
				name += "/gone"
			}
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				dir := filepath.Join(root, fmt.Sprint(pid))
				if alive {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					for f, v := range map[string]string{"comm": storm + "\n", "cgroup": "0::/\n", "cmdline": "/tmp/t/" + storm + "\x00", "stat": statLine(pid, storm, shell, 100)} {
						if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					if err := os.Symlink("/tmp/t/"+storm, filepath.Join(dir, "exe")); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
				now := start
				l := newListener(Options{ProcRoot: root, MaxEvents: 64, Now: func() time.Time { return now }})
				l.tsOn = true
				// A ran before the listener started (the snapshot's record).
				l.tracked[pid] = &procInfo{comm: "sleep", exe: "/usr/bin/sleep", ppid: 1}
				l.tracked[shell] = &procInfo{comm: "sh", exe: "/usr/bin/dash", ppid: 1, hasExec: true}
				for i, step := range order {
					now = start.Add(time.Duration(i+1) * 10 * time.Millisecond)
					if alive && (step == "exitB" || step == "tsB") {
						if err := os.RemoveAll(dir); err != nil {
							t.Fatal(err)
						}
					}
					switch step {
					case "exitA":
						l.handleConnector(procEvent{What: whatExit, PID: pid, TGID: pid, ParentPID: 1, ParentTGID: 1}, start.Add(-time.Second))
					case "forkB":
						l.handleConnector(procEvent{What: whatFork, PID: pid, TGID: pid, ParentPID: shell, ParentTGID: shell}, start.Add(time.Millisecond))
					case "execB":
						l.handleConnector(procEvent{What: whatExec, PID: pid, TGID: pid}, start.Add(2*time.Millisecond))
					case "exitB":
						l.handleConnector(procEvent{What: whatExit, PID: pid, TGID: pid, ParentPID: shell, ParentTGID: shell}, start.Add(3*time.Millisecond))
					case "tsA":
						l.handleExit(taskExit{PID: pid, TGID: pid, PPID: 1, Comm: "sleep", Elapsed: 30*time.Second + now.Sub(start)}, now)
					case "tsB":
						l.handleExit(taskExit{PID: pid, TGID: pid, PPID: shell, Comm: storm, Elapsed: 2 * time.Millisecond}, now)
					}
				}
				evs, st := l.Drain()
				var execs, exits []process.Event
				for _, e := range evs {
					switch e.Kind {
					case process.Exec:
						execs = append(execs, e)
					case process.Exit:
						exits = append(exits, e)
					}
				}
				if len(execs) != 1 || len(exits) != 2 || st.TaskstatsMissing != 0 {
					t.Fatalf("%d execs, %d exits, stats %+v; want 1 and 2, none missing: %+v", len(execs), len(exits), st, evs)
				}
				if ex := execs[0]; ex.Comm != storm || ex.PPID != shell {
					t.Errorf("B's exec: comm %q ppid %d, want %q and %d", ex.Comm, ex.PPID, storm, shell)
				}
				if alive && execs[0].Exe != "/tmp/t/"+storm {
					t.Errorf("B's exec: exe %q, want /tmp/t/%s (it was alive when read)", execs[0].Exe, storm)
				}
				for _, x := range exits {
					switch x.Comm {
					case "sleep":
						if x.Exe != "/usr/bin/sleep" || x.PPID != 1 {
							t.Errorf("A's exit: %+v; want exe /usr/bin/sleep, ppid 1", x)
						}
					case storm:
						if x.Exe != "" && x.Exe != "/tmp/t/"+storm || x.PPID != shell {
							t.Errorf("B's exit: %+v; want exe /tmp/t/%s or none, ppid %d", x, storm, shell)
						}
					default:
						t.Errorf("an exit named %q: %+v", x.Comm, x)
					}
				}
			})
		}
	}
}

// interleavings returns every merge of a and b that keeps each in order.
func interleavings(a, b []string) [][]string {
	if len(a) == 0 || len(b) == 0 {
		return [][]string{append(slices.Clone(a), b...)}
	}
	var out [][]string
	for _, rest := range interleavings(a[1:], b) {
		out = append(out, append([]string{a[0]}, rest...))
	}
	for _, rest := range interleavings(a, b[1:]) {
		out = append(out, append([]string{b[0]}, rest...))
	}
	return out
}

// statLine is a /proc/PID/stat line of pid (comm, parent ppid, start time
// in clock ticks after boot), in the shape of Debian bookworm's kernel
// 6.18 /proc/self/stat (every other field as cat's there).
func statLine(pid int, comm string, ppid int, startTicks uint64) string {
	return fmt.Sprintf("%d (%s) S %d %d 8870 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 %d 3133440 387 18446744073709551615 "+
		"94767578497024 94767578516905 140729370923920 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 94767578532912 94767578534528 "+
		"94767981862912 140729370925763 140729370925783 140729370925783 140729370927083 0\n", pid, comm, ppid, ppid, startTicks)
}

// fakeProc makes <root>/<pid> a process running prog (comm, exe,
// cmdline, cgroup), replacing what was there.
func fakeProc(t *testing.T, root string, pid int, prog string, startTicks uint64) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	comm := filepath.Base(prog)
	for f, v := range map[string]string{"comm": comm + "\n", "cgroup": "0::/\n", "cmdline": prog + "\x00", "stat": statLine(pid, comm, 1, startTicks)} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(prog, filepath.Join(dir, "exe")); err != nil {
		t.Fatal(err)
	}
}

// TestLostExitAttribution: when one reader's record of an exit is lost
// (counted, as LostKernel or Overruns), order alone no longer pairs the
// two readers' exits of a PID, and the next process at that PID must
// still not be named after the last: the times the records carry say
// which process each is of.
func TestLostExitAttribution(t *testing.T) {
	const pid = 4242
	const sleep, storm = "/usr/bin/sleep", "/tmp/t/mdstorm123"
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type step struct {
		when time.Duration
		do   string // forkA, execA, exitA, tsA, forkB, execB, exitB, tsB
	}
	for _, c := range []struct {
		name  string
		steps []step
		// want: A's exit's exe, how it was read, and TaskstatsMissing
		aExe, aSource string
		missing       uint64
	}{
		{"connector exit lost, taskstats read before the next fork",
			[]step{{0, "forkA"}, {time.Millisecond, "execA"}, {30 * time.Second, "tsA"},
				{31 * time.Second, "forkB"}, {31*time.Second + time.Millisecond, "execB"}, {31*time.Second + 10*time.Millisecond, "tsB"}, {31*time.Second + 11*time.Millisecond, "exitB"}},
			sleep, "taskstats", 0},
		{"connector exit lost, taskstats read after the next exec",
			[]step{{0, "forkA"}, {time.Millisecond, "execA"},
				{31 * time.Second, "forkB"}, {31*time.Second + time.Millisecond, "execB"}, {31*time.Second + 500*time.Millisecond, "tsA"},
				{31*time.Second + 510*time.Millisecond, "tsB"}, {31*time.Second + 511*time.Millisecond, "exitB"}},
			"", "taskstats", 0},
		{"taskstats record lost",
			[]step{{0, "forkA"}, {time.Millisecond, "execA"}, {30 * time.Second, "exitA"},
				{32 * time.Second, "forkB"}, {32*time.Second + time.Millisecond, "execB"}, {33 * time.Second, "exitB"}, {33*time.Second + 10*time.Millisecond, "tsB"}},
			sleep, "connector", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			now := t0
			l := newListener(Options{ProcRoot: root, MaxEvents: 64, Now: func() time.Time { return now }})
			l.tsOn = true
			fakeProc(t, root, pid, sleep, 100)
			var forkB time.Time
			for _, s := range c.steps {
				if s.do == "forkB" {
					forkB = at(s.when)
				}
			}
			for _, s := range c.steps {
				now = at(s.when)
				switch s.do {
				case "forkA", "forkB":
					if s.do == "forkB" {
						fakeProc(t, root, pid, storm, 200)
					}
					l.handleConnector(procEvent{What: whatFork, PID: pid, TGID: pid, ParentPID: 1, ParentTGID: 1}, now)
				case "execA", "execB":
					l.handleConnector(procEvent{What: whatExec, PID: pid, TGID: pid}, now)
				case "exitA", "exitB":
					l.handleConnector(procEvent{What: whatExit, PID: pid, TGID: pid, ParentPID: 1, ParentTGID: 1}, now)
				case "tsA":
					l.handleExit(taskExit{PID: pid, TGID: pid, PPID: 1, Comm: "sleep", Elapsed: 30 * time.Second, BeginTime: t0}, now)
				case "tsB":
					l.handleExit(taskExit{PID: pid, TGID: pid, PPID: 1, Comm: "mdstorm123", Elapsed: now.Sub(forkB), BeginTime: forkB.Truncate(time.Second)}, now)
				}
			}
			evs, st := l.Drain()
			got := map[string]process.Event{}
			for _, e := range evs {
				got[string(e.Kind)+" "+e.Comm] = e
			}
			if len(evs) != 4 || st.TaskstatsMissing != c.missing {
				t.Fatalf("events %+v, stats %+v; want A's and B's exec and exit, %d taskstats missing", evs, st, c.missing)
			}
			if e, ok := got["exec mdstorm123"]; !ok || e.Exe != storm {
				t.Errorf("B's exec: %+v; want comm mdstorm123, exe %s", e, storm)
			}
			if e, ok := got["exit mdstorm123"]; !ok || e.Exe != storm || e.Source != "taskstats" {
				t.Errorf("B's exit: %+v; want taskstats record of mdstorm123, exe %s", e, storm)
			}
			if e, ok := got["exec sleep"]; !ok || e.Exe != sleep {
				t.Errorf("A's exec: %+v; want comm sleep, exe %s", e, sleep)
			}
			if e, ok := got["exit sleep"]; !ok || e.Exe != c.aExe || e.Source != c.aSource {
				t.Errorf("A's exit: %+v; want %s record of sleep, exe %q", e, c.aSource, c.aExe)
			}
		})
	}
}

// TestReadInfoReusedPID: the listener reads /proc/PID after the event,
// under load long after; by then the PID may be another process's. What
// it reads is kept only if the process there had started by the event
// (/proc/PID/stat's start time), else the event's process is unknown.
func TestReadInfoReusedPID(t *testing.T) {
	const pid = 4242
	var mono, boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		t.Fatal(err)
	}
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		t.Fatal(err)
	}
	event := uint64(mono.Nano()) // an exec stamped now
	nowTicks := uint64(boot.Nano()) / uint64(10*time.Millisecond)
	for _, c := range []struct {
		name       string
		startTicks uint64
		bornBy     uint64
		wantComm   string
	}{
		{"started a minute before the event", nowTicks - 6000, event, "mdstorm123"},
		{"started a minute after the event: a later process", nowTicks + 6000, event, ""},
		{"no event to check against (a process running at Open)", nowTicks + 6000, 0, "mdstorm123"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			fakeProc(t, root, pid, "/tmp/t/mdstorm123", c.startTicks)
			l := newListener(Options{ProcRoot: root, Cmdline: func(argv []string) string { return strings.Join(argv, " ") }})
			pi, ppid := l.readInfo(pid, 0, true, c.bornBy)
			want := &procInfo{}
			wantPPID := 0
			if c.wantComm != "" {
				want = &procInfo{comm: c.wantComm, exe: "/tmp/t/mdstorm123", cmdline: "/tmp/t/mdstorm123", cgroup: "/"}
				wantPPID = 1
			}
			if *pi != *want || ppid != wantPPID {
				t.Errorf("readInfo = %+v, ppid %d; want %+v, ppid %d", *pi, ppid, *want, wantPPID)
			}
		})
	}
}

// replayGenl is a genlReceiver answering Receive from a list of
// datagrams, then with an error.
type replayGenl struct {
	gms [][]genetlink.Message
	nms [][]netlink.Message
}

func (r *replayGenl) Receive() ([]genetlink.Message, []netlink.Message, error) {
	if len(r.nms) == 0 {
		return nil, nil, errors.New("read past the replay")
	}
	g, n := r.gms[0], r.nms[0]
	r.gms, r.nms = r.gms[1:], r.nms[1:]
	return g, n, nil
}

// TestRegistrationAfterExitRecords: the kernel sends exit records from
// the moment the taskstats CPU mask is registered, so on a busy host one
// can come before the acknowledgement. Open must still succeed (it
// failed with "mismatched sequence in netlink reply" once in 20 storms
// beside a loop of exiting sleeps), and the early exit is kept.
func TestRegistrationAfterExitRecords(t *testing.T) {
	const seq = 41
	exit := genetlink.Message{Header: genetlink.Header{Command: unix.TASKSTATS_CMD_NEW, Version: 1}, Data: readNetlink(t, "taskstats-exit")}
	r := &replayGenl{
		gms: [][]genetlink.Message{{exit}, {{}}},
		nms: [][]netlink.Message{
			{{Header: netlink.Header{Type: 0x17, Sequence: 812}}}, // the kernel's own numbering
			{{Header: netlink.Header{Type: netlink.Error, Sequence: seq}}},
		},
	}
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	l := newListener(Options{ProcRoot: t.TempDir(), Now: func() time.Time { return now }})
	if err := l.awaitRegistration(r, seq); err != nil {
		t.Fatalf("awaitRegistration: %v", err)
	}
	if len(r.nms) != 0 {
		t.Errorf("%d datagrams left unread", len(r.nms))
	}
	evs, _ := l.Drain()
	if len(evs) != 1 || evs[0].Kind != process.Exit || evs[0].PID != 3387 || evs[0].Comm != "true" || evs[0].ReadBytes != 8192 {
		t.Errorf("events %+v; want the exit of 3387 (true, 8192 bytes read) read before the acknowledgement", evs)
	}
}

// portID returns the netlink port id (nl_pid) a socket was bound to.
func portID(t *testing.T, c interface {
	SyscallConn() (syscall.RawConn, error)
}) uint32 {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var port uint32
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var sa unix.Sockaddr
		if sa, serr = unix.Getsockname(int(fd)); serr == nil {
			if nl, ok := sa.(*unix.SockaddrNetlink); ok {
				port = nl.Pid
			}
		}
	}); err != nil || serr != nil {
		t.Fatalf("getsockname: %v %v", err, serr)
	}
	return port
}

// TestCloseDeregistersTaskstats: taskstats sends exit records to a port
// id until a send to it fails, and a process's first generic netlink
// socket is given its PID as port id, again after the last one closed.
// A socket opened after Close, given the listener's port id, must
// receive none: before, Open's GetFamily on such a socket read an exit
// record as its reply and failed ("mismatched sequence in netlink
// reply"; once in 20 runs of this package beside a loop of exiting
// sleeps).
func TestCloseDeregistersTaskstats(t *testing.T) {
	testenv.RequireRoot(t, "taskstats exit registration (CAP_NET_ADMIN)")
	l, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	port := portID(t, l.ts)
	l.Close()
	c, err := genetlink.Dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := portID(t, c); got != port {
		t.Skipf("the next generic netlink socket got port id %d, not the listener's %d: nothing to check", got, port)
	}
	// An exit on each CPU: with the registration left behind, its record
	// is queued on c before the exit is reaped.
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Fatal(err)
	}
	for cpu := 0; cpu < len(cpus)*64; cpu++ {
		if !cpus.IsSet(cpu) {
			continue
		}
		cmd := exec.Command("taskset", "-c", fmt.Sprint(cpu), "/bin/true")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", cmd, err, out)
		}
	}
	if _, err := c.GetFamily(unix.TASKSTATS_GENL_NAME); err != nil {
		t.Errorf("a socket given the closed listener's port id %d: %v (an exit record came first?)", port, err)
	}
}

// TestThreadIOAttribution: a thread's I/O goes to its own process, never
// to another process at the same PID: not to the next process's exit
// when it was read before that process began (an earlier process's
// thread ending after its leader's exit was handed out), and not to an
// exit still held when the thread began after that exit.
func TestThreadIOAttribution(t *testing.T) {
	const pid, tid = 4343, 4344
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	leader := func(begin time.Time, write uint64) taskExit {
		return taskExit{PID: pid, TGID: pid, PPID: 1, Comm: "dd", WriteBytes: write, BeginTime: begin.Truncate(time.Second)}
	}
	thread := func(begin time.Time, write uint64) taskExit {
		return taskExit{PID: tid, TGID: pid, PPID: 1, Comm: "worker", WriteBytes: write, BeginTime: begin.Truncate(time.Second)}
	}
	exitWrites := func(t *testing.T, l *Listener) []uint64 {
		t.Helper()
		evs, _ := l.Drain()
		var w []uint64
		for _, e := range evs {
			if e.Kind == process.Exit && e.PID == pid {
				w = append(w, e.WriteBytes)
			}
		}
		return w
	}
	for _, c := range []struct {
		name string
		run  func(l *Listener, now *time.Time)
		want []uint64
	}{
		{"a thread that ended before its leader", func(l *Listener, now *time.Time) {
			*now = t0.Add(2 * time.Second)
			l.handleExit(thread(t0.Add(time.Second), 8192), *now)
			*now = t0.Add(3 * time.Second)
			l.handleExit(leader(t0, 4<<20), *now)
		}, []uint64{4<<20 + 8192}},
		{"an earlier process's thread, read before the next process began", func(l *Listener, now *time.Time) {
			*now = t0.Add(2 * time.Second)
			l.handleExit(thread(t0, 8192), *now) // its leader's exit was handed out before
			*now = t0.Add(6 * time.Second)
			l.handleExit(leader(t0.Add(4*time.Second+500*time.Millisecond), 4<<20), *now) // BeginTime t0+4 s: began after t0+3 s
		}, []uint64{4 << 20}},
		{"a thread ending after its held leader", func(l *Listener, now *time.Time) {
			*now = t0.Add(3 * time.Second)
			l.handleExit(leader(t0, 4<<20), *now)
			*now = t0.Add(3*time.Second + 10*time.Millisecond)
			l.handleExit(thread(t0.Add(time.Second), 8192), *now)
		}, []uint64{4<<20 + 8192}},
		{"a later process's thread while the exit is held", func(l *Listener, now *time.Time) {
			*now = t0.Add(3 * time.Second)
			l.handleExit(leader(t0, 4<<20), *now)
			*now = t0.Add(5*time.Second + 100*time.Millisecond)
			l.handleExit(thread(t0.Add(5*time.Second), 8192), *now)
		}, []uint64{4 << 20}},
		// CI, 2026-12-07: python3 began at about .95 of a second, its
		// threads ended 0.45 s later, and the kernel's BeginTime for the
		// leader said the next whole second (whole seconds of the clock
		// minus whole seconds of the age): the threads are still its.
		{"a leader whose BeginTime is after its true start", func(l *Listener, now *time.Time) {
			*now = t0.Add(1*time.Second + 400*time.Millisecond)
			l.handleExit(thread(t0.Add(950*time.Millisecond), 12<<20), *now)
			*now = t0.Add(2*time.Second + 10*time.Millisecond)
			l.handleExit(leader(t0.Add(2*time.Second), 4<<20), *now)
		}, []uint64{16 << 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			l := newListener(Options{ProcRoot: t.TempDir(), MaxEvents: 64, Now: func() time.Time { return now }})
			l.tsOn = true
			c.run(l, &now)
			if got := exitWrites(t, l); !slices.Equal(got, c.want) {
				t.Errorf("exit write bytes %v, want %v", got, c.want)
			}
		})
	}
}
