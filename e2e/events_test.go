package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// lastRec is the path of the recording recordWhile last made, by test
// name: parallel tests (the events tests, the growth test) record at
// once.
var lastRec sync.Map

// lastRecording is the file of the test's last recordWhile.
func lastRecording(t *testing.T) string {
	p, _ := lastRec.Load(t.Name())
	s, _ := p.(string)
	return s
}

// recordWhile runs memdiag watch with args, starts job once the recorder
// is sampling, waits for it, lets the recorder finish and returns the
// recording.
func recordWhile(t *testing.T, memdiag string, dur time.Duration, args []string, job func()) *record.Recording {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	lastRec.Store(t.Name(), rec)
	ctx, cancel := context.WithTimeout(context.Background(), dur+time.Minute)
	defer cancel()
	w := exec.CommandContext(ctx, memdiag, append([]string{"watch", "--interval", "1s", "--duration", dur.String(),
		"--out", rec, "--quiet", "--no-timers"}, args...)...)
	var log strings.Builder
	w.Stdout, w.Stderr = &log, &log
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	job()
	if err := w.Wait(); err != nil {
		t.Fatalf("watch: %v\n%s", err, log.String())
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("watch output:\n%s", log.String())
	return r
}

// TestEventsShortChildren checks process events: a job starts 20
// children that each live ~100 ms and write 8 MiB, inside a cgroup named
// after a .service, during a 1 s-interval watch. With process events the
// recording lists all 20 execs and exits with the unit, and their exit I/O
// sums to 160 MiB within 5 %; polling alone (--events off) misses most.
func TestEventsShortChildren(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector, taskstats and cgroups")
	// Its own cgroups (or guest) and assertions on them only: beside
	// the other such tests (testenv.Shared), never beside one that reads the host.
	t.Parallel()
	testenv.Shared(t)
	memdiag, hog := testenv.BuildMemdiag(t), testenv.BuildHog(t)
	const unit = "memdiag-e2e-children.service"
	cg := testenv.NewCgroup(t, unit, 0)
	dir := t.TempDir()
	const n, size = 20, 8 << 20
	job := func() {
		// One shell in the unit's cgroup starts the children one after the
		// other, as a check script would.
		script := fmt.Sprintf(`for i in $(seq %d); do %s -write %d -file %s/c$i -hold 50ms >/dev/null; done`, n, hog, size, dir)
		if out, err := cg.Command("/bin/sh", "-c", script).CombinedOutput(); err != nil {
			t.Fatalf("job: %v %s", err, out)
		}
	}
	count := func(r *record.Recording) (execs, exits int, exitBytes uint64, unitOK bool) {
		unitOK = true
		for _, s := range r.Samples {
			for _, e := range s.Events {
				// Other tests may run hogs at the same time: ours are
				// the ones writing into this test's directory.
				if e.Comm != "hog" || !strings.Contains(e.Cmdline, dir) {
					continue
				}
				if e.Unit != unit {
					unitOK = false
				}
				switch e.Kind {
				case "exec":
					execs++
				case "exit":
					exits++
					exitBytes += e.WriteBytes
				}
			}
		}
		return
	}

	withEvents := recordWhile(t, memdiag, 8*time.Second, []string{"--events", "on"}, job)
	execs, exits, bytes, unitOK := count(withEvents)
	if execs != n || exits != n {
		t.Errorf("with events: %d execs and %d exits of hog, want %d each", execs, exits, n)
	}
	if !unitOK {
		t.Errorf("with events: some hog events lack unit %s", unit)
	}
	if d := float64(bytes) - n*size; d > 0.05*n*size || d < -0.05*n*size {
		t.Errorf("with events: exit write_bytes sum %d, want %d ± 5%%", bytes, n*size)
	}
	for _, s := range withEvents.Samples {
		if s.EventStats != nil && (s.EventStats.LostKernel > 0 || s.EventStats.LostBuffer > 0) {
			t.Errorf("events lost at %s: %+v", s.Time, s.EventStats)
		}
	}

	polled := recordWhile(t, memdiag, 8*time.Second, []string{"--events", "off"}, job)
	pExecs, pExits, _, _ := count(polled)
	t.Logf("polling alone saw %d execs and %d exits of %d children", pExecs, pExits, n)
	if pExecs > n/2 {
		t.Errorf("polling saw %d of %d short children; expected it to miss most", pExecs, n)
	}
	_ = os.RemoveAll(dir)
}

// TestStallOnsetSnapshot checks stall onsets: a memory stall provoked
// in a cgroup is recorded with an onset whose time falls within the
// stall, and the onset's snapshot names the process that caused it.
func TestStallOnsetSnapshot(t *testing.T) {
	testenv.RequireRoot(t, "cgroups and PSI")
	memdiag, hog := testenv.BuildMemdiag(t), testenv.BuildHog(t)
	cg := testenv.NewCgroup(t, "memdiag-e2e-stall.service", 32<<20)
	if cg.V2Dir == "" {
		testenv.Unmet(t, "no cgroup v2 directory for per-cgroup memory.pressure")
	}
	data := filepath.Join(t.TempDir(), "f")
	var start, end time.Time
	var pid int
	r := recordWhile(t, memdiag, 8*time.Second,
		[]string{"--cgroup", cg.V2Dir, "--stall-threshold", "10ms", "--stall-window", "1s"}, func() {
			// Writing then re-reading 96 MiB six times through a 32 MiB
			// group: a burst of reclaim and refaults. One pass with a
			// 50 ms threshold stalled the group for only 29 ms in all
			// once in CI (builds beside it); six passes and 10 ms, as
			// psi's TestOnsetWatcherInStall, leave room.
			c := cg.Command(hog, "-write", fmt.Sprint(96<<20), "-file", data, "-read-passes", "6", "-hold", "300ms")
			start = time.Now()
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("hog: %v %s", err, out)
			}
			end = time.Now()
			pid = c.Process.Pid
		})
	t.Logf("hog pid %d ran %s..%s (%s)", pid, start.Format("15:04:05.000"), end.Format("15:04:05.000"), end.Sub(start))
	var found bool
	for _, s := range r.Samples {
		for _, o := range s.Onsets {
			t.Logf("onset %s scope %s mode %s procs %d", o.Time.Format("15:04:05.000"), o.Scope, o.Mode, len(o.Procs))
			if o.Scope != cg.V2Dir {
				continue
			}
			// An onset at T says the window (T − Window, T] held the
			// threshold's stall: it can come up to one window after the
			// hog ended (the poller re-arms and the window still covers
			// the stall's tail), never before the hog started.
			if o.Time.Before(start) || !o.Time.Before(end.Add(o.Window)) {
				t.Errorf("cgroup onset at %s, outside the stall %s..%s and its %s window", o.Time, start, end, o.Window)
				continue
			}
			for _, p := range o.Procs {
				if p.PID == pid && p.Comm == "hog" {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("no cgroup onset inside the stall whose snapshot names hog (pid %d)", pid)
	}
}

// TestEventsGrandchildrenNotChargedToLoop is the chain a new user ran: a
// long-lived loop starts a script every second that runs a child writing
// 16 MiB. When the script is reaped, the kernel adds its child's I/O to
// the loop's /proc/PID/io too; taskstats reports each task's own I/O
// only. The loop, which writes nothing itself, must not show up as a
// heavy writer in any sample.
func TestEventsGrandchildrenNotChargedToLoop(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector, taskstats and cgroups")
	// Its own cgroups (or guest) and assertions on them only: beside
	// the other such tests (testenv.Shared), never beside one that reads the host.
	t.Parallel()
	testenv.Shared(t)
	memdiag, hog := testenv.BuildMemdiag(t), testenv.BuildHog(t)
	cg := testenv.NewCgroup(t, "memdiag-e2e-grandchildren.service", 0)
	dir := t.TempDir()
	const n, size = 5, 16 << 20
	var loopPID int
	r := recordWhile(t, memdiag, 10*time.Second, []string{"--events", "on"}, func() {
		loop := fmt.Sprintf(`for i in $(seq %d); do sh -c '%s -write %d -file %s/g'$i' >/dev/null; true'; sleep 1; done`, n, hog, size, dir)
		c := cg.Command("/bin/sh", "-c", loop)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		loopPID = c.Process.Pid
		if err := c.Wait(); err != nil {
			t.Fatalf("loop: %v", err)
		}
	})
	var hogBytes, loopBytes uint64
	for _, s := range r.Samples {
		for _, p := range s.Procs {
			switch {
			case p.PID == loopPID:
				loopBytes += p.DeltaWriteBytes
				t.Logf("sample %s: loop Δw %d", s.Time.Format("15:04:05.000"), p.DeltaWriteBytes)
			case p.Comm == "hog" && strings.Contains(p.Cmdline, dir):
				hogBytes += p.DeltaWriteBytes
			}
		}
	}
	t.Logf("loop %d charged with %d bytes written over the recording; hogs seen alive %d bytes", loopPID, loopBytes, hogBytes)
	// Before descendants' reaps were credited the loop carried all n×size;
	// then one reap could still land on it when the exit's taskstats
	// message came after the scan that read the loop's jump. The loop is
	// a single-threaded sh: the scanner now reads its own counters
	// (/proc/PID/task/PID/io), so what it reaped never enters its delta,
	// whatever the timing.
	if loopBytes >= 1<<20 {
		t.Errorf("the loop (PID %d) was charged with %d bytes its grandchildren wrote (%d × %d)", loopPID, loopBytes, n, size)
	}
	_ = os.RemoveAll(dir)
}
