package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// confirmCrontab is the /etc/cron.d file of the confirm tests: a culprit
// that pauses the probed service for 400 ms (SIGSTOP, then SIGCONT) and a
// decoy that does nothing heavy.
const confirmCrontab = "/etc/cron.d/memdiag-e2e-confirm"

// cronStandIn stands in for crond, which does not run on these hosts: every
// period it reads the crontab as cron reads it — lines starting with '#'
// are comments — and runs each job line's command with sh -c, as root.
// It fires on its own clock (period) instead of cron's minute, so a block of
// seconds sees firings; what it honours is exactly what memdiag changes
// (the line commented out or not). It returns a stop function that waits
// for the running commands.
func cronStandIn(t *testing.T, path string, period time.Duration) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				if len(f) < 7 || strings.HasPrefix(l, "#") {
					continue
				}
				// "m h dom mon dow user command…"
				command := strings.Join(f[6:], " ")
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = exec.Command("sh", "-c", command).Run()
				}()
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// realtime is exec.Command(name, args...) run at SCHED_FIFO priority 10
// (chrt, util-linux): it gets a core as soon as it is runnable, ahead of
// every normal task, so a latency it measures or serves is its own, not
// the wait for a CPU on a busy host. chrt execs name: the PID is name's.
//
// Not any more: in R20 (2026-12-07) memdiag confirm and the service
// spun at SCHED_FIFO for 8 minutes (confirm 93 % CPU with five threads
// runnable, the service 79 %), load 34, and every other test of the
// suite starved (two verdict scenarios failed on it). A real-time task
// that spins takes the host; why confirm spun is not known yet. Both run
// at normal priority until it is.
func realtime(name string, args ...string) *exec.Cmd {
	return exec.Command(name, args...)
}

type confirmJSON struct {
	Job        string `json:"job"`
	HeldOff    string `json:"held_off"`
	Fix        string `json:"fix"`
	FixOutcome string `json:"fix_outcome"`
	Result     struct {
		Metric  string  `json:"metric"`
		Verdict string  `json:"verdict"`
		MeanA   float64 `json:"mean_a"`
		MeanB   float64 `json:"mean_b"`
		Effect  float64 `json:"effect"`
		CILow   float64 `json:"ci_low"`
		CIHigh  float64 `json:"ci_high"`
		P       float64 `json:"p"`
	} `json:"result"`
	Blocks []struct {
		Arm          string `json:"arm"`
		Requests     int    `json:"requests"`
		P99NS        int64  `json:"p99_ns"`
		SettledNS    int64  `json:"settled_ns"`
		StillRunning []int  `json:"still_running"`
	} `json:"blocks"`
}

