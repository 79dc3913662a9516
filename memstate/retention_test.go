package memstate

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	if r.ArenasMax != 4 || r.Reading != "glibc malloc, 4 threads, up to 4 arenas on a 2-CPU quota: freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=2" {
		t.Errorf("%+v", r)
	}
	r = &Retention{Allocators: []string{"glibc", "jemalloc"}, Go: true, Threads: 12, CPUsOnline: 2}
	read(r)
	if r.ArenasMax != 0 || r.Reading != "jemalloc mapped: it returns freed memory on its own schedule (decay/release settings); its own statistics tell held from cached memory; a Go program: runtime metrics (heap profile, /memory/classes) do not see cgo or C-library allocations; anon beyond them is outside the Go heap" {
		t.Errorf("%+v", r)
	}
}
