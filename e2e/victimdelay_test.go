package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// TestVictimDelays: the victim's own waits on memory, from its delay
// accounting (taskstats by TGID). A victim in a 64 MiB memory group
// rereads a 160 MiB file for 12 s, so its reads refault what its group's
// reclaim just evicted; `watch --victim PID --enable-delayacct` must
// record its cumulative waits (Sample.VictimDelay) rising, and put
// kernel.task_delayacct back as it found it.
func TestVictimDelays(t *testing.T) {
	testenv.RequireRoot(t, "a memory cgroup, kernel.task_delayacct and taskstats of another process")
	memdiag := testenv.BuildMemdiag(t)
	hog := testenv.BuildHog(t)
	cg := testenv.NewCgroup(t, "memdiag-e2e-vdelay.service", 64<<20)
	before, err := os.ReadFile("/proc/sys/kernel/task_delayacct")
	if err != nil {
		t.Skipf("no kernel.task_delayacct: %v", err)
	}
	dir := t.TempDir()
	data := filepath.Join("/var/tmp", "memdiag-e2e-vdelay.dat")
	t.Cleanup(func() { os.Remove(data) })

	// The victim: writes its file, waits 4 s (watch starts), then
	// rereads it for 12 s.
	v := cg.Command(hog, "-write", fmt.Sprint(160<<20), "-file", data, "-first", "4s", "-read-passes", "1", "-read-for", "12s")
	var vout strings.Builder
	v.Stdout, v.Stderr = &vout, &vout
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Process.Kill(); _ = v.Wait() })

	rec := filepath.Join(dir, "run.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	watch := exec.CommandContext(ctx, memdiag, "watch", "--interval", "1s", "--duration", "14s", "--out", rec,
		"--quiet", "--no-timers", "--events", "off", "--ebpf", "off", "--victim", fmt.Sprint(v.Process.Pid), "--enable-delayacct")
	out, err := watch.CombinedOutput()
	if err != nil {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	after, _ := os.ReadFile("/proc/sys/kernel/task_delayacct")
	if string(after) != string(before) {
		t.Errorf("kernel.task_delayacct %q after watch, %q before", after, before)
	}
	r, err := record.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var st *record.CollectorStatus
	for i, c := range r.Header.Collectors {
		if c.Name == "victim-delay" {
			st = &r.Header.Collectors[i]
		}
	}
	if st == nil || !st.Available {
		t.Fatalf("header's victim-delay status %+v, want available", st)
	}
	var first, last *record.TaskDelays
	n := 0
	for i := range r.Samples {
		d := r.Samples[i].VictimDelay
		if d == nil {
			continue
		}
		if d.PID != v.Process.Pid {
			t.Fatalf("sample %d: victim_delay of pid %d, want %d", i, d.PID, v.Process.Pid)
		}
		if first == nil {
			first = d
		}
		if last != nil && d.MemoryNS() < last.MemoryNS() {
			t.Errorf("sample %d: cumulative memory delay fell from %d to %d ns", i, last.MemoryNS(), d.MemoryNS())
		}
		last = d
		n++
	}
	if n < 10 {
		t.Fatalf("%d of %d samples carry victim_delay, want at least 10", n, len(r.Samples))
	}
	t.Logf("victim's waits over the run: reclaim %v, thrashing %v, swap-in %v, compaction %v, block I/O %v",
		time.Duration(last.ReclaimNS-first.ReclaimNS), time.Duration(last.ThrashingNS-first.ThrashingNS),
		time.Duration(last.SwapinNS-first.SwapinNS), time.Duration(last.CompactNS-first.CompactNS), time.Duration(last.BlkioNS-first.BlkioNS))
	if last.MemoryNS() <= first.MemoryNS() {
		t.Errorf("the victim's memory waits did not rise (first %+v, last %+v); victim output:\n%s", first, last, vout.String())
	}

	// analyze states them per episode.
	js, err := exec.CommandContext(ctx, memdiag, "analyze", "--format", "json", rec).Output()
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	var res struct {
		Episodes []struct {
			VictimWaits *struct {
				PID      int     `json:"pid"`
				ReclaimS float64 `json:"reclaim_s"`
			} `json:"victim_waits"`
		} `json:"episodes"`
	}
	if err := json.Unmarshal(js, &res); err != nil {
		t.Fatal(err)
	}
	text, _ := exec.CommandContext(ctx, memdiag, "analyze", rec).Output()
	t.Logf("analyze:\n%s", text)
	waited := 0
	for _, e := range res.Episodes {
		if w := e.VictimWaits; w != nil && w.PID == v.Process.Pid && w.ReclaimS > 0 {
			waited++
		}
	}
	if len(res.Episodes) == 0 || waited == 0 || !strings.Contains(strings.ToLower(string(text)), "the victim's waits on memory") {
		t.Errorf("%d episodes, %d with the victim's reclaim waits; want some, and the text's section; JSON:\n%s", len(res.Episodes), waited, js)
	}
}
