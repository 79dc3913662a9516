package memstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// uml61 is a root captured from a real Linux 6.1.176 (Debian's
// user-mode-linux) with a pure cgroup v2 hierarchy; see testdata/SOURCE.
const uml61 = "testdata/uml61"

func uml61Fixture(t *testing.T) *Collector {
	t.Helper()
	c, err := NewCollector(uml61)
	if err != nil {
		t.Fatal(err)
	}
	c.Statfs = func(p string) (uint64, uint64, error) {
		if p == filepath.Join(uml61, "/run") { // testdata/uml61-statfs.txt
			return 21718 * 4096, 21718 * 4096, nil
		}
		return 0, 0, os.ErrNotExist
	}
	return c
}

func TestHostUML61(t *testing.T) {
	h, warn, err := uml61Fixture(t).Host()
	if err != nil || warn != nil {
		t.Fatalf("Host: %v %v", err, warn)
	}
	const k = 1024
	want := Host{
		TotalBytes: 173748 * k, FreeBytes: 130424 * k, AvailableBytes: 154900 * k,
		BuffersBytes: 40 * k, CachedBytes: 28596 * k,
		ActiveAnonBytes: 4 * k, InactiveAnonBytes: 260 * k,
		ActiveFileBytes: 1828 * k, InactiveFileBytes: 26808 * k,
		SlabReclaimableBytes: 832 * k, SlabUnreclaimableBytes: 9856 * k,
		KernelStackBytes: 576 * k, PageTablesBytes: 68 * k,
		// 256 KiB of the 64 MiB swap device stayed in use after the
		// anon hog's group was emptied.
		SwapTotalBytes: 65532 * k, SwapFreeBytes: 65276 * k, SwapUsedBytes: 256 * k,
		Tmpfs: []TmpfsMount{{MountPoint: "/run", SizeBytes: 21718 * 4096}},
	}
	if d := cmp.Diff(want, h); d != "" {
		t.Errorf("Host (-want +got):\n%s", d)
	}
}

