package memstate

import (
	"debug/buildinfo"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/process"
)

func TestRetentionEvidence(t *testing.T) {
	// Real maps and environ of the retain program (testdata/retention/SOURCE).
	maps, err := os.ReadFile("testdata/retention/retain.maps")
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile("testdata/retention/retain.environ")
	if err != nil {
		t.Fatal(err)
	}
	if got := allocators(maps); cmp.Diff([]string{"glibc"}, got) != "" {
		t.Errorf("allocators = %v", got)
	}
	// Only allocator variables; GLIBC_TUNABLES without its rtld part;
	// PATH and the secret never.
	want := map[string]string{"MALLOC_ARENA_MAX": "4", "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}
	if d := cmp.Diff(want, allocatorEnv(env)); d != "" {
		t.Errorf("allocatorEnv (-want +got):\n%s", d)
	}
	if n := countCPUs("0-3,6,8-9"); n != 7 {
		t.Errorf("countCPUs = %d, want 7", n)
	}
	r := &Retention{Allocators: []string{"glibc"}, Threads: 4, Env: want, CPUsOnline: 8, CPUQuota: 2}
	read(r)
	if r.ArenasMax != 4 || r.Reading != "glibc malloc, 4 threads, up to 4 arenas on 8 CPUs online (glibc counts these, not the cgroup's 2-CPU quota): freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2" {
		t.Errorf("%+v", r)
	}
	r = &Retention{Allocators: []string{"glibc", "jemalloc"}, Go: true, Threads: 12, CPUsOnline: 2}
	read(r)
	if r.ArenasMax != 0 || r.Reading != "jemalloc mapped: it returns freed memory on its own schedule (decay/release settings); its own statistics tell held from cached memory; a Go program: runtime metrics (heap profile, /memory/classes) do not see cgo or C-library allocations; anon beyond them is outside the Go heap" {
		t.Errorf("%+v", r)
	}
}

// TestGrowthEvidence: the lines a growth finding carries for the evidence
// of the retain program (glibc, 9 threads, 2 CPUs), the leak program
// (glibc, one thread, MALLOC_ARENA_MAX set), a Go program, none recorded,
// and a process whose shmem grew.
func TestGrowthEvidence(t *testing.T) {
	g := ProcGrowth{AnonFirstBytes: 10 << 20, AnonLastBytes: 90 << 20, FileFirstBytes: 2 << 20, FileLastBytes: 2 << 20}
	retain := g
	retain.AddEvidence(&Retention{Allocators: []string{"glibc"}, Threads: 9, CPUsOnline: 2})
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
	leak.AddEvidence(&Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 2, Env: map[string]string{"MALLOC_ARENA_MAX": "2", "MALLOC_TRIM_THRESHOLD_": "0"}})
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
	goProg.AddEvidence(&Retention{Go: true, Threads: 7, CPUsOnline: 2, Env: map[string]string{"GOMEMLIMIT": "1GiB"}})
	if len(goProg.Evidence) != 4 || goProg.Evidence[2] != "allocator settings in its environment: GOMEMLIMIT=1GiB" ||
		!strings.HasPrefix(goProg.Evidence[3], "what tells a leak from retention: the Go runtime's heap (runtime/metrics /memory/classes/heap/objects:bytes, pprof heap) against RssAnon") {
		t.Errorf("Go program: %q", goProg.Evidence)
	}
	none := g
	none.AddEvidence(nil)
	if len(none.Evidence) != 2 || none.Retention != nil || !strings.HasPrefix(none.Evidence[1], "no allocator evidence recorded") {
		t.Errorf("no evidence: %q", none.Evidence)
	}
	shm := ProcGrowth{AnonFirstBytes: 10 << 20, AnonLastBytes: 12 << 20, ShmemFirstBytes: 0, ShmemLastBytes: 40 << 20}
	shm.AddEvidence(&Retention{Reading: "no allocator evidence: open /proc/9/maps: permission denied"})
	want = []string{
		"RssAnon 10.0 MiB → 12.0 MiB, RssFile 0 B → 0 B, RssShmem 0 B → 40.0 MiB: shmem grew most (tmpfs files, shared memory): no allocator holds it; look at its tmpfs files and shared segments",
		"allocator: no allocator evidence: open /proc/9/maps: permission denied",
		"what tells a leak from retention: nothing on the host: only the program's own heap profile",
	}
	if d := cmp.Diff(want, shm.Evidence); d != "" {
		t.Errorf("shmem (-want +got):\n%s", d)
	}
}

// TestRetentionOfSelf reads this test process's evidence through /proc:
// a Go program with the thread count its status gives; a wrong start
// time (a reused PID) is refused.
func TestRetentionOfSelf(t *testing.T) {
	c, err := NewCollector("/")
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.fs.Self()
	if err != nil {
		t.Fatal(err)
	}
	stat, err := st.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.RetentionOf(os.Getpid(), stat.Starttime)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Go {
		f, err := process.OpenExe("/proc", os.Getpid())
		if err == nil {
			_, err = buildinfo.Read(f)
			f.Close()
		}
		t.Logf("not read as a Go program: %v", err)
	}
	if !r.Go || r.Threads < 2 || r.CPUsOnline < runtime.NumCPU() || r.Reading == "" {
		t.Errorf("RetentionOf(self) = %+v; want a Go program with its threads and at least the %d CPUs it may run on", r, runtime.NumCPU())
	}
	if _, err := c.RetentionOf(os.Getpid(), stat.Starttime+1); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("wrong start time: err %v, want refused", err)
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
	var gs GrowthSeries
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i := range 21 {
		threads := 1
		if i >= 5 {
			threads = 5
		}
		gs.Add(t0.Add(time.Duration(i)*time.Minute), []ProcRSS{{PID: 700, StartTicks: 9, Comm: "worker",
			AnonBytes: uint64(10+4*i) << 20, Threads: threads}})
	}
	gr := gs.Fit(DefaultGrowthOptions())
	if len(gr) != 1 || !gr[0].Growing || gr[0].ThreadsFirst != 1 || gr[0].ThreadsMax != 5 {
		t.Fatalf("growth %+v; want one growing process, threads 1 first, 5 at most", gr)
	}
	g := gr[0]
	g.AddEvidence(&Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 4, CPUQuota: 0.5})
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
	one := &Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 4, CPUQuota: 0.5}
	read(one)
	if !strings.HasSuffix(one.Reading, "; threads it starts later may take up to 32 arenas on 4 CPUs online (glibc counts these, not the cgroup's 0.5-CPU quota)") {
		t.Errorf("one-thread reading %q does not say the quota and the CPUs glibc counts", one.Reading)
	}
}
