package memstate

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// host618Shmem is a v1 memory cgroup of this CI host (6.18, 4 KiB pages)
// holding page cache and tmpfs data: see testdata/SOURCE.
const host618Shmem = "testdata/host618-shmem/sys/fs/cgroup/memory/memdiag-mem-shmemfix"

func TestCgroupV1CacheAndShmem(t *testing.T) {
	cg, ok, err := readV1(host618Shmem, "/memdiag-mem-shmemfix", filepath.Join(t.TempDir(), "none"))
	if err != nil || !ok {
		t.Fatalf("readV1 = %v, %v", ok, err)
	}
	// Figures from memory.stat, checked by hand: total_cache 132075520
	// counts the 37.96 MiB of tmpfs (total_shmem 39800832, on the anon
	// LRU: total_inactive_anon is the same 39800832) with the 88 MiB of
	// file LRU (total_inactive_file 92274688, total_active_file 0).
	want := Cgroup{
		Path: "/memdiag-mem-shmemfix", Version: 1,
		UsageBytes: 132202496, LimitBytes: u64(128 << 20), SwapBytes: u64(2142208),
		AnonBytes: 0, FileBytes: 132075520, ShmemBytes: 39800832,
		ActiveFileBytes: 0, InactiveFileBytes: 92274688,
		CacheBytes:         132075520 - 39800832, // 88.0 MiB
		WorkingSetBytes:    132202496 - 92274688, // 38.1 MiB
		UnreclaimableBytes: 0 + 39800832,
		Failcnt:            u64(241), OOMKills: u64(0),
		NearLimit: true, MostlyCache: true,
		Note: "98 % of its limit, mostly page cache (88.0 MiB, reclaimable), 38.0 MiB of anon + shmem not reclaimable without swap (anon 0 B, shmem 38.0 MiB: 30 % of the limit), working set (usage − inactive file) 38.1 MiB: fine unless reclaiming it stalls the group's tasks; no memory.pressure for it (a v1 group without a v2 twin): watch memory.failcnt and its refaults instead",
	}
	if d := cmp.Diff(want, cg, ignoreSources); d != "" {
		t.Errorf("readV1 (-want +got):\n%s", d)
	}
	for field, src := range map[string]string{
		"anon_bytes":          "memory.stat total_rss",
		"file_bytes":          "memory.stat total_cache",
		"shmem_bytes":         "memory.stat total_shmem",
		"active_file_bytes":   "memory.stat total_active_file",
		"inactive_file_bytes": "memory.stat total_inactive_file",
		"swap_bytes":          "memory.stat total_swap",
		"working_set_bytes":   "memory.usage_in_bytes − memory.stat total_inactive_file",
	} {
		if cg.Sources[field] != src {
			t.Errorf("Sources[%q] = %q, want %q", field, cg.Sources[field], src)
		}
	}

	// The host verdict names the tmpfs part, not only the cache.
	v := Verdict{}
	v.explain([]Cgroup{cg}, OOMReport{}, time.UTC)
	if want := "/memdiag-mem-shmemfix (98 % of its limit, mostly reclaimable cache, but 38.0 MiB of anon/shmem is not)"; !strings.Contains(v.Sentence, want) {
		t.Errorf("Sentence = %q, want it to contain %q", v.Sentence, want)
	}
}

func TestCgroupV2Sources(t *testing.T) {
	cgs, err := uml61Fixture(t).Cgroups()
	if err != nil {
		t.Fatal(err)
	}
	for field, src := range map[string]string{
		"anon_bytes":          "memory.stat anon",
		"file_bytes":          "memory.stat file",
		"shmem_bytes":         "memory.stat shmem",
		"active_file_bytes":   "memory.stat active_file",
		"inactive_file_bytes": "memory.stat inactive_file",
		"working_set_bytes":   "memory.current − memory.stat inactive_file",
	} {
		if cgs[0].Sources[field] != src {
			t.Errorf("Sources[%q] = %q, want %q", field, cgs[0].Sources[field], src)
		}
	}
}
