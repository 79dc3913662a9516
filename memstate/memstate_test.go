package memstate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/psi"
)

const host618 = "testdata/host618" // see testdata/SOURCE

func u64(v uint64) *uint64 { return &v }

// fixture opens host618 with statfs(2) replaced by the figures recorded at
// capture time (testdata/host618-statfs.txt).
func fixture(t *testing.T) *Collector {
	t.Helper()
	c, err := NewCollector(host618)
	if err != nil {
		t.Fatal(err)
	}
	c.Statfs = func(p string) (uint64, uint64, error) {
		switch p {
		case filepath.Join(host618, "/dev/shm"):
			return 6171023 * 4096, 6168975 * 4096, nil
		case filepath.Join(host618, "/sys/fs/cgroup"):
			return 3085511 * 4096, 3085511 * 4096, nil
		}
		return 0, 0, os.ErrNotExist
	}
	return c
}

func TestHost(t *testing.T) {
	h, warn, err := fixture(t).Host()
	if err != nil || warn != nil {
		t.Fatalf("Host: %v %v", err, warn)
	}
	const k = 1024 // /proc/meminfo's kB is KiB
	want := Host{
		TotalBytes: 24684092 * k, FreeBytes: 22807592 * k, AvailableBytes: 24119332 * k,
		BuffersBytes: 245832 * k, CachedBytes: 1209476 * k,
		ActiveAnonBytes: 1588 * k, InactiveAnonBytes: 92260 * k,
		ActiveFileBytes: 832568 * k, InactiveFileBytes: 605680 * k,
		UnevictableBytes: 19852 * k,
		DirtyBytes:       18072 * k, WritebackBytes: 0, ShmemBytes: 16956 * k,
		SlabReclaimableBytes: 164388 * k, SlabUnreclaimableBytes: 27968 * k,
		KernelStackBytes: 1916 * k, PageTablesBytes: 3000 * k,
		SwapTotalBytes: 0, SwapFreeBytes: 0, SwapCachedBytes: 0,
		Tmpfs: []TmpfsMount{
			// /dev/shm is mounted twice (mount IDs 25 and 30); listed once.
			{MountPoint: "/dev/shm", SizeBytes: 25276510208, UsedBytes: 8388608},
			{MountPoint: "/sys/fs/cgroup", SizeBytes: 12638253056, UsedBytes: 0},
		},
	}
	if d := cmp.Diff(want, h); d != "" {
		t.Errorf("Host (-want +got):\n%s", d)
	}
}

