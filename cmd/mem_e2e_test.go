package cmd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/memstate"
)

// memJSON runs `memdiag mem --format json` for real and decodes it.
func memJSON(t *testing.T, memdiag string, args ...string) memstate.Report {
	t.Helper()
	c := exec.Command(memdiag, append([]string{"mem", "--format", "json"}, args...)...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("memdiag mem: %v\n%s", err, stderr.String())
	}
	var r memstate.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("decode memdiag mem output: %v\n%s", err, out)
	}
	return r
}

// kmsgKill returns the OOM kill of pid that memdiag mem read from
// /dev/kmsg, failing the test when the log was another or the kill is
// missing.
func kmsgKill(t *testing.T, r memstate.Report, pid int) *memstate.OOMKill {
	t.Helper()
	if r.OOM.LogSource != "/dev/kmsg" {
		t.Fatalf("kernel log source %q (unreadable: %q), want /dev/kmsg as root", r.OOM.LogSource, r.OOM.LogUnreadable)
	}
	for i := range r.OOM.Kills {
		if r.OOM.Kills[i].PID == pid {
			t.Logf("kill as memdiag mem saw it: %+v", r.OOM.Kills[i])
			return &r.OOM.Kills[i]
		}
	}
	t.Fatalf("no OOM kill of PID %d among %+v", pid, r.OOM.Kills)
	return nil
}

func findCgroup(r memstate.Report, path string) *memstate.Cgroup {
	for i := range r.Cgroups {
		if r.Cgroups[i].Path == path {
			return &r.Cgroups[i]
		}
	}
	return nil
}

// startInCgroup starts name args in cg and ends it (by PID) when the test ends.
func startInCgroup(t *testing.T, cg *testenv.Cgroup, name string, args ...string) *exec.Cmd {
	t.Helper()
	c := cg.Command(name, args...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			c.Process.Kill()
			<-done
		}
	})
	go func() { c.Wait(); close(done) }()
	return c
}

// TestMemCacheFillsCgroupE2E: a process in a cgroup
// limited to 64 MiB writes and reads a file four times that size. memdiag
// mem must show the cgroup within 10 % of its limit, filled by page cache
// rather than anon, and call it reclaimable.
func TestMemCacheFillsCgroupE2E(t *testing.T) {
	testenv.RequireRoot(t, "a memory-limited cgroup")
	const limit = 64 << 20
	name := fmt.Sprintf("memdiag-mem-cache-%d", os.Getpid())
	cg := testenv.NewCgroup(t, name, limit)
	hog, memdiag := testenv.BuildHog(t), testenv.BuildMemdiag(t)
	dir, err := os.MkdirTemp("/var/tmp", "memdiag-mem-") // not /tmp: it may be a tmpfs, whose pages are shmem, not cache
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	startInCgroup(t, cg, hog, "-write", strconv.Itoa(4*limit), "-file", filepath.Join(dir, "data"),
		"-read-passes", "2", "-hold", "5m")

	var last *memstate.Cgroup
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		r := memJSON(t, memdiag, "--interval", "0", "--top", "1")
		last = findCgroup(r, "/"+name)
		if last != nil && last.NearLimit && last.MostlyCache {
			break
		}
	}
	if last == nil {
		t.Fatalf("cgroup /%s not in memdiag mem's output", name)
	}
	b, _ := json.MarshalIndent(last, "", "  ")
	t.Logf("cgroup as memdiag mem saw it:\n%s", b)
	if last.LimitBytes == nil || *last.LimitBytes != limit {
		t.Errorf("limit = %v, want %d", last.LimitBytes, limit)
	}
	if !last.NearLimit || float64(last.UsageBytes) < 0.9*limit {
		t.Errorf("usage %d of %d not flagged near the limit", last.UsageBytes, limit)
	}
	// The hog's anon memory is its runtime and a 1 MiB buffer: a few MiB.
	if !last.MostlyCache || last.CacheBytes < last.UsageBytes/2 || last.AnonBytes > 16<<20 {
		t.Errorf("cache %d, anon %d of usage %d: want cache, not anon, filling the group", last.CacheBytes, last.AnonBytes, last.UsageBytes)
	}
	// Whether the group's PSI shows stalls depends on the disk and the
	// host's load; either way the note must call the cache reclaimable and
	// give the PSI verdict.
	if !strings.Contains(last.Note, "reclaimable") ||
		!(strings.Contains(last.Note, "fine until its PSI says otherwise") || strings.Contains(last.Note, "reclaiming it stalls")) {
		t.Errorf("note %q does not say the cache is reclaimable and what PSI says", last.Note)
	}
}

// TestMemOOMKillE2E: a process that exceeds its cgroup's
// limit with anonymous memory and no swap for the group is OOM-killed;
// memdiag mem must list the kill with the process's name and PID.
func TestMemOOMKillE2E(t *testing.T) {
	testenv.RequireRoot(t, "a memory-limited cgroup and /dev/kmsg")
	const limit = 32 << 20
	name := fmt.Sprintf("memdiag-mem-oom-%d", os.Getpid())
	cg := testenv.NewCgroup(t, name, limit)
	// No swap for the group, so exceeding the limit can only end in a kill
	// (other tests on the host may have swap enabled).
	if cg.MemV1Dir != "" {
		if err := os.WriteFile(filepath.Join(cg.MemV1Dir, "memory.memsw.limit_in_bytes"), []byte(strconv.Itoa(limit)), 0o644); err != nil {
			testenv.Unmet(t, "cannot limit the group's swap (kernel without swap accounting?): "+err.Error())
		}
	} else if err := os.WriteFile(filepath.Join(cg.V2Dir, "memory.swap.max"), []byte("0"), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	hog, memdiag := testenv.BuildHog(t), testenv.BuildMemdiag(t)
	c := cg.Command(hog, "-anon", strconv.Itoa(8*limit), "-hold", "30s")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := c.Process.Pid // the shell execs the hog: same PID
	errc := make(chan error, 1)
	go func() { errc <- c.Wait() }()
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("hog ended with %v, want killed by SIGKILL (the OOM killer)", err)
		}
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		<-errc
		t.Fatal("hog was not OOM-killed within 60 s")
	}

	r := memJSON(t, memdiag, "--interval", "0", "--top", "1")
	kill := kmsgKill(t, r, pid)
	if kill.Comm != "hog" || kill.Constraint != "memcg" || kill.OOMCgroup != "/"+name {
		t.Errorf("kill = %+v; want comm hog, constraint memcg, cgroup /%s", *kill, name)
	}
	// The group's own anon memory was at its limit when it was killed.
	if kill.AnonRSSBytes < limit/2 || kill.AnonRSSBytes > limit {
		t.Errorf("anon-rss %d, want between %d and the %d limit", kill.AnonRSSBytes, limit/2, limit)
	}
	if time.Since(kill.Time) > 5*time.Minute || time.Until(kill.Time) > 5*time.Minute {
		t.Errorf("kill time %v is not around now: boot time or timestamp conversion is off", kill.Time)
	}
	var counted bool
	for _, cc := range r.OOM.CgroupOOMKills {
		counted = counted || (cc.Path == "/"+name && cc.OOMKills >= 1)
	}
	if !counted {
		t.Errorf("cgroup oom_kill counters %+v lack /%s", r.OOM.CgroupOOMKills, name)
	}
	if r.OOM.VMStatOOMKills == nil || *r.OOM.VMStatOOMKills < 1 {
		t.Errorf("vmstat oom_kill = %v, want ≥ 1", r.OOM.VMStatOOMKills)
	}
}
