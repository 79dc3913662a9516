package delayacct

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// helperEnv makes the test binary act as a recorder that turns the host's
// switch on and waits to be killed (TestHelperRecorder).
const helperEnv = "MEMDIAG_DELAYACCT_HELPER"

// TestHelperRecorder is not a test: run by TestKilledRecorderRestoredE2E
// as a child with helperEnv set, it turns kernel.task_delayacct on through
// Set, as watch --enable-delayacct does, says "on" and waits for SIGKILL.
func TestHelperRecorder(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper of TestKilledRecorderRestoredE2E")
	}
	if _, err := Set(PathsFor("/", "/proc"), true, time.Now()); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("on\n")
	time.Sleep(2 * time.Minute) // killed long before
	os.Exit(2)
}

// TestKilledRecorderRestoredE2E: a recorder that turned the host's
// kernel.task_delayacct on is killed with SIGKILL; the switch stays on and
// the state file names it; the next start of memdiag (record, the
// service) says so and puts the switch back to 0.
func TestKilledRecorderRestoredE2E(t *testing.T) {
	testenv.RequireRoot(t, "kernel.task_delayacct")
	testenv.Exclusive(t) // the cmd crash test flips the same switch
	live := PathsFor("/", "/proc")
	sysctl := func() string {
		b, err := os.ReadFile(live.Sysctl)
		if err != nil {
			testenv.Unmet(t, err.Error())
		}
		return strings.TrimSpace(string(b))
	}
	if sysctl() != "0" {
		testenv.Unmet(t, "kernel.task_delayacct is already on; this test needs it off")
	}
	if _, err := os.Lstat(live.State); err == nil {
		testenv.Unmet(t, live.State+" exists: a memdiag run is recording, or one was killed")
	}
	t.Cleanup(func() {
		if sysctl() != "0" {
			_ = os.WriteFile(live.Sysctl, []byte("0"), 0o644)
			t.Error("kernel.task_delayacct left on; set back to 0")
		}
		_ = os.Remove(live.State)
	})
	bin := testenv.BuildMemdiag(t)

	child := exec.Command(os.Args[0], "-test.run=^TestHelperRecorder$", "-test.count=1")
	child.Env = append(os.Environ(), helperEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "on\n" {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("helper: %q", line)
	}
	if v := sysctl(); v != "1" {
		t.Errorf("while the recorder runs kernel.task_delayacct = %s, want 1", v)
	}
	pid := child.Process.Pid
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if v := sysctl(); v != "1" {
		t.Fatalf("after SIGKILL kernel.task_delayacct = %s; nothing could restore it, want 1", v)
	}
	st := read(t, live.State)
	if !strings.Contains(st, `"pid":`+itoa(pid)+",") || !strings.Contains(st, `"old":"0"`) || !strings.Contains(st, `"pid_start":"`) {
		t.Errorf("state file after SIGKILL: %s", st)
	}

	rec := exec.Command(bin, "record", "--store", filepath.Join(t.TempDir(), "store"), "--duration", "1s", "--interval", "500ms", "--no-timers", "--events", "off")
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	if err := rec.Run(); err != nil {
		t.Fatalf("memdiag record: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "kernel.task_delayacct was left at 1 by a memdiag run (pid "+itoa(pid)+",") ||
		!strings.Contains(stderr.String(), "restored it to 0") {
		t.Errorf("memdiag record after the kill does not say it restored the switch:\n%s", stderr.String())
	}
	if v := sysctl(); v != "0" {
		t.Errorf("after the next start kernel.task_delayacct = %s, want 0", v)
	}
	if _, err := os.Lstat(live.State); !os.IsNotExist(err) {
		t.Errorf("state file still there: %v", err)
	}
}
