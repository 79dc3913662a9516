package mem

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/memstate"
)

// The words on a growing process, moved from package memstate (issue 26:
// memstate returns figures, the report layer writes the sentences) with
// the strings its tests pinned.

// TestRetentionReading: the plain reading of glibc's arenas under a
// quota, of another allocator beside a Go runtime, and of evidence that
// could not be read.
func TestRetentionReading(t *testing.T) {
	var g memstate.ProcGrowth
	g.AttachRetention(&memstate.Retention{Allocators: []string{"glibc"}, Threads: 4, CPUsOnline: 8, CPUQuota: 2,
		Env: map[string]string{"MALLOC_ARENA_MAX": "4", "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}})
	if got := RetentionReading(g.Retention); got != "glibc malloc, 4 threads, up to 4 arenas on 8 CPUs online (glibc counts these, not the cgroup's 2-CPU quota): freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2" {
		t.Errorf("glibc: %q", got)
	}
	g.AttachRetention(&memstate.Retention{Allocators: []string{"glibc", "jemalloc"}, Go: true, Threads: 12, CPUsOnline: 2})
	if got := RetentionReading(g.Retention); got != "jemalloc mapped: it returns freed memory on its own schedule (decay/release settings); its own statistics tell held from cached memory; a Go program: runtime metrics (heap profile, /memory/classes) do not see cgo or C-library allocations; anon beyond them is outside the Go heap" {
		t.Errorf("jemalloc and Go: %q", got)
	}
	if got := RetentionReading(&memstate.Retention{Unread: "open /proc/9/maps: permission denied"}); got != "no allocator evidence: open /proc/9/maps: permission denied" {
		t.Errorf("unread: %q", got)
	}
	if got := RetentionReading(&memstate.Retention{Threads: 3, CPUsOnline: 2}); got != "no known allocator mapped (a static binary or its own allocator): nothing here tells retention from a leak" {
		t.Errorf("none mapped: %q", got)
	}
}

// TestGrowthNote: what was observed, then what it can mean, for a fit of
// 50 MiB over 50 s and of 200 MiB over 10 minutes; a process that is not
// growing gets no words.
func TestGrowthNote(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	fit := func(step time.Duration, mib ...uint64) memstate.ProcGrowth {
		var gs memstate.GrowthSeries
		for i, m := range mib {
			gs.Add(t0.Add(time.Duration(i)*step), []memstate.ProcRSS{{PID: 1, StartTicks: 1, Comm: "p", AnonBytes: m << 20}})
		}
		o := memstate.DefaultGrowthOptions()
		o.MinObserved = 20 * time.Second
		gr := gs.Fit(o)
		if len(gr) != 1 {
			t.Fatalf("fit: %+v", gr)
		}
		return gr[0]
	}
	g := fit(10*time.Second, 10, 20, 30, 40, 50, 60)
	if got := GrowthNote(&g); got != "observed: anon grew 50.0 MiB in 50s, on a straight line (3600.0 MiB/h, R² 1.00); "+LeakOrRetention {
		t.Errorf("50 s: %q", got)
	}
	g = fit(150*time.Second, 100, 150, 200, 250, 300)
	if got := GrowthNote(&g); !strings.HasPrefix(got, "observed: anon grew 200.0 MiB in 10m0s, on a straight line (1200.0 MiB/h, R² 1.00); steady anon growth is an observation, not a diagnosis") {
		t.Errorf("10 min: %q", got)
	}
	flat := fit(10*time.Second, 30, 30, 30, 30, 30, 30)
	d := DescribeGrowth([]memstate.ProcGrowth{flat, g})
	if d[0].Note != "" || d[0].Evidence != nil || d[1].Note != GrowthNote(&g) || len(d[1].Evidence) != 2 || g.Note != "" || math.IsNaN(d[1].AnonSlope) {
		t.Errorf("DescribeGrowth: %+v; want words on the grower only, the input untouched", d)
	}
	if d := DescribeGrowth(nil); d == nil || len(d) != 0 {
		t.Errorf("DescribeGrowth(nil) = %#v, want an empty list (JSON [])", d)
	}
}

// TestGrowthEvidence: the lines a growth finding carries for the evidence
// of the retain program (glibc, 9 threads, 2 CPUs), the leak program
// (glibc, one thread, MALLOC_ARENA_MAX set), a Go program, none recorded,
// and a process whose shmem grew.
func TestGrowthEvidence(t *testing.T) {
	g := memstate.ProcGrowth{AnonFirstBytes: 10 << 20, AnonLastBytes: 90 << 20, FileFirstBytes: 2 << 20, FileLastBytes: 2 << 20}
	retain := g
	retain.AttachRetention(&memstate.Retention{Allocators: []string{"glibc"}, Threads: 9, CPUsOnline: 2})
	retain.Evidence = GrowthEvidence(&retain)
	want := []string{
		"RssAnon 10.0 MiB → 90.0 MiB, RssFile 2.0 MiB → 2.0 MiB, RssShmem 0 B → 0 B: the growth is anonymous memory (heap, anonymous mappings), what both a leak and allocator retention grow",
		"allocator: glibc malloc, 9 threads, up to 16 arenas on 2 CPUs online: freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2",
		"no allocator variable in its environment (MALLOC_ARENA_MAX, GLIBC_TUNABLES, MALLOC_CONF, …): the allocator's defaults apply",
		"what tells a leak from retention: the program's live heap (malloc_stats(), a heap profiler): flat while RssAnon grows is retention, growing with it is a leak; or run it with MALLOC_ARENA_MAX=2: retention then grows less or stops, a leak keeps its slope",
	}
	if d := cmp.Diff(want, retain.Evidence); d != "" || retain.Retention.ArenasMax != 16 {
		t.Errorf("retain (-want +got):\n%s", d)
	}
	leak := g
	leak.AttachRetention(&memstate.Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 2, Env: map[string]string{"MALLOC_ARENA_MAX": "2", "MALLOC_TRIM_THRESHOLD_": "0"}})
	leak.Evidence = GrowthEvidence(&leak)
	want = []string{
		want[0],
		"allocator: glibc malloc with one thread: one arena, so freed memory is not spread over arenas; anon growth is memory the program still holds, or fragmentation of its one heap (malloc_trim(0) tells them apart)",
		"allocator settings in its environment: MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=0",
		"what tells a leak from retention: malloc_trim(0) in the process (gdb -p PID -batch -ex 'call (int)malloc_trim(0)') returns what glibc keeps: RssAnon falling back is retention or fragmentation, RssAnon staying is memory the program holds (a leak, or data it keeps)",
	}
	if d := cmp.Diff(want, leak.Evidence); d != "" {
		t.Errorf("leak (-want +got):\n%s", d)
	}
	goProg := g
	goProg.AttachRetention(&memstate.Retention{Go: true, Threads: 7, CPUsOnline: 2, Env: map[string]string{"GOMEMLIMIT": "1GiB"}})
	goProg.Evidence = GrowthEvidence(&goProg)
	if len(goProg.Evidence) != 4 || goProg.Evidence[2] != "allocator settings in its environment: GOMEMLIMIT=1GiB" ||
		!strings.HasPrefix(goProg.Evidence[3], "what tells a leak from retention: the Go runtime's heap (runtime/metrics /memory/classes/heap/objects:bytes, pprof heap) against RssAnon") {
		t.Errorf("Go program: %q", goProg.Evidence)
	}
	none := g
	none.AttachRetention(nil)
	none.Evidence = GrowthEvidence(&none)
	if len(none.Evidence) != 2 || none.Retention != nil || !strings.HasPrefix(none.Evidence[1], "no allocator evidence recorded") {
		t.Errorf("no evidence: %q", none.Evidence)
	}
	shm := memstate.ProcGrowth{AnonFirstBytes: 10 << 20, AnonLastBytes: 12 << 20, ShmemFirstBytes: 0, ShmemLastBytes: 40 << 20}
	shm.AttachRetention(&memstate.Retention{Unread: "open /proc/9/maps: permission denied"})
	shm.Evidence = GrowthEvidence(&shm)
	want = []string{
		"RssAnon 10.0 MiB → 12.0 MiB, RssFile 0 B → 0 B, RssShmem 0 B → 40.0 MiB: shmem grew most (tmpfs files, shared memory): no allocator holds it; look at its tmpfs files and shared segments",
		"allocator: no allocator evidence: open /proc/9/maps: permission denied",
		"what tells a leak from retention: nothing on the host: only the program's own heap profile",
	}
	if d := cmp.Diff(want, shm.Evidence); d != "" {
		t.Errorf("shmem (-want +got):\n%s", d)
	}
}

// TestGrowthThreadsStartedLater (issue 30.4): a glibc program that grows
// alone on one thread and then starts 4 more, in a container with a
// 0.5-CPU quota on 4 CPUs. The evidence was read when it began growing
// (1 thread); the thread count of every later sample says 5. The old
// reading said "one thread … memory the program still holds" (a leak)
// and never showed the quota; glibc sizes its arenas by the CPUs it sees
// (8 × 4 = 32), not by the quota.
func TestGrowthThreadsStartedLater(t *testing.T) {
	var gs memstate.GrowthSeries
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i := range 21 {
		threads := 1
		if i >= 5 {
			threads = 5
		}
		gs.Add(t0.Add(time.Duration(i)*time.Minute), []memstate.ProcRSS{{PID: 700, StartTicks: 9, Comm: "worker",
			AnonBytes: uint64(10+4*i) << 20, Threads: threads}})
	}
	gr := gs.Fit(memstate.DefaultGrowthOptions())
	if len(gr) != 1 || !gr[0].Growing || gr[0].ThreadsFirst != 1 || gr[0].ThreadsMax != 5 {
		t.Fatalf("growth %+v; want one growing process, threads 1 first, 5 at most", gr)
	}
	g := gr[0]
	g.AttachRetention(&memstate.Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 4, CPUQuota: 0.5})
	g.Evidence = GrowthEvidence(&g)
	want := []string{
		"threads: 1 when it began growing, up to 5 later (/proc/PID/status Threads each sample); the reading uses 5",
		"allocator: glibc malloc, 5 threads, up to 32 arenas on 4 CPUs online (glibc counts these, not the cgroup's 0.5-CPU quota): freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2",
	}
	if d := cmp.Diff(want, g.Evidence[1:3]); d != "" {
		t.Errorf("evidence (-want +got):\n%s", d)
	}
	if g.Retention.Threads != 5 || g.Retention.ArenasMax != 32 {
		t.Errorf("retention %+v; want 5 threads, 32 arenas", *g.Retention)
	}
	// A one-thread process under a quota is told the quota too.
	var one memstate.ProcGrowth
	one.AttachRetention(&memstate.Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 4, CPUQuota: 0.5})
	if reading := RetentionReading(one.Retention); !strings.HasSuffix(reading, "; threads it starts later may take up to 32 arenas on 4 CPUs online (glibc counts these, not the cgroup's 0.5-CPU quota)") {
		t.Errorf("one-thread reading %q does not say the quota and the CPUs glibc counts", reading)
	}
}
