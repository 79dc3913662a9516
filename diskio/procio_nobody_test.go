package diskio

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// helperEnv makes the test binary run TestScanAsNobodyHelper for real;
// its value is the PID of a root-owned process.
const helperEnv = "MEMDIAG_DISKIO_NOBODY_HELPER"

// TestScanAsNobody runs a scan of the live /proc as the unprivileged user
// nobody (a copy of this test binary started with that uid): /proc/PID/io
// of root's processes is EACCES there, and the scanner must count them in
// Denied instead of failing, while still seeing every process.
func TestScanAsNobody(t *testing.T) {
	testenv.RequireRoot(t, "switching to the nobody user")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A directory nobody can enter and write its result to, with a copy of the test binary.
	dir, err := os.MkdirTemp("/var/tmp", "memdiag-diskio-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "diskio.test")
	copyExecutable(t, exe, bin)

	// Keep a root process of ours alive so at least one is certainly denied.
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })

	run := func(ambient ...uintptr) nobodyResult {
		t.Helper()
		cmd := exec.Command(bin, "-test.run=^TestScanAsNobodyHelper$", "-test.v")
		cmd.Dir = dir
		cmd.Env = []string{helperEnv + "=" + strconv.Itoa(sleeper.Process.Pid), "PATH=/usr/bin:/bin"}
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: 65534, Gid: 65534},
			AmbientCaps: ambient,
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper as nobody: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "result.json"))
		if err == nil {
			err = os.Remove(filepath.Join(dir, "result.json"))
		}
		var res nobodyResult
		if err == nil {
			err = json.Unmarshal(b, &res)
		}
		if err != nil {
			t.Fatalf("helper result: %v\n%s", err, out)
		}
		return res
	}

	res := run()
	t.Logf("as nobody: %+v", res)
	if res.Stats.Denied == 0 || res.Stats.Denied > res.Stats.Processes {
		t.Errorf("Denied = %d of %d processes; want root's processes denied", res.Stats.Denied, res.Stats.Processes)
	}
	if !res.SleeperDenied {
		t.Errorf("the root-owned sleep %d was not among the denied", sleeper.Process.Pid)
	}
	for _, p := range res.Top {
		if p.PID == sleeper.Process.Pid {
			t.Errorf("root's process %d in nobody's top: %+v", p.PID, p)
		}
	}

	// DeniedHint's claim: both capabilities together make it readable.
	const capDACReadSearch, capSysPtrace = 2, 19
	for _, caps := range [][]uintptr{{capSysPtrace}, {capDACReadSearch}} {
		if r := run(caps...); !r.SleeperDenied {
			t.Errorf("nobody with only capabilities %v could read root's /proc/PID/io", caps)
		}
	}
	res = run(capSysPtrace, capDACReadSearch)
	t.Logf("as nobody with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH: %+v", res.Stats)
	if res.SleeperDenied {
		t.Error("nobody with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH could not read root's /proc/PID/io")
	}
}

type nobodyResult struct {
	Stats         ScanStats
	Top           []ProcIO
	SleeperDenied bool
}

// TestScanAsNobodyHelper is the part of TestScanAsNobody that runs as nobody.
func TestScanAsNobodyHelper(t *testing.T) {
	sleeper, _ := strconv.Atoi(os.Getenv(helperEnv))
	if sleeper == 0 {
		t.Skip("helper of TestScanAsNobody")
	}
	s, err := NewProcScanner("/proc", ProcScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var res nobodyResult
	if _, _, _, err := s.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	res.Top, _, res.Stats, err = s.Scan(time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// The scanner tracks the root-owned sleep, with unknown I/O.
	st := s.procs[sleeper]
	res.SleeperDenied = st != nil && st.comm == "sleep" && !st.ioKnown
	b, _ := json.Marshal(res)
	if err := os.WriteFile("result.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
