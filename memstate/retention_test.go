package memstate

import (
	"debug/buildinfo"
	"os"
	"runtime"
	"strings"
	"testing"

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
	// MALLOC_ARENA_MAX wins over 8 × CPUs; the suggestion is the quota
	// rounded up, at least 2. The reading's words: report/mem.
	r := &Retention{Allocators: []string{"glibc"}, Threads: 4, Env: want, CPUsOnline: 8, CPUQuota: 2}
	r.derive()
	if r.ArenasMax != 4 || !r.GlibcOnly() || r.ArenaSuggestion() != 2 || r.Reading != "" {
		t.Errorf("%+v: want 4 arenas, glibc alone, suggestion 2, no words", r)
	}
	r.Env = map[string]string{"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1:glibc.malloc.arena_max=3"}
	if r.derive(); r.ArenasMax != 3 {
		t.Errorf("GLIBC_TUNABLES arena_max=3: ArenasMax %d", r.ArenasMax)
	}
	r = &Retention{Allocators: []string{"glibc", "jemalloc"}, Go: true, Threads: 12, CPUsOnline: 2, ArenasMax: 16}
	r.derive()
	if r.ArenasMax != 0 || r.GlibcOnly() || cmp.Diff([]string{"jemalloc"}, r.OtherAllocators()) != "" || r.ArenaSuggestion() != 2 {
		t.Errorf("%+v: want no glibc arenas (jemalloc mapped), jemalloc the other allocator, suggestion 2", r)
	}
}

// TestAttachRetention: a growth finding takes a copy of the recorded
// evidence, its thread count raised to the most seen since (keeping the
// count it was read with) and its arenas derived again; none recorded
// leaves it nil.
func TestAttachRetention(t *testing.T) {
	rec := &Retention{Allocators: []string{"glibc"}, Threads: 1, CPUsOnline: 4, Reading: "as recorded"}
	g := ProcGrowth{ThreadsMax: 5}
	g.AttachRetention(rec)
	if g.Retention == rec || g.Retention.Threads != 5 || g.ThreadsAtGrowth != 1 || g.Retention.ArenasMax != 32 || g.Retention.Reading != "" {
		t.Errorf("attached %+v (threads at growth %d); want a copy, 5 threads, read with 1, 32 arenas, no words", g.Retention, g.ThreadsAtGrowth)
	}
	if rec.Threads != 1 || rec.Reading != "as recorded" {
		t.Errorf("the recorded evidence changed: %+v", rec)
	}
	g.AttachRetention(nil)
	if g.Retention != nil || g.ThreadsAtGrowth != 0 {
		t.Errorf("none recorded: %+v, %d", g.Retention, g.ThreadsAtGrowth)
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
	if !r.Go || r.Threads < 2 || r.CPUsOnline < runtime.NumCPU() || r.Unread != "" {
		t.Errorf("RetentionOf(self) = %+v; want a Go program with its threads and at least the %d CPUs it may run on", r, runtime.NumCPU())
	}
	if _, err := c.RetentionOf(os.Getpid(), stat.Starttime+1); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("wrong start time: err %v, want refused", err)
	}
}
