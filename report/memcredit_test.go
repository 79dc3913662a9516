package report

import (
	"strings"
	"testing"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/timers"
)

// A job credited for the memory it took (trial-batch.timer: python3
// batch.py allocates 200 MiB anon every 20 s in a 256 MiB group beside a
// web service; the real recording correlate/testdata/real/trial-s7-mem-job)
// is described by that memory, not as "100% of the I/O", and its CULPRIT
// cells name its own process, never the web service's python3 that did
// the group's I/O.
func TestMemoryCreditedJob(t *testing.T) {
	r := analyzeFile(t, "real/trial-s7-mem-job.jsonl.gz", correlate.Options{Project: timers.Project})
	if len(r.Culprits) == 0 || r.Culprits[0].Name != "trial-batch.timer" {
		t.Fatalf("culprits %v, want trial-batch.timer first", r.Culprits)
	}
	c := &r.Culprits[0]
	var line string
	for _, e := range evidence(&r, c) {
		if strings.HasPrefix(e, "credited with") {
			line = e
		}
	}
	// proof.credits: mem_bytes 219189248 … (median 209.0 MiB), mem_share
	// 1 in all 8; share 0 (median); bytes 0 … 3395584.
	for _, want := range []string{
		"credited with 8 of 8 episodes for the memory it took: its processes' resident memory grew 209.0 MiB per episode",
		"100% (median) of the memory taken by the processes that can cause the cgroup's reclaim",
		"its I/O was 426.5 KiB per episode, 0% (median) of the I/O",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("credit line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "100% (median) of the I/O") {
		t.Errorf("credit line %q gives the memory share as the I/O share", line)
	}
	want := []string{
		"trial-batch.timer: batch.py, mkdir +209.0 MiB memory",
		"trial-batch.timer: batch.py, mkdir +209.1 MiB memory",
		"trial-batch.timer: batch.py, mkdir +209.1 MiB memory",
		"trial-batch.timer: batch.py, mkdir +209.1 MiB memory",
		"trial-batch.timer: batch.py, mkdir +209.0 MiB memory",
		"trial-batch.timer: batch.py, mkdir +208.0 MiB memory",
		"trial-batch.timer: batch.py, mkdir +133.8 MiB memory",
		"trial-batch.timer: batch.py, mkdir +136.3 MiB memory",
	}
	if len(r.Episodes) != len(want) {
		t.Fatalf("%d episodes, want %d", len(r.Episodes), len(want))
	}
	for i := range r.Episodes {
		if got := culpritCell(&r, &r.Episodes[i]); got != want[i] {
			t.Errorf("episode %d: cell %q, want %q", i, got, want[i])
		}
	}
	// The legend's example is the report's own first cell (it quoted
	// "+209.0 MiB memory" whatever the report held).
	var b strings.Builder
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "shows its processes and the memory they took: \"+209.0 MiB memory\" is their resident memory growth in the episode.") {
		t.Errorf("the legend does not quote the first cell:\n%s", b.String())
	}
}

// A job's CULPRIT cell never names a process of another unit that has
// the same comm: the web service's python3 is not the batch job's.
func TestCulpritCellOtherUnit(t *testing.T) {
	web := correlate.ProcActivity{PID: 16960, Comm: "python3", Program: "web.py", Unit: "trial-web.service", ReadBytes: 90 << 20}
	batch := correlate.ProcActivity{PID: 10223, Comm: "python3", Program: "batch.py", Unit: "trial-batch.service", ReadBytes: 1 << 20}
	r := correlate.Result{Culprits: []correlate.Culprit{{Name: "trial-batch.timer", Kind: correlate.KindTimer,
		Processes: []correlate.ProcActivity{{Comm: "python3", Program: "batch.py", Unit: "trial-batch.service"}}}}}
	e := correlate.Episode{Culprit: "trial-batch.timer", Processes: []correlate.ProcActivity{web, batch}}
	if got, want := culpritCell(&r, &e), "trial-batch.timer: python3 1.0 MiB"; got != want {
		t.Errorf("cell %q, want %q", got, want)
	}
	e.Processes = []correlate.ProcActivity{web}
	if got, want := culpritCell(&r, &e), "trial-batch.timer"; got != want {
		t.Errorf("cell without the job's process %q, want %q", got, want)
	}
}

// A job credited for the memory it took is advised to cap its memory,
// not to lower its I/O priority or move its data to another disk
// (trial s8 F-8: a periodic python3 filling 400 MiB in a 256 MiB group
// was told "limit its I/O … or move its data to another disk"). The
// real recording trial-s7-mem-job; a job credited for its I/O keeps the
// I/O advice (busy-host-loop).
func TestMemoryCreditedAdvice(t *testing.T) {
	r := analyzeFile(t, "real/trial-s7-mem-job.jsonl.gz", correlate.Options{Project: timers.Project})
	if len(r.Culprits) == 0 || r.Culprits[0].Name != "trial-batch.timer" {
		t.Fatalf("culprits %v, want trial-batch.timer first", r.Culprits)
	}
	got := strings.Join(advice(&r.Culprits[0]), "\n")
	for _, want := range []string{"systemctl disable --now trial-batch.timer", "cap its memory: `systemctl edit trial-batch.service` with MemoryHigh=",
		"credited for the memory it took (209.0 MiB per episode"} {
		if !strings.Contains(got, want) {
			t.Errorf("advice lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"IOSchedulingClass", "another disk"} {
		if strings.Contains(got, bad) {
			t.Errorf("advice of a memory-credited job says %q:\n%s", bad, got)
		}
	}
	r = analyzeFile(t, "real/busy-host-loop.jsonl.gz", correlate.Options{Project: timers.Project})
	if len(r.Culprits) == 0 {
		t.Fatal("busy-host-loop: no culprit")
	}
	if got := strings.Join(advice(&r.Culprits[0]), "\n"); !strings.Contains(got, "limit its I/O") || strings.Contains(got, "cap its memory") {
		t.Errorf("advice of an I/O-credited %s: %q; want the I/O advice", r.Culprits[0].Name, got)
	}
}