// TestConfirmCronLine runs `memdiag confirm` on a real /etc/cron.d line:
// the culprit is confirmed, the decoy refuted, and a run killed with
// SIGKILL in a B block is put back by --restore (SIGTERM: by itself).
// crond does not run here; cronStandIn fires the lines (see there).
func TestConfirmCronLine(t *testing.T) {
	testenv.RequireRoot(t, "a line in /etc/cron.d")
	// Beside other shared tests (the verdict lanes' hogs, the systemd
	// guest): what they cost this test is CPU time, which the probed
	// service and confirm's probe must not wait for, or B's p99 is the
	// queue for a core (one exclusive run failed so at load 14–16 with B
	// p99 296 ms). Both run SCHED_FIFO (realtime below); memory and
	// disk are not shared: the service's 12 MiB are outside every other
	// test's limit and its data file stays in the page cache.
	t.Parallel()
	testenv.Shared(t)
	memdiag := testenv.BuildMemdiag(t)
	dir := t.TempDir()
	svc := realtime(testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/websvc", "websvc"),
		"-data", filepath.Join(dir, "data"), "-data-size", fmt.Sprint(8<<20), "-anon", fmt.Sprint(4<<20))
	url := startWebsvc(t, svc)
	svcPID := svc.Process.Pid
	crontab := "# memdiag e2e: confirm\n" +
		fmt.Sprintf("* * * * * root kill -STOP %d; sleep 0.4; kill -CONT %d\n", svcPID, svcPID) +
		"* * * * * root /bin/true\n"
	if err := os.WriteFile(confirmCrontab, []byte(crontab), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(confirmCrontab) })
	// Every 1.5 s: each 4 s A block holds two or three pauses, so its
	// p99 (for about 80 requests the largest) is a paused request
	// whatever the phase of the firings against the block.
	stop := cronStandIn(t, confirmCrontab, 1500*time.Millisecond)
	defer stop()
	state := filepath.Join(dir, "confirm.state")
	// run runs confirm on job, 5 pairs of 4 s blocks unless more flags
	// (given after those, so they win) say otherwise. B is calm although
	// the hold stops the next firing, not the one running: before a B
	// block confirm waits for the line's running `sh -c` to end (with 6 s
	// blocks and no such wait, a pause in progress spilled into B once:
	// mean B p99 160 ms).
	run := func(t *testing.T, job string, more ...string) confirmJSON {
		t.Helper()
		args := append([]string{"confirm", "--job", job, "--pairs", "5", "--block", "4s", "--probe", url, "--probe-interval", "50ms",
			"--yes", "--state", state, "-f", "json"}, more...)
		cmd := realtime(memdiag, append(args, "--", "sleep", "60")...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("memdiag confirm: %v\n%s", err, errOut.String())
		}
		var r confirmJSON
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if b, _ := os.ReadFile(confirmCrontab); string(b) != crontab {
			t.Errorf("crontab after the run:\n%s", b)
		}
		if _, err := os.Stat(state); !os.IsNotExist(err) {
			t.Errorf("state file left: %v", err)
		}
		waited := 0
		for _, b := range r.Blocks {
			if b.SettledNS > 0 {
				waited++
			}
			if len(b.StillRunning) > 0 {
				t.Errorf("block %+v began with the job still running", b)
			}
		}
		t.Logf("%d B blocks waited for a running instance", waited)
		t.Logf("%s%s: %s, A p99 %.0f ms, B p99 %.0f ms, effect %.0f ms [%.0f, %.0f], p %.3g", job, strings.TrimRight(" "+strings.Join(more, " "), " "), r.Result.Verdict,
			1000*r.Result.MeanA, 1000*r.Result.MeanB, 1000*r.Result.Effect, 1000*r.Result.CILow, 1000*r.Result.CIHigh, r.Result.P)
		return r
	}

	t.Run("culprit confirmed", func(t *testing.T) {
		r := run(t, "cron.d/memdiag-e2e-confirm:2")
		if r.Result.Metric != "p99_latency_seconds" || r.Result.Verdict != "confirmed" || len(r.Blocks) != 10 {
			t.Fatalf("result %+v", r.Result)
		}
		// Each 4 s A block holds two or three 400 ms pauses: its p99 is
		// a paused request; no B block has one.
		if r.Result.MeanA < 0.2 || r.Result.MeanB > 0.15 {
			t.Errorf("mean p99 A %.3f s, B %.3f s: want A ≥ 0.2 s (a pause) and B < 0.15 s", r.Result.MeanA, r.Result.MeanB)
		}
	})
	t.Run("decoy refuted", func(t *testing.T) {
		r := run(t, "cron.d/memdiag-e2e-confirm:3")
		if r.Result.Verdict != "refuted" {
			t.Fatalf("result %+v", r.Result)
		}
	})
	// --with: the culprit's line replaced, in B blocks, by a fix. One that
	// pauses the service without the sleep removes the effect; one that
	// only lowers the pause's CPU priority (nice) does not: the service
	// still stops for 400 ms, so B's p99 stays a pause, which shows the
	// replacement, not a hold, ran in B.
	writeFix := func(t *testing.T, line string) string {
		t.Helper()
		f := filepath.Join(t.TempDir(), "fix.cron")
		if err := os.WriteFile(f, []byte("# memdiag e2e: the proposed fix\n"+line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("fix removes the effect", func(t *testing.T) {
		fix := writeFix(t, fmt.Sprintf("* * * * * root kill -STOP %d; kill -CONT %d", svcPID, svcPID))
		r := run(t, "cron.d/memdiag-e2e-confirm:2", "--with", fix)
		if r.Result.Verdict != "confirmed" || r.FixOutcome != "the fix removed the effect" || r.Fix != fix || len(r.Blocks) != 10 {
			t.Fatalf("result %+v, fix %q: %q", r.Result, r.Fix, r.FixOutcome)
		}
		if r.Result.MeanA < 0.2 || r.Result.MeanB > 0.15 {
			t.Errorf("mean p99 A %.3f s, B %.3f s: want A ≥ 0.2 s (a pause) and B < 0.15 s", r.Result.MeanA, r.Result.MeanB)
		}
	})
	t.Run("fix that does not", func(t *testing.T) {
		fix := writeFix(t, fmt.Sprintf("* * * * * root nice -n19 sh -c 'kill -STOP %d; sleep 0.4; kill -CONT %d'", svcPID, svcPID))
		// B is not calm here: 2 pairs of 3 s blocks show its pauses.
		r := run(t, "cron.d/memdiag-e2e-confirm:2", "--with", fix, "--pairs", "2", "--block", "3s")
		// Refuted, or inconclusive when the pauses' phases differ: never
		// "removed".
		if r.Result.Verdict == "confirmed" || (r.FixOutcome != "the fix did not remove the effect" && r.FixOutcome != "inconclusive: cannot say whether the fix removed the effect") {
			t.Fatalf("result %+v: %q", r.Result, r.FixOutcome)
		}
		// The fix ran in B: its pauses are there.
		if r.Result.MeanB < 0.2 {
			t.Errorf("mean p99 B %.3f s: want ≥ 0.2 s, the replacement line's pauses", r.Result.MeanB)
		}
	})
	t.Run("killed with SIGKILL with the fix in place", func(t *testing.T) {
		fix := writeFix(t, "* * * * * root /bin/true memdiag-e2e-fix")
		cmd := exec.Command(memdiag, "confirm", "--job", "cron.d/memdiag-e2e-confirm:2", "--with", fix, "--pairs", "2", "--block", "5s",
			"--yes", "--state", state, "--", "sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if b, _ := os.ReadFile(confirmCrontab); bytes.Contains(b, []byte("memdiag-e2e-fix")) {
				break
			}
			if time.Now().After(deadline) {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				_ = cmd.Wait()
				t.Fatalf("the fix was never put in place\n%s", errOut.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if b, _ := os.ReadFile(confirmCrontab); !bytes.Contains(b, []byte("memdiag-e2e-fix")) {
			t.Fatal("the fix is gone already; the test did not kill inside a B block")
		}
		out, err := exec.Command(memdiag, "confirm", "--restore", "--state", state).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Restored cron.d/memdiag-e2e-confirm:2 (the fix "+fix+" in place since") {
			t.Fatalf("restore: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(confirmCrontab); string(b) != crontab {
			t.Errorf("after --restore:\n%s", b)
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run("killed with "+sig.String()+" in a B block", func(t *testing.T) {
			cmd := exec.Command(memdiag, "confirm", "--job", "cron.d/memdiag-e2e-confirm:2", "--pairs", "2", "--block", "5s",
				"--yes", "--state", state, "--", "sleep", "60")
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			// Its own process group, so that SIGKILL can take memdiag and
			// the load together (as a service manager's kill of the whole
			// group does), leaving no orphaned load behind.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				b, _ := os.ReadFile(confirmCrontab)
				if bytes.Contains(b, []byte("#memdiag-confirm-hold: * * * * * root kill -STOP")) {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the line was never held off\n%s", errOut.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			if sig == syscall.SIGKILL {
				_ = syscall.Kill(-cmd.Process.Pid, sig)
			} else {
				_ = cmd.Process.Signal(sig)
			}
			err := cmd.Wait()
			held, _ := os.ReadFile(confirmCrontab)
			if sig == syscall.SIGTERM {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 130 {
					t.Errorf("exit after SIGTERM: %v, want 130\n%s", err, errOut.String())
				}
				if string(held) != crontab {
					t.Errorf("SIGTERM: crontab not put back:\n%s", held)
				}
				return
			}
			if string(held) == crontab {
				t.Fatal("SIGKILL: the line is back already; the test did not kill inside a B block")
			}
			if _, err := os.Stat(state); err != nil {
				t.Fatalf("SIGKILL: no state file: %v", err)
			}
			out, err := exec.Command(memdiag, "confirm", "--restore", "--state", state).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Restored cron.d/memdiag-e2e-confirm:2") {
				t.Fatalf("restore: %v\n%s", err, out)
			}
			if b, _ := os.ReadFile(confirmCrontab); string(b) != crontab {
				t.Errorf("after --restore:\n%s", b)
			}
		})
	}
}