func TestHostMissingFields(t *testing.T) {
	// A 3.10-era meminfo has no MemAvailable (added in 3.14).
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755)
	os.WriteFile(filepath.Join(dir, "proc/meminfo"), []byte("MemTotal: 100 kB\nMemFree: 50 kB\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "proc/self/mountinfo"), nil, 0o644)
	c, err := NewCollector(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Host()
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalBytes != 102400 || h.FreeBytes != 51200 {
		t.Errorf("total/free = %d/%d, want 102400/51200", h.TotalBytes, h.FreeBytes)
	}
	if len(h.Missing) == 0 || h.Missing[0] != "MemAvailable" {
		t.Errorf("Missing = %v, want MemAvailable first", h.Missing)
	}
}

// TestHostKBPast64Bits: procfs multiplies a meminfo kB value by 1024
// without checking it fits; a value past 2^64 bytes (a file under --root)
// is an error naming the file and the field, not a wrapped size.
func TestHostKBPast64Bits(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755)
	// 2^54 kB = 2^64 bytes: wraps to 0 in procfs's MemTotalBytes.
	os.WriteFile(filepath.Join(dir, "proc/meminfo"), []byte("MemTotal: 18014398509481984 kB\nMemFree: 50 kB\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "proc/self/mountinfo"), nil, 0o644)
	c, err := NewCollector(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := c.Host()
	if err == nil {
		t.Fatalf("Host = total %d bytes, want an error", h.TotalBytes)
	}
	if msg := err.Error(); !strings.Contains(msg, "proc/meminfo") || !strings.Contains(msg, "MemTotal: 18014398509481984 kB is past 2^64 bytes") {
		t.Errorf("error = %q, want the file and the field named", msg)
	}
}

func TestProcs(t *testing.T) {
	procs, scan, err := fixture(t).Procs(0)
	if err != nil {
		t.Fatal(err)
	}
	const k = 1024
	want := []Proc{
		{
			PID: 12762, Comm: "memdiag-mem-hog",
			Cmdline:  "/tmp/memdiag-mem-hog -write 209715200 -file /var/tmp/memdiag-mem-fixture.dat -read-passes 2 -anon 16777216 -hold 120s",
			RSSBytes: 22280 * k, RSSAnonBytes: 20620 * k, RSSFileBytes: 1660 * k, RSSShmemBytes: 0, SwapBytes: 0,
			PSSBytes: u64(22273 * k), Cgroup: "/memdiag-mem-fixture",
		},
		{
			PID: 13604, Comm: "sleep", Cmdline: "sleep 300",
			RSSBytes: 1732 * k, RSSAnonBytes: 108 * k, RSSFileBytes: 1624 * k,
			PSSBytes: u64(235 * k), Cgroup: "/process_api/69445e46a0cbb4b063867bd9193a0d9e",
		},
	}
	if d := cmp.Diff(want, procs, cmpopts.IgnoreFields(Proc{}, "Retention")); d != "" {
		t.Errorf("Procs (-want +got):\n%s", d)
	}
	if d := cmp.Diff(ProcScan{Processes: 2}, scan); d != "" {
		t.Errorf("ProcScan (-want +got):\n%s", d)
	}
	top, _, err := fixture(t).Procs(1)
	if err != nil || len(top) != 1 || top[0].PID != 12762 {
		t.Errorf("Procs(1) = %v, %v; want only PID 12762", top, err)
	}
}

func TestProcsNoSmapsRollup(t *testing.T) {
	// Without smaps_rollup and smaps (kernel < 4.14 without access, or
	// another user's process), PSS is absent, not zero.
	dir := t.TempDir()
	p := filepath.Join(dir, "proc/42")
	os.MkdirAll(p, 0o755)
	b, err := os.ReadFile(filepath.Join(host618, "proc/13604/status"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p, "status"), b, 0o644)
	c, err := NewCollector(dir)
	if err != nil {
		t.Fatal(err)
	}
	procs, scan, err := c.Procs(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 1 || procs[0].PSSBytes != nil || procs[0].RSSBytes != 1732*1024 || scan.NoPSS != 1 {
		t.Errorf("procs = %+v, scan = %+v; want one with RSS 1732 KiB, PSS nil, NoPSS 1", procs, scan)
	}
}

// hostOf is the Host c reads, which Cgroups takes for the host's free
// swap.
func hostOf(t *testing.T, c *Collector) *Host {
	t.Helper()
	h, _, err := c.Host()
	if err != nil {
		t.Fatal(err)
	}
	return &h
}

// cgroupsOf is c.Cgroups with the Host c reads.
func cgroupsOf(t *testing.T, c *Collector) ([]Cgroup, error) {
	t.Helper()
	return c.Cgroups(hostOf(t, c))
}

// ignoreSources leaves Cgroup.Sources out of a comparison; the
// host618-shmem test checks them.
var ignoreSources = cmpopts.IgnoreFields(Cgroup{}, "Sources")

func TestCgroupsV1Hybrid(t *testing.T) {
	cgs, err := cgroupsOf(t, fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []Cgroup{
		{
			// The root: memory.limit_in_bytes 9223372036854771712 is
			// PAGE_COUNTER_MAX, no limit. Swap from memory.stat total_swap.
			Path: "/", Version: 1, UsageBytes: 1611669504, SwapBytes: u64(0),
			AnonBytes: 121446400, FileBytes: 1490845696, ShmemBytes: 17457152,
			MappedBytes: 53706752, DirtyBytes: 18882560, WritebackBytes: 0,
			CacheBytes:      1490845696 - 17457152, // total_cache − total_shmem
			ActiveFileBytes: 852910080, InactiveFileBytes: 620478464,
			WorkingSetBytes:    1611669504 - 620478464, // usage − total_inactive_file
			UnreclaimableBytes: 121446400 + 17457152,   // total_rss + total_shmem
			UnevictableBytes:   20369408,               // total_unevictable
			// No swap on the host (SwapFree 0): all anon and shmem stays.
			PinnedBytes: 121446400 + 17457152,
			Failcnt:     u64(0),
			PSI: &psi.Resource{
				Some: psi.Line{Avg10: 0.17, Avg60: 0.41, Avg300: 0.17, Total: 795019 * time.Microsecond},
				Full: &psi.Line{Avg10: 0.14, Avg60: 0.28, Avg300: 0.10, Total: 548285 * time.Microsecond},
			},
			MostlyCache: true,
		},
		{
			Path: "/memdiag-mem-fixture", Version: 1, UsageBytes: 65687552,
			LimitBytes: u64(64 << 20), SwapBytes: u64(0),
			AnonBytes: 21114880, FileBytes: 44040192, CacheBytes: 44040192,
			InactiveFileBytes: 44040192, WorkingSetBytes: 65687552 - 44040192, UnreclaimableBytes: 21114880,
			PinnedBytes: 21114880,
			Failcnt:     u64(1015), OOMKills: u64(0), PeakBytes: u64(64 << 20), // memory.max_usage_in_bytes
			PSI: &psi.Resource{
				Some: psi.Line{Avg10: 0.24, Avg60: 0.23, Avg300: 0.06, Total: 218663 * time.Microsecond},
				Full: &psi.Line{Avg10: 0.24, Avg60: 0.23, Avg300: 0.06, Total: 212173 * time.Microsecond},
			},
			NearLimit: true, MostlyCache: true,
		},
	}
	if d := cmp.Diff(want, cgs, ignoreSources); d != "" {
		t.Errorf("Cgroups (-want +got):\n%s", d)
	}
}

// cgroupsV2Gopsutil is testdata/cgroup2-gopsutil's groups, read with
// host618's meminfo.
func cgroupsV2Gopsutil(t *testing.T) []Cgroup {
	t.Helper()
	c, err := NewCollector(host618) // only its proc/ is needed to construct
	if err != nil {
		t.Fatal(err)
	}
	c.root = "testdata/cgroup2-gopsutil"
	cgs, err := c.Cgroups(hostOf(t, c))
	if err != nil {
		t.Fatal(err)
	}
	return cgs
}

func TestCgroupsV2(t *testing.T) {
	cgs := cgroupsV2Gopsutil(t)
	want := []Cgroup{{
		Path:    "/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Version: 2, UsageBytes: 26591232, // memory.max "max": no limit
		AnonBytes: 10895360, FileBytes: 14278656, ShmemBytes: 0, MappedBytes: 9904128, CacheBytes: 14278656,
		ActiveFileBytes: 11796480, InactiveFileBytes: 2482176,
		WorkingSetBytes: 26591232 - 2482176, UnreclaimableBytes: 10895360,
		UnevictableBytes: 4096, KernelBytes: u64(1409024),
		SlabReclaimableBytes: u64(220088), SlabUnreclaimableBytes: u64(479392), // slab 699480
		// host618's meminfo (no swap): anon stays, with kernel − slab_reclaimable.
		PinnedBytes: 10895360 + 1409024 - 220088,
		Events:      map[string]uint64{"low": 0, "high": 0, "max": 3, "oom": 0, "oom_kill": 0, "oom_group_kill": 0},
		OOMKills:    u64(0), MostlyCache: true,
		// memory.max is "max" now, but memory.events max 3 says a limit
		// was hit; memory.peak 31875072.
		PeakBytes: u64(31875072),
	}}
	if d := cmp.Diff(want, cgs, ignoreSources); d != "" {
		t.Errorf("Cgroups (-want +got):\n%s", d)
	}
}

func TestJudge(t *testing.T) {
	// A v2 group at 95 % of a 64 MiB limit filled by anon memory.
	cg := Cgroup{Path: "/a", Version: 2, UsageBytes: 61 << 20, LimitBytes: u64(64 << 20), AnonBytes: 58 << 20, FileBytes: 3 << 20}
	judge(&cg, nil, nil)
	if !cg.NearLimit || cg.MostlyCache {
		t.Errorf("NearLimit, MostlyCache = %v, %v; want true, false", cg.NearLimit, cg.MostlyCache)
	}
	if cg.PinnedBytes != 58<<20 || cg.CacheBytes != 3<<20 || cg.Stalling {
		t.Errorf("PinnedBytes, CacheBytes, Stalling = %d, %d, %v; want %d, %d, false", cg.PinnedBytes, cg.CacheBytes, cg.Stalling, 58<<20, 3<<20)
	}
	// Mostly cache, but the group's PSI says its tasks stall on reclaim.
	cg = Cgroup{UsageBytes: 63 << 20, LimitBytes: u64(64 << 20), AnonBytes: 3 << 20, FileBytes: 60 << 20,
		PSI: &psi.Resource{Some: psi.Line{Avg10: 2.17}}}
	judge(&cg, nil, nil)
	if !cg.NearLimit || !cg.MostlyCache || !cg.Stalling || cg.PinnedBytes != 3<<20 {
		t.Errorf("NearLimit, MostlyCache, Stalling, PinnedBytes = %v, %v, %v, %d; want true, true, true, %d", cg.NearLimit, cg.MostlyCache, cg.Stalling, cg.PinnedBytes, 3<<20)
	}
	// Shmem is file in memory.stat but not reclaimable cache.
	cg = Cgroup{UsageBytes: 60 << 20, LimitBytes: u64(64 << 20), FileBytes: 50 << 20, ShmemBytes: 40 << 20}
	judge(&cg, nil, nil)
	if cg.MostlyCache {
		t.Errorf("a group of shmem is not mostly cache: %+v", cg)
	}
	// Swap can take all the anon (free swap as the CI machine's
	// /proc/swaps read on 2026-12-06: a 1048572 KiB file, 5900 KiB used;
	// no swap limit on the v1 group): nothing must stay in RAM,
	// said so rather than "0 B cannot be reclaimed". The verdict says
	// the same.
	cg = Cgroup{Path: "/b", Version: 1, UsageBytes: 62 << 20, LimitBytes: u64(64 << 20), AnonBytes: 20 << 20, FileBytes: 42 << 20}
	judge(&cg, u64((1048572-5900)<<10), nil)
	if cg.PinnedBytes != 0 || cg.SwapRoomBytes != (1048572-5900)<<10 {
		t.Errorf("PinnedBytes, SwapRoomBytes = %d, %d; want 0, %d", cg.PinnedBytes, cg.SwapRoomBytes, (1048572-5900)<<10)
	}
	// 89 % of the limit is not within 10 % of it.
	cg = Cgroup{UsageBytes: 89, LimitBytes: u64(100)}
	judge(&cg, nil, nil)
	if cg.NearLimit {
		t.Errorf("89 of 100 flagged near limit")
	}
}

func TestCgroupsParseError(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "sys/fs/cgroup")
	os.MkdirAll(filepath.Join(g, "x"), 0o755)
	os.WriteFile(filepath.Join(g, "cgroup.controllers"), []byte("cpu memory\n"), 0o644)
	os.WriteFile(filepath.Join(g, "x/memory.current"), []byte("12\n"), 0o644)
	os.WriteFile(filepath.Join(g, "x/memory.stat"), []byte("anon 1\nfile x\n"), 0o644)
	c, _ := NewCollector(host618)
	c.root = dir
	_, err := c.Cgroups(hostOf(t, c))
	if err == nil || !strings.Contains(err.Error(), "x/memory.stat:2: malformed line") {
		t.Errorf("err = %v, want file:line of the bad memory.stat line", err)
	}
}

func TestCgroupsV1SwapFromStat(t *testing.T) {
	// Read live on this host: memsw.usage_in_bytes was 262144 above
	// usage_in_bytes (two files, two moments) on a host without swap.
	// memory.stat's total_swap (0) is the figure; memsw − usage only when
	// memory.stat lacks it.
	src := filepath.Join(host618, "sys/fs/cgroup/memory/memdiag-mem-fixture")
	dir := t.TempDir()
	g := filepath.Join(dir, "sys/fs/cgroup/memory")
	os.MkdirAll(g, 0o755)
	for _, f := range []string{"memory.usage_in_bytes", "memory.limit_in_bytes", "memory.stat"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(g, f), b, 0o644)
	}
	os.WriteFile(filepath.Join(g, "memory.memsw.usage_in_bytes"), []byte(strconv.Itoa(65687552+262144)+"\n"), 0o644)
	c, _ := NewCollector(host618)
	c.root = dir
	cgs, err := c.Cgroups(hostOf(t, c))
	if err != nil || len(cgs) != 1 {
		t.Fatalf("Cgroups = %+v, %v", cgs, err)
	}
	if cgs[0].SwapBytes == nil || *cgs[0].SwapBytes != 0 {
		t.Errorf("SwapBytes = %v, want 0 from total_swap", cgs[0].SwapBytes)
	}
	// Without total_swap in memory.stat, the difference is all there is.
	b, _ := os.ReadFile(filepath.Join(g, "memory.stat"))
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "total_swap ") {
			kept = append(kept, l)
		}
	}
	os.WriteFile(filepath.Join(g, "memory.stat"), []byte(strings.Join(kept, "\n")), 0o644)
	if cgs, err = c.Cgroups(hostOf(t, c)); err != nil || cgs[0].SwapBytes == nil || *cgs[0].SwapBytes != 262144 {
		t.Errorf("without total_swap: %+v, %v; want SwapBytes 262144", cgs, err)
	}
}

// TestHostMeminfoUnavailable: Host returns a *hostenv.Unavailable, never
// zeros, when <root>/proc/meminfo cannot say how much memory there is.
func TestHostMeminfoUnavailable(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"empty":       func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"missing":     func(p string) error { return nil },
		"directory":   func(p string) error { return os.Mkdir(p, 0o755) },
		"no MemTotal": func(p string) error { return os.WriteFile(p, []byte("MemFree: 4 kB\nDirty: 4 kB\n"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.Mkdir(filepath.Join(root, "proc"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, "proc", "meminfo")
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			c, err := NewCollector(root)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := c.Host()
			u := hostenv.As(err)
			if u == nil {
				t.Fatalf("Host() = %+v, %v; want a *hostenv.Unavailable", h, err)
			}
			if u.Path != p || !strings.Contains(err.Error(), "unknown") {
				t.Errorf("error %q: want the path %s and \"unknown\"", err, p)
			}
		})
	}
	// A file with MemTotal alone is read: the rest is listed as missing.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "meminfo"), []byte("MemTotal: 1024 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(root)
	if err != nil {
		t.Fatal(err)
	}
	if h, _, err := c.Host(); err != nil || h.TotalBytes != 1<<20 || len(h.Missing) == 0 {
		t.Errorf("MemTotal alone: %+v, %v", h, err)
	}
}
