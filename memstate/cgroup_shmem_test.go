package memstate

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// host618Shmem is a v1 memory cgroup of this CI host (6.18, 4 KiB pages)
// holding page cache and tmpfs data: see testdata/SOURCE.
const host618Shmem = "testdata/host618-shmem/sys/fs/cgroup/memory/memdiag-mem-shmemfix"

func TestCgroupV1CacheAndShmem(t *testing.T) {
	cg, ok, err := readV1(host618Shmem, "/memdiag-mem-shmemfix", filepath.Join(t.TempDir(), "none"), u64(0))
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
		// SwapFree passed as 0: the tmpfs pages stay.
		PinnedBytes: 39800832,
		Failcnt:     u64(241), OOMKills: u64(0), PeakBytes: u64(134205440), // memory.max_usage_in_bytes
		NearLimit: true, MostlyCache: true,
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
	// Its note and the host verdict's words: words_test.go.
}

func TestCgroupV2Sources(t *testing.T) {
	cgs, err := cgroupsOf(t, uml61Fixture(t))
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

// TestCgroupV1KmemAndProtections reads a real v1 group of this CI host
// with a memsw limit, a soft limit, kernel memory and tmpfs data
// (testdata/SOURCE, host618-protfix).
func TestCgroupV1KmemAndProtections(t *testing.T) {
	const dir = "testdata/host618-protfix/sys/fs/cgroup/memory/memdiag-mem-protfix"
	cg, ok, err := readV1(dir, "/memdiag-mem-protfix", filepath.Join(t.TempDir(), "none"), u64(0)) // meminfo SwapFree 0 kB
	if err != nil || !ok {
		t.Fatalf("readV1 = %v, %v", ok, err)
	}
	want := Cgroup{
		Path: "/memdiag-mem-protfix", Version: 1,
		UsageBytes: 94396416, LimitBytes: u64(128 << 20), SwapBytes: u64(0),
		FileBytes: 92311552, ShmemBytes: 25165824, // the 24 MiB written to the tmpfs
		ActiveFileBytes: 28672, InactiveFileBytes: 67117056,
		DirtyBytes:         67117056, // the 64 MiB file, just written
		CacheBytes:         92311552 - 25165824,
		WorkingSetBytes:    94396416 - 67117056,
		UnreclaimableBytes: 25165824,
		KernelBytes:        u64(1900544),           // memory.kmem.usage_in_bytes
		SoftLimitBytes:     u64(64 << 20),          // memory.soft_limit_in_bytes
		SwapLimitBytes:     u64(160<<20 - 128<<20), // memsw.limit − limit
		Swappiness:         u64(60),
		// No free swap: the tmpfs pages cannot leave; v1 kmem is not split,
		// so it is not counted.
		SwapRoomBytes: 0, PinnedBytes: 25165824,
		Failcnt: u64(0), OOMKills: u64(0), PeakBytes: u64(95965184), // 72 % of the limit: no history said
		MostlyCache: true,
	}
	if d := cmp.Diff(want, cg, ignoreSources); d != "" {
		t.Errorf("readV1 (-want +got):\n%s", d)
	}
	for field, src := range map[string]string{
		"kernel_bytes":     "memory.kmem.usage_in_bytes",
		"soft_limit_bytes": "memory.soft_limit_in_bytes",
		"swap_limit_bytes": "min(memory.memsw.limit_in_bytes, memory.stat hierarchical_memsw_limit) − limit",
		"pinned_bytes":     "total_rss + total_shmem − swap room (v1 does not split kmem into reclaimable and not)",
	} {
		if cg.Sources[field] != src {
			t.Errorf("Sources[%q] = %q, want %q", field, cg.Sources[field], src)
		}
	}
	// With a host of ample free swap, the group's own reclaim may fill
	// its swap allowance, memsw.limit − limit = 32 MiB, not the 70 MiB
	// memsw has left above its usage (167772160 − 94212096): at the
	// memsw limit the kernel reclaims without swapping.
	ample, ok, err := readV1(dir, "/memdiag-mem-protfix", filepath.Join(t.TempDir(), "none"), u64(1<<30))
	if err != nil || !ok {
		t.Fatalf("readV1 = %v, %v", ok, err)
	}
	if ample.SwapRoomBytes != 32<<20 || ample.PinnedBytes != 0 {
		t.Errorf("ample host swap: SwapRoomBytes, PinnedBytes = %d, %d; want %d, 0", ample.SwapRoomBytes, ample.PinnedBytes, 32<<20)
	}
	// Near its limit with 20 MiB of free swap on the host, the host's
	// swap bounds what swap can take.
	cg.UsageBytes = 125 << 20
	judge(&cg, u64(20<<20), u64(32<<20))
	if cg.SwapRoomBytes != 20<<20 || cg.PinnedBytes != 25165824-20<<20 {
		t.Errorf("SwapRoomBytes, PinnedBytes = %d, %d; want %d, %d", cg.SwapRoomBytes, cg.PinnedBytes, 20<<20, 25165824-20<<20)
	}
	zero := uint64(0)
	cg.Swappiness = &zero
	judge(&cg, u64(20<<20), nil)
	if cg.PinnedBytes != 25165824 || cg.SwapRoomBytes != 0 || !cg.NearLimit {
		t.Errorf("swappiness 0: PinnedBytes %d, SwapRoomBytes %d, NearLimit %v", cg.PinnedBytes, cg.SwapRoomBytes, cg.NearLimit)
	}
}