func TestCgroupsV2UML61(t *testing.T) {
	cgs, err := cgroupsOf(t, uml61Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	noEvents := func(high, max, oom, kill uint64) map[string]uint64 {
		return map[string]uint64{"low": 0, "high": high, "max": max, "oom": oom, "oom_kill": kill, "oom_group_kill": 0}
	}
	want := []Cgroup{
		{
			// 32 MiB memory.max, filled by a reader of a 128 MiB ext4 file.
			Path: "/memdiag-cache", Version: 2, UsageBytes: 33464320,
			LimitBytes: u64(32 << 20), SwapBytes: u64(0),
			AnonBytes: 5414912, FileBytes: 27627520, MappedBytes: 1265664, CacheBytes: 27627520,
			ActiveFileBytes: 1028096, InactiveFileBytes: 26587136,
			WorkingSetBytes: 33464320 - 26587136, UnreclaimableBytes: 5414912,
			// memory.stat kernel and slab_*; memory.min/low 0, swap.max "max".
			KernelBytes: u64(483328), SlabReclaimableBytes: u64(322840), SlabUnreclaimableBytes: u64(23144),
			// SwapFree 65276 KiB; anon all swappable, so what stays is
			// kernel − slab_reclaimable = 483328 − 322840.
			SwapRoomBytes: 65276 << 10, PinnedBytes: 160488,
			Events: noEvents(0, 22369, 0, 0), OOMKills: u64(0),
			NearLimit: true, MostlyCache: true,
			PeakBytes: u64(32 << 20),
		},
		{
			// memory.max 24 MiB, memory.high 20 MiB, a 40 MiB anon hog:
			// held at memory.high, the rest pushed to swap.
			Path: "/memdiag-anon", Version: 2, UsageBytes: 20754432,
			LimitBytes: u64(24 << 20), HighBytes: u64(20 << 20), SwapBytes: u64(24080384),
			AnonBytes: 19263488, FileBytes: 1011712, MappedBytes: 937984, CacheBytes: 1011712,
			ActiveFileBytes: 598016, InactiveFileBytes: 413696,
			WorkingSetBytes: 20754432 - 413696, UnreclaimableBytes: 19263488,
			KernelBytes: u64(237568), SlabReclaimableBytes: u64(4344), SlabUnreclaimableBytes: u64(23144),
			SwapRoomBytes: 65276 << 10, PinnedBytes: 237568 - 4344,
			Events: noEvents(84, 0, 0, 0), OOMKills: u64(0),
			NearHigh: true, PeakBytes: u64(21229568), // 84 % of memory.max: no history said
		},
		{
			// Its tail was OOM-killed; what is left is kernel memory.
			Path: "/memdiag-oom", Version: 2, UsageBytes: 12288, WorkingSetBytes: 12288,
			LimitBytes: u64(32 << 20), SwapBytes: u64(0),
			// memory.swap.max 0: swap can take nothing from this group.
			SwapLimitBytes: u64(0), SwapRoomBytes: 0,
			KernelBytes: u64(4096), SlabReclaimableBytes: u64(792), SlabUnreclaimableBytes: u64(3264),
			PinnedBytes: 4096 - 792,
			Events:      noEvents(0, 69, 1, 1), OOMKills: u64(1),
			// Issue 30 item 5: OOM-killed at its limit, near empty now.
			// Its usage (0 %) is not what it reached: memory.peak is the
			// limit, memory.events max 69 and oom 1 say it hit it.
			PeakBytes: u64(32 << 20),
		},
	}
	if d := cmp.Diff(want, cgs, ignoreSources); d != "" {
		t.Errorf("Cgroups (-want +got):\n%s", d)
	}
}

func TestProcsUML61(t *testing.T) {
	procs, scan, err := uml61Fixture(t).Procs(0)
	if err != nil {
		t.Fatal(err)
	}
	const k = 1024
	want := []Proc{
		{
			PID: 750, Comm: "hog", Cmdline: "/tmp/uml/hog -anon 41943040 -hold 30s",
			RSSBytes: 19732 * k, RSSAnonBytes: 18812 * k, RSSFileBytes: 920 * k, SwapBytes: 23244 * k,
			PSSBytes: u64(19729 * k), Cgroup: "/memdiag-anon",
		},
		{
			PID: 700, Comm: "hog", Cmdline: "/tmp/uml/hog -file /run/disk/data -read-passes 50",
			// RSS and PSS from smaps_rollup's one read: status's VmRSS
			// (6324 kB, read at another moment) was below this reading
			// process's PSS, as memdiag mem showed its own.
			RSSBytes: 6568 * k, RSSAnonBytes: 5328 * k, RSSFileBytes: 996 * k,
			PSSBytes: u64(6565 * k), Cgroup: "/memdiag-cache",
		},
	}
	for _, p := range procs {
		if p.PSSBytes != nil && *p.PSSBytes > p.RSSBytes {
			t.Errorf("PID %d: PSS %d above RSS %d", p.PID, *p.PSSBytes, p.RSSBytes)
		}
	}
	if d := cmp.Diff(want, procs, cmpopts.IgnoreFields(Proc{}, "Retention")); d != "" {
		t.Errorf("Procs (-want +got):\n%s", d)
	}
	if scan.Processes != 2 {
		t.Errorf("ProcScan = %+v, want 2 processes", scan)
	}
}

func TestParseKernelLogUML61(t *testing.T) {
	// Both kills of testdata/uml61/dev/kmsg: a v2 memcg kill, then a
	// global one ("global_oom" in the oom-kill: line) after swapoff.
	f, err := os.Open(filepath.Join(uml61, "dev/kmsg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	boot := time.Unix(1796131835, 0).UTC() // uml61/proc/stat btime
	got, err := parseKernelLog(f, "kmsg", boot)
	if err != nil {
		t.Fatal(err)
	}
	const k = 1024
	want := []OOMKill{
		{
			SinceBoot: 14170 * time.Millisecond, Time: boot.Add(14170 * time.Millisecond),
			PID: 800, Comm: "tail", UID: intp(0),
			TotalVMBytes: 35036 * k, AnonRSSBytes: 32612 * k, FileRSSBytes: 1136 * k,
			Constraint: "memcg", ConstraintRaw: "CONSTRAINT_MEMCG",
			OOMCgroup: "/memdiag-oom", TaskCgroup: "/memdiag-oom",
			CgroupUsageBytes: 32 << 20, CgroupLimitBytes: 32 << 20,
		},
		{
			SinceBoot: 17070 * time.Millisecond, Time: boot.Add(17070 * time.Millisecond),
			PID: 846, Comm: "tail", UID: intp(0),
			TotalVMBytes: 156904 * k, AnonRSSBytes: 154568 * k, FileRSSBytes: 964 * k,
			Constraint: "global", ConstraintRaw: "CONSTRAINT_NONE", TaskCgroup: "/",
		},
	}
	if d := cmp.Diff(want, got, reportFields); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// vmstat's oom_kill counts both: 1 before the global OOM, 2 after.
	for file, n := range map[string]string{"uml61/proc/vmstat": "oom_kill 1\n", "uml61-vmstat-after-global-oom": "oom_kill 2\n"} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil || !strings.Contains(string(b), n) {
			t.Errorf("%s: want %q (%v)", file, n, err)
		}
	}
}
