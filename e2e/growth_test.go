package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestAnalyzeFlagsGrowth checks RSS growth through the commands, in one
// 30 s recording at `watch`'s default --top 10:
//   - a process growing its anonymous memory at a known steady rate and
//     a flat one: analyze must flag the first with a slope within 20 % of
//     the true rate, and not the second;
//   - a small process growing 1 MiB/s (to 40 MiB, past the recording) while ten larger ones
//     hold 64 MiB each: it is never among the top 10 by RSS, so a
//     recording of the top 10 alone (what watch kept before it followed
//     growers; rebuilt here by cutting each sample's RSS to its first 10)
//     does not show it, and analyze of the real recording flags it;
//   - the C programs retain (8 threads: glibc arenas keep the freed
//     memory, live heap flat) and leak (one thread, never frees): both
//     flagged, each carrying the allocator evidence watch read when it
//     began to grow, and the evidence differs as it should (many threads
//     under glibc's arena limit, "likely retention: try MALLOC_ARENA_MAX";
//     one arena, where malloc_trim tells retention from held memory);
//   - a C program in a 0.5-CPU cgroup that grows on one thread, then
//     starts four more (issue 30 item 4, case C04): the evidence watch
//     read when it began growing saw one thread, and analyze reads it
//     with the five recorded later, saying the quota is not what glibc
//     sizes its arenas by.
func TestAnalyzeFlagsGrowth(t *testing.T) {
	testenv.RequireRoot(t, "reading every process's /proc/PID/status, maps and environ")
	// Its processes, its cgroup and its assertions are its own (their
	// RSS, their slopes, their allocator evidence), and larger processes
	// of other tests only push the small grower further down the RSS
	// list: it runs beside the other Shared tests, off the exclusive
	// tests' chain (33 s of CI's critical path, docs/ci.md). Its 1.2 GiB
	// of anonymous memory, outside every limit, is no pressure on the
	// host, but beside a test that reads the host's LRU it would move it.
	t.Parallel()
	testenv.Shared(t)
	memdiag, hog := testenv.BuildMemdiag(t), testenv.BuildHog(t)
	retainBin, leakBin := testenv.BuildC(t, "retain", "-pthread"), testenv.BuildC(t, "leak")
	lateBin := testenv.BuildC(t, "latethreads", "-pthread")
	halfCPU := cpuQuotaGroup(t, "memdiag-e2e-latethreads", 50000, 100000)
	const rate = 2 << 20 // bytes/s: hog adds 4 MiB every 2 s
	start := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(name, args...)
		c.Env = []string{"PATH=/usr/bin:/bin"}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	// The ten larger processes and the flat one are full before watch's
	// first scan: waited for, not slept on. A fill still running in the
	// recording is a ramp, which a loaded machine (load 20+) once drew
	// out over enough samples to be read as growth.
	var full []*exec.Cmd
	for range 10 {
		full = append(full, start(hog, "-anon", fmt.Sprint(64<<20), "-hold", "2m"))
	}
	flat := start(hog, "-anon", fmt.Sprint(96<<20), "-hold", "2m")
	for _, c := range full {
		waitAnon(t, c, 64<<20)
	}
	waitAnon(t, flat, 96<<20)
	var grow, small, retain, leak, late *exec.Cmd
	begin := time.Now()
	r := recordWhile(t, memdiag, 30*time.Second, nil, func() {
		small = start(hog, "-anon", fmt.Sprint(40<<20), "-anon-rate", fmt.Sprint(1<<20), "-hold", "2m")
		retain = start(retainBin, "8", "40", "600")
		leak = start(leakBin, "8", "40", "600")
		// One thread for 8 s, then 4 more; 2 MiB/s throughout, to 26 s.
		late = start("/bin/sh", "-c", fmt.Sprintf("echo $$ > %q && exec \"$@\"", halfCPU), "sh", lateBin, "8", "4", "26", "2")
		time.Sleep(time.Second)
		grow = start(hog, "-anon", fmt.Sprint(96<<20+64<<20), "-anon-rate", fmt.Sprint(rate), "-hold", "2m")
	})
	t.Logf("recorded in %s", time.Since(begin).Round(time.Second))
	if len(r.Samples) < 25 || len(r.Samples[len(r.Samples)-1].RSS) == 0 {
		t.Fatalf("recording has %d samples, RSS in the last: %v", len(r.Samples), r.Samples[len(r.Samples)-1].RSS)
	}
	// The list holds the top 10 that could still be read, then the
	// growers: a large process that ended between the scan and its status
	// read (a linker of CI's builds, R14) leaves fewer than 10 before the
	// growers, and the small grower at #10 in that one sample though it
	// was not among the 10 largest. Two such samples are allowed (logged);
	// the check that counts is the top-10-only recording's, below.
	seen, early := 0, 0
	for _, s := range r.Samples {
		for i, p := range s.RSS {
			if p.PID == small.Process.Pid {
				seen++
				if i < 10 {
					early++
					t.Logf("sample %d: the small grower is #%d by RSS (%d bytes anon): fewer than 10 of the largest were read", s.Seq, i+1, p.AnonBytes)
				}
			}
		}
	}
	if early > 2 {
		t.Errorf("the small grower is within the first 10 of %d samples' RSS lists, want below the top 10 (at most 2 samples short of it)", early)
	}
	if seen < 20 {
		t.Errorf("the small grower is in %d samples' RSS, want 20 or more", seen)
	}
	// 30 s is far below the 10 min from which growth is reported by
	// default: the flag lowers it for the test (the default's refusal is
	// memstate's TestGrowthMinWindow).
	type finding struct {
		PID       int      `json:"pid"`
		Comm      string   `json:"comm"`
		AnonSlope float64  `json:"anon_slope_mib_per_h"`
		Growing   bool     `json:"growing"`
		Evidence  []string `json:"evidence"`
		Retention *struct {
			Allocators []string `json:"allocators"`
			Threads    int      `json:"threads"`
		} `json:"retention"`
	}
	analyze := func(rec string) map[int]finding {
		out, err := exec.Command(memdiag, "analyze", rec, "--format", "json", "--growth-min-window", "20s").Output()
		if err != nil {
			t.Fatalf("analyze %s: %v", rec, err)
		}
		var res struct {
			MemoryGrowth []finding `json:"memory_growth"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		m := map[int]finding{}
		for _, g := range res.MemoryGrowth {
			m[g.PID] = g
		}
		return m
	}
	got := analyze(lastRecording(t))
	topOnly := analyze(topTen(t, lastRecording(t)))

	want := float64(rate) / (1 << 20) * 3600 // 7200 MiB/h
	if g, ok := got[grow.Process.Pid]; !ok {
		t.Errorf("growing hog (pid %d) not flagged: %+v", grow.Process.Pid, got)
	} else if math.Abs(g.AnonSlope-want) > 0.2*want {
		t.Errorf("growing hog flagged at %.0f MiB/h, want %.0f ± 20 %%", g.AnonSlope, want)
	}
	if g, ok := got[flat.Process.Pid]; ok {
		t.Errorf("flat hog flagged: %+v", g)
	}
	// The small grower: 4 MiB every 4 s, 3600 MiB/h.
	if g, ok := got[small.Process.Pid]; !ok {
		t.Errorf("small grower (pid %d) not flagged: %+v", small.Process.Pid, got)
	} else if math.Abs(g.AnonSlope-3600) > 0.25*3600 {
		t.Errorf("small grower flagged at %.0f MiB/h, want 3600 ± 25 %%", g.AnonSlope)
	} else {
		t.Logf("small grower: %.0f MiB/h; %q", g.AnonSlope, g.Evidence)
	}
	if g, ok := topOnly[small.Process.Pid]; ok {
		t.Errorf("the top-10-only recording flags the small grower: %+v", g)
	}
	for _, c := range []struct {
		name      string
		cmd       *exec.Cmd
		threads   int
		reading   string
		tellApart string
	}{
		{"retain", retain, 9, "allocator: glibc malloc, 9 threads, up to ", "what tells a leak from retention: the program's live heap"},
		{"leak", leak, 1, "allocator: glibc malloc with one thread: one arena", "what tells a leak from retention: malloc_trim(0) in the process"},
	} {
		g, ok := got[c.cmd.Process.Pid]
		if !ok {
			t.Errorf("%s (pid %d) not flagged: %+v", c.name, c.cmd.Process.Pid, got)
			continue
		}
		t.Logf("%s: %.0f MiB/h; evidence:\n  %s", c.name, g.AnonSlope, strings.Join(g.Evidence, "\n  "))
		if g.Retention == nil || g.Retention.Threads != c.threads || len(g.Retention.Allocators) != 1 || g.Retention.Allocators[0] != "glibc" ||
			len(g.Evidence) != 4 || !strings.HasPrefix(g.Evidence[0], "RssAnon ") || !strings.HasSuffix(g.Evidence[0], "the growth is anonymous memory (heap, anonymous mappings), what both a leak and allocator retention grow") ||
			!strings.HasPrefix(g.Evidence[1], c.reading) || !strings.HasPrefix(g.Evidence[3], c.tellApart) {
			t.Errorf("%s: retention %+v, evidence %q; want glibc, %d threads, %q…, %q…", c.name, g.Retention, g.Evidence, c.threads, c.reading, c.tellApart)
		}
	}
	if g := got[retain.Process.Pid]; len(g.Evidence) > 1 && !strings.Contains(g.Evidence[1], "likely retention: try MALLOC_ARENA_MAX=") {
		t.Errorf("retain: %q lacks the retention reading", g.Evidence[1])
	}
	// C04: read over the growth, not from the one snapshot.
	if g, ok := got[late.Process.Pid]; !ok {
		t.Errorf("latethreads (pid %d) not flagged: %+v", late.Process.Pid, got)
	} else {
		t.Logf("latethreads: %.0f MiB/h; evidence:\n  %s", g.AnonSlope, strings.Join(g.Evidence, "\n  "))
		ev := strings.Join(g.Evidence, "\n")
		for _, want := range []string{
			"threads: 1 when it began growing, up to 5 later (/proc/PID/status Threads each sample); the reading uses 5",
			"allocator: glibc malloc, 5 threads, up to ",
			"(glibc counts these, not the cgroup's 0.5-CPU quota)",
			"likely retention: try MALLOC_ARENA_MAX=2",
		} {
			if !strings.Contains(ev, want) {
				t.Errorf("latethreads: evidence lacks %q:\n%s", want, ev)
			}
		}
		if strings.Contains(ev, "with one thread") || g.Retention == nil || g.Retention.Threads != 5 {
			t.Errorf("latethreads: read as one thread, or retention %+v", g.Retention)
		}
	}
}

// cpuQuotaGroup makes a cgroup with a CPU quota of quota µs per period
// µs (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max), removed when the test
// ends (after its processes, whose cleanups run first), and returns the
// cgroup.procs file to write a PID to.
func cpuQuotaGroup(t *testing.T, name string, quota, period int) string {
	t.Helper()
	var dir string
	var files map[string]string
	switch {
	case fileExists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
		dir = filepath.Join("/sys/fs/cgroup/cpu", name)
		files = map[string]string{"cpu.cfs_period_us": fmt.Sprint(period), "cpu.cfs_quota_us": fmt.Sprint(quota)}
	case strings.Contains(readString("/sys/fs/cgroup/cgroup.subtree_control"), "cpu"):
		dir = filepath.Join("/sys/fs/cgroup", name)
		files = map[string]string{"cpu.max": fmt.Sprintf("%d %d", quota, period)}
	default:
		testenv.Unmet(t, "no CPU controller for a quota (cgroup v1 cpu, or cpu in the v2 root's subtree_control)")
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if err := os.Remove(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("remove cgroup %s: processes still in it?", dir)
	})
	for _, f := range []string{"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.max"} {
		if v, ok := files[f]; ok {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return filepath.Join(dir, "cgroup.procs")
}

func readString(p string) string { b, _ := os.ReadFile(p); return string(b) }

// waitAnon waits until c's RssAnon (/proc/PID/status) reaches bytes,
// failing the test if it has not after a minute.
func waitAnon(t *testing.T, c *exec.Cmd, bytes uint64) {
	t.Helper()
	began := time.Now()
	var have uint64
	for time.Since(began) < time.Minute {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Process.Pid))
		if err != nil {
			t.Fatalf("%v: %v", c.Args, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
				if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &have); err != nil {
					t.Fatalf("%v: RssAnon %q: %v", c.Args, v, err)
				}
				have <<= 10
			}
		}
		if have >= bytes {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%v: RssAnon %d bytes after %s, want %d", c.Args, have, time.Since(began).Round(time.Second), bytes)
}

// topTen writes a copy of the recording at path whose samples keep only
// their first 10 RSS entries (the top 10 by RSS) and no retention
// evidence: what watch recorded before it followed every grower.
func topTen(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		if string(m["type"]) == `"sample"` {
			var rss []json.RawMessage
			if raw, ok := m["rss"]; ok {
				if err := json.Unmarshal(raw, &rss); err != nil {
					t.Fatal(err)
				}
				m["rss"], _ = json.Marshal(rss[:min(len(rss), 10)])
			}
			delete(m, "retention")
		}
		l, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(l)
		out.WriteByte('\n')
	}
	cut := filepath.Join(t.TempDir(), "top10.jsonl")
	if err := os.WriteFile(cut, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return cut
}
