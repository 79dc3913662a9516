package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// runBinary runs the real memdiag binary and returns its exit code and
// output. It kills only the process it started, by PID, if it overruns.
func runBinary(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	t.Logf("memdiag %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// killGroupProcs ends the processes the test left in its cgroup (only the
// test's own workload can be there), by PID.
func killGroupProcs(t *testing.T, cg *testenv.Cgroup) {
	pids, _ := cg.Procs()
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

var gateThresholds = []string{"-t", "memory.some.stall<1%", "-t", "memory.full.stall<1%"}

// TestGateE2EPressureBreachesAndCalmPasses drives a 64 MiB cgroup into
// reclaim and swap with the hog and checks that the gate names the
// breached threshold (exit 3, JUnit failure), then runs a calm command in
// a fresh cgroup under the same thresholds and checks it passes. The
// cgroup scope is used because other tests on the machine move host PSI.
func TestGateE2EPressureBreachesAndCalmPasses(t *testing.T) {
	testenv.RequireRoot(t, "cgroups and a swap file")
	bin := testenv.BuildMemdiag(t)
	hog := testenv.BuildHog(t)
	testenv.SwapFile(t, "gate", 256<<20)

	t.Run("pressure", func(t *testing.T) {
		cg := testenv.NewCgroup(t, "memdiag-gate-test", 64<<20)
		if cg.V2Dir == "" {
			testenv.Unmet(t, "no cgroup v2 hierarchy for per-cgroup PSI")
		}
		t.Cleanup(func() { killGroupProcs(t, cg) })
		dir := t.TempDir()
		junit := filepath.Join(dir, "gate.xml")
		// 200 MiB of file I/O read back twice and 160 MiB of anonymous
		// memory in a 64 MiB group: the group reclaims page cache and swaps.
		work := cg.Command(hog, "-file", filepath.Join(dir, "memdiag-gate-hog.dat"),
			"-write", strconv.Itoa(200<<20), "-read-passes", "2", "-anon", strconv.Itoa(160<<20))
		args := append([]string{"gate", "--out", "off", "--cgroup", cg.V2Dir, "--junit", junit}, gateThresholds...)
		args = append(append(args, "--"), work.Args...)
		code, stdout, stderr := runBinary(t, bin, args...)
		if code != exitBreach {
			t.Fatalf("exit code %d; want %d (breach)", code, exitBreach)
		}
		if !strings.Contains(stderr, "threshold breached: memory.some.stall<1% (observed ") {
			t.Errorf("stderr does not name memory.some.stall<1%% as breached")
		}
		if !strings.Contains(stdout, "scope: cgroup "+cg.V2Dir) || !strings.Contains(stdout, "command: ") {
			t.Errorf("report lacks the scope or the command line")
		}
		row := ""
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, "memory.some.stall<1%") && strings.Contains(l, "│") { // a table row, not a note
				row = l
			}
		}
		if !strings.Contains(row, "FAIL") {
			t.Errorf("table row for memory.some.stall<1%% is %q; want FAIL", row)
		}
		x, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(x), `<failure message="memory.some.stall&lt;1% breached: observed `) {
			t.Errorf("JUnit file does not list memory.some.stall<1%% as failed:\n%s", x)
		}
		if cg.MemV1Dir != "" {
			if b, err := os.ReadFile(filepath.Join(cg.MemV1Dir, "memory.max_usage_in_bytes")); err == nil {
				t.Logf("v1 group peak usage: %s", strings.TrimSpace(string(b)))
			}
		}
	})

	t.Run("calm", func(t *testing.T) {
		cg := testenv.NewCgroup(t, "memdiag-gate-test-calm", 64<<20)
		if cg.V2Dir == "" {
			testenv.Unmet(t, "no cgroup v2 hierarchy for per-cgroup PSI")
		}
		t.Cleanup(func() { killGroupProcs(t, cg) })
		junit := filepath.Join(t.TempDir(), "gate.xml")
		args := append([]string{"gate", "--out", "off", "--cgroup", cg.V2Dir, "--junit", junit}, gateThresholds...)
		args = append(append(args, "--"), cg.Command("sleep", "3").Args...)
		code, stdout, _ := runBinary(t, bin, args...)
		if code != exitOK {
			t.Fatalf("exit code %d; want %d (pass)", code, exitOK)
		}
		if !strings.Contains(stdout, "PASS: all 2 thresholds held") {
			t.Errorf("report does not say PASS")
		}
		x, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(x), `tests="3" failures="0" errors="0"`) {
			t.Errorf("JUnit file is not all-pass:\n%s", x)
		}
	})
}

// TestGateE2ENoPSIIsAnEnvironmentError runs the binary on a fixture root
// whose /proc has no pressure directory: exit 5 with a message, never 0.
func TestGateE2ENoPSIIsAnEnvironmentError(t *testing.T) {
	t.Parallel() // its own binaries and files: beside the others
	bin := testenv.BuildMemdiag(t)
	root := fixtureRoot(t, map[string]string{"proc/vmstat": "pswpout 7\noom_kill 0\n"})
	code, stdout, stderr := runBinary(t, bin, append([]string{"--root", root, "gate", "--out", "off", "--duration", "5s"}, gateThresholds...)...)
	if code != exitEnv {
		t.Fatalf("exit code %d; want %d (environment)", code, exitEnv)
	}
	if !strings.Contains(stdout, "FAIL: 2 of 2 thresholds could not be judged (no data)") {
		t.Errorf("report does not say the thresholds could not be judged")
	}
	for _, want := range []string{
		`memory.some.stall<1%: no memory PSI (/proc/pressure/memory, "some" line)`,
		filepath.Join(root, "proc/pressure/memory") + ": unavailable: pressure stall information (kernel >= 4.20 with CONFIG_PSI=y)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// TestGateE2ECommandFailureIsNotABreach wraps a command that exits 3 —
// the breach code — and checks memdiag reports it as the command's failure
// (exit 4, its code printed), not as a breach.
func TestGateE2ECommandFailureIsNotABreach(t *testing.T) {
	t.Parallel() // its own binaries and files: beside the others
	if _, err := os.Stat("/proc/pressure/memory"); err != nil {
		testenv.Unmet(t, "this kernel has no /proc/pressure/memory")
	}
	bin := testenv.BuildMemdiag(t)
	// A threshold that holds whatever the host does, so only the command fails.
	code, stdout, stderr := runBinary(t, bin, "gate", "--out", "off", "-t", "memory.some.stall<=100%", "--", "sh", "-c", "exit 3")
	if code != exitCommand {
		t.Fatalf("exit code %d; want %d (command failed)", code, exitCommand)
	}
	if !strings.Contains(stderr, "memdiag: the wrapped command failed: sh -c exit 3: exited with code 3") {
		t.Errorf("stderr does not report the command's own code")
	}
	if !strings.Contains(stdout, "FAIL: the command failed: exited with code 3") || strings.Contains(stdout, "breached") {
		t.Errorf("report should blame the command, not a threshold")
	}
}
