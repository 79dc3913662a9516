package memstate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/psi"
)

// nearLimitShare is the share of its limit from which a cgroup is flagged:
// within 10 % of it.
const nearLimitShare = 0.9

// mostlyCacheShare is the share of a cgroup's usage that must be page cache
// (file minus shmem) for memstate to call it "mostly cache".
const mostlyCacheShare = 0.5

// v1Unlimited: cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages in
// bytes (9223372036854771712 with 4 KiB pages); anything from 2^62 up is
// treated as unlimited.
const v1Unlimited = 1 << 62

// Cgroup is one memory cgroup, v1 or v2, in bytes.
// Sources: v2 <group>/memory.{current,max,high,swap.current,stat,events,
// pressure} (https://docs.kernel.org/admin-guide/cgroup-v2.html#memory);
// v1 <group>/memory.{usage_in_bytes,limit_in_bytes,memsw.usage_in_bytes,
// stat,failcnt,oom_control}
// (https://docs.kernel.org/admin-guide/cgroup-v1/memory.html).
type Cgroup struct {
	Path    string `json:"path"`    // relative to the hierarchy's mount, "/" for the root
	Version int    `json:"version"` // 1 or 2

	UsageBytes uint64 `json:"usage_bytes"` // v2 memory.current, v1 memory.usage_in_bytes (includes page cache)
	// LimitBytes is the limit in force: v2 memory.max, v1 the smaller of
	// memory.limit_in_bytes and memory.stat hierarchical_memory_limit (a
	// parent's limit applies to its children). nil: no limit.
	LimitBytes *uint64 `json:"limit_bytes,omitempty"`
	HighBytes  *uint64 `json:"high_bytes,omitempty"` // v2 memory.high (throttling point); nil: "max" or v1
	// SwapBytes is v2 memory.swap.current, v1 memory.stat total_swap (or,
	// without it, memory.memsw.usage_in_bytes − memory.usage_in_bytes);
	// nil when swap is not accounted.
	SwapBytes *uint64 `json:"swap_bytes,omitempty"`

	// From memory.stat; v1 uses the hierarchical total_* fields.
	AnonBytes      uint64 `json:"anon_bytes"`      // v2 anon, v1 total_rss
	FileBytes      uint64 `json:"file_bytes"`      // v2 file, v1 total_cache: page cache, shmem included
	ShmemBytes     uint64 `json:"shmem_bytes"`     // v2 shmem, v1 total_shmem
	MappedBytes    uint64 `json:"mapped_bytes"`    // v2 file_mapped, v1 total_mapped_file
	DirtyBytes     uint64 `json:"dirty_bytes"`     // v2 file_dirty, v1 total_dirty
	WritebackBytes uint64 `json:"writeback_bytes"` // v2 file_writeback, v1 total_writeback
	SockBytes      uint64 `json:"sock_bytes"`      // v2 sock (v1 has none)
	// ActiveFileBytes and InactiveFileBytes are the group's file LRU lists
	// (v2 active_file/inactive_file, v1 total_active_file/
	// total_inactive_file). Shmem is on the anon LRU, so they exclude it:
	// active + inactive file = file − shmem, give or take pages in flight.
	ActiveFileBytes   uint64 `json:"active_file_bytes"`
	InactiveFileBytes uint64 `json:"inactive_file_bytes"`
	// CacheBytes is the page cache the kernel can reclaim from the group
	// without swap: file minus shmem.
	CacheBytes uint64 `json:"cache_bytes"`
	// WorkingSetBytes is usage minus inactive file, floored at 0: the
	// figure docker stats shows as the container's usage and the kubelet
	// evicts on (cAdvisor's container_memory_working_set_bytes).
	WorkingSetBytes uint64 `json:"working_set_bytes"`
	// UnreclaimableBytes is anon + shmem: what the group cannot give back
	// without swapping it out (anon and tmpfs pages only leave RAM to swap).
	UnreclaimableBytes uint64 `json:"unreclaimable_bytes"`
	// UnevictableBytes is v2 unevictable, v1 total_unevictable: mlocked
	// pages and ramfs, which no reclaim and no swap can take (they are
	// also counted in anon or file).
	UnevictableBytes uint64 `json:"unevictable_bytes"`

	// Kernel memory charged to the group, where the kernel gives it.
	// KernelBytes is v2 memory.stat kernel (5.18+; before it, the sum of
	// kernel_stack, pagetables, percpu, sock, vmalloc and slab) or v1
	// memory.kmem.usage_in_bytes; nil when the kernel does not say.
	KernelBytes *uint64 `json:"kernel_bytes,omitempty"`
	// SlabReclaimableBytes and SlabUnreclaimableBytes are v2 memory.stat
	// slab_reclaimable and slab_unreclaimable (5.9+); v1 memory.stat has no
	// slab figures (memory.kmem.slabinfo lists caches, not bytes), so nil.
	SlabReclaimableBytes   *uint64 `json:"slab_reclaimable_bytes,omitempty"`
	SlabUnreclaimableBytes *uint64 `json:"slab_unreclaimable_bytes,omitempty"`

	// Protections: memory the kernel leaves alone while reclaiming on
	// behalf of others. MinBytes is v2 memory.min (never reclaimed),
	// LowBytes v2 memory.low (reclaimed only when nothing unprotected is
	// left); nil when 0 or absent. SoftLimitBytes is v1
	// memory.soft_limit_in_bytes (under host pressure the group is
	// reclaimed down to it first); nil when unlimited.
	MinBytes       *uint64 `json:"min_bytes,omitempty"`
	LowBytes       *uint64 `json:"low_bytes,omitempty"`
	SoftLimitBytes *uint64 `json:"soft_limit_bytes,omitempty"`
	// SwapLimitBytes is how much the group may keep in swap: v2
	// memory.swap.max, v1 memory.memsw.limit_in_bytes − the memory limit
	// (memsw bounds memory + swap); nil when unlimited.
	SwapLimitBytes *uint64 `json:"swap_limit_bytes,omitempty"`
	// Swappiness is v1 memory.swappiness (0: the group's own reclaim never
	// swaps anon); nil on v2, where the group follows vm.swappiness.
	Swappiness *uint64 `json:"swappiness,omitempty"`

	// SwapRoomBytes is how much of the group's anon and shmem swap could
	// still take: the free swap of the host (/proc/meminfo SwapFree), at
	// most the group's swap allowance left (v2 memory.swap.max −
	// memory.swap.current; v1 memsw.limit − limit − swap: the group's own
	// reclaim stops swapping at the memsw limit), 0 with v1 swappiness 0.
	SwapRoomBytes uint64 `json:"swap_room_bytes"`
	// PinnedBytes is what reclaim cannot take from the group now: anon +
	// shmem beyond SwapRoomBytes, plus unreclaimable kernel memory (v2:
	// kernel − slab_reclaimable; v1: none counted, the kernel does not split
	// kmem). Against the limit it is the room the group really has.
	PinnedBytes uint64 `json:"pinned_bytes"`

	// Sources names, for each figure above that comes from the kernel,
	// the file and field it was read from ("memory.stat total_rss"), keyed
	// by the figure's JSON name.
	Sources map[string]string `json:"sources"`

	Events  map[string]uint64 `json:"events,omitempty"`  // v2 memory.events: low, high, max, oom, oom_kill, …
	Failcnt *uint64           `json:"failcnt,omitempty"` // v1 memory.failcnt: times usage hit the limit
	// MemswFailcnt is v1 memory.memsw.failcnt: times memory + swap hit
	// memory.memsw.limit_in_bytes. The kernel charges memsw first, so a
	// group whose memsw limit equals its memory limit (no swap allowed)
	// counts its hits here and leaves memory.failcnt at 0.
	MemswFailcnt *uint64 `json:"memsw_failcnt,omitempty"`
	// PeakBytes is the most the group ever used: v2 memory.peak (5.19+),
	// v1 memory.max_usage_in_bytes (since the group was made or the file
	// was last reset by writing 0 to it); nil where the kernel has neither.
	// A dashboard samples usage; this is what it reached between samples.
	PeakBytes *uint64 `json:"peak_bytes,omitempty"`
	// OOMKills is v2 memory.events oom_kill or v1 memory.oom_control
	// oom_kill (since 4.13); nil where the kernel has no such counter.
	OOMKills *uint64 `json:"oom_kills,omitempty"`

	// PSI is the group's memory.pressure: its own v2 directory, or on a
	// hybrid host the v2 group of the same path; nil if there is none.
	PSI *psi.Resource `json:"psi,omitempty"`

	NearLimit bool `json:"near_limit"` // usage ≥ nearLimitShare × limit
	// NearHigh: usage ≥ nearLimitShare × memory.high (v2) while not near
	// the limit: the kernel throttles the group's allocations and reclaims
	// it there, so its tasks slow down without being OOM-killed.
	NearHigh    bool `json:"near_high,omitempty"`
	MostlyCache bool `json:"mostly_cache"` // CacheBytes ≥ mostlyCacheShare × usage
	// Stalling: the group's memory PSI some avg10 is at least 1 %.
	Stalling bool `json:"-"`
	// Note is the group's state in words, written by report/mem before
	// it renders the report; memstate leaves it empty.
	Note string `json:"note,omitempty"`
}

// Cgroups walks the memory cgroups under <root>/sys/fs/cgroup: the v2
// hierarchy when it has the memory controller, else the v1 memory
// controller at memory/ with PSI from the v2 mount at unified/ (hybrid
// layout). It returns them largest usage first. A group that vanishes
// while being read is skipped. Neither layout present is an
// *UnavailableError.
//
// host is what [Collector.Host] read, so /proc/meminfo is read once per
// run: the host's free swap bounds what any group can swap out
// (SwapRoomBytes). With a nil host, or one whose meminfo lacks SwapFree,
// that room is unknown.
func (c *Collector) Cgroups(host *Host) ([]Cgroup, error) {
	base := filepath.Join(c.root, "sys/fs/cgroup")
	var out []Cgroup
	var err error
	var swapFree *uint64
	if host != nil && !slices.Contains(host.Missing, "SwapFree") {
		v := host.SwapFreeBytes
		swapFree = &v
	}
	switch {
	case hasController(base, "memory"):
		out, err = walk(base, func(dir, rel string) (Cgroup, bool, error) { return readV2(dir, rel, swapFree) })
	case exists(filepath.Join(base, "memory/memory.usage_in_bytes")):
		unified := filepath.Join(base, "unified")
		out, err = walk(filepath.Join(base, "memory"), func(dir, rel string) (Cgroup, bool, error) {
			return readV1(dir, rel, filepath.Join(unified, rel), swapFree)
		})
	default:
		return nil, &UnavailableError{Path: base, Need: "a memory cgroup hierarchy (cgroup v2 with the memory controller, or v1 memory/)"}
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].UsageBytes != out[j].UsageBytes {
			return out[i].UsageBytes > out[j].UsageBytes
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// UnavailableError says a source memstate reads does not exist on this
// host, and what would provide it.
// It is memdiag's one [hostenv.Unavailable].
type UnavailableError = hostenv.Unavailable

func walk(top string, read func(dir, rel string) (Cgroup, bool, error)) ([]Cgroup, error) {
	var out []Cgroup
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != top && process.Gone(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(top, p)
		rel = "/" + strings.TrimPrefix(filepath.ToSlash(rel), ".")
		rel = filepath.Clean(rel)
		cg, ok, err := read(p, rel)
		if err != nil {
			if process.Gone(err) {
				return fs.SkipDir
			}
			return err
		}
		if ok {
			out = append(out, cg)
		}
		return nil
	})
	return out, err
}

// readV2 reads one v2 group; ok is false for a directory without
// memory.current (the root group).
func readV2(dir, rel string, swapFree *uint64) (Cgroup, bool, error) {
	cg := Cgroup{Path: rel, Version: 2}
	cur, ok, err := readUint(filepath.Join(dir, "memory.current"))
	if err != nil || !ok {
		return cg, false, err
	}
	cg.UsageBytes = cur
	if cg.LimitBytes, err = readLimit(filepath.Join(dir, "memory.max")); err != nil {
		return cg, false, err
	}
	if cg.HighBytes, err = readLimit(filepath.Join(dir, "memory.high")); err != nil {
		return cg, false, err
	}
	if err := readCounters(dir, []counter{{"memory.swap.current", &cg.SwapBytes, false}}); err != nil {
		return cg, false, err
	}
	st, err := readKV(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return cg, false, err
	}
	kernelSrc := v2Stat(&cg, st)
	if err := readV2Protection(&cg, dir); err != nil {
		return cg, false, err
	}
	cg.Sources = v2Sources(kernelSrc)
	if err := readCounters(dir, []counter{{"memory.peak", &cg.PeakBytes, false}}); err != nil {
		return cg, false, err
	}
	if cg.Events, err = readKV(filepath.Join(dir, "memory.events")); err != nil {
		return cg, false, err
	}
	if v, ok := cg.Events["oom_kill"]; ok {
		cg.OOMKills = &v
	}
	if len(cg.Events) == 0 {
		cg.Events = nil
	}
	if cg.PSI, err = readPSI(filepath.Join(dir, "memory.pressure")); err != nil {
		return cg, false, err
	}
	var swapLeft *uint64
	if cg.SwapLimitBytes != nil {
		v := sub(*cg.SwapLimitBytes, deref(cg.SwapBytes))
		swapLeft = &v
	}
	judge(&cg, swapFree, swapLeft)
	return cg, true, nil
}

// v2Stat sets cg's byte counts from memory.stat (st) and returns where
// its kernel figure comes from (kernel, or its parts on kernels without it).
func v2Stat(cg *Cgroup, st map[string]uint64) string {
	cg.AnonBytes, cg.FileBytes, cg.ShmemBytes = st["anon"], st["file"], st["shmem"]
	cg.MappedBytes, cg.DirtyBytes, cg.WritebackBytes = st["file_mapped"], st["file_dirty"], st["file_writeback"]
	cg.SockBytes = st["sock"]
	cg.ActiveFileBytes, cg.InactiveFileBytes = st["active_file"], st["inactive_file"]
	cg.UnevictableBytes = st["unevictable"]
	kernelSrc := "memory.stat kernel"
	if v, ok := st["kernel"]; ok {
		cg.KernelBytes = &v
	} else if _, ok := st["kernel_stack"]; ok {
		var v uint64
		for _, k := range []string{"kernel_stack", "pagetables", "percpu", "sock", "vmalloc", "slab_reclaimable", "slab_unreclaimable"} {
			v += st[k]
		}
		cg.KernelBytes = &v
		kernelSrc = "memory.stat kernel_stack + pagetables + percpu + sock + vmalloc + slab_reclaimable + slab_unreclaimable"
	}
	if v, ok := st["slab_reclaimable"]; ok {
		cg.SlabReclaimableBytes = &v
	}
	if v, ok := st["slab_unreclaimable"]; ok {
		cg.SlabUnreclaimableBytes = &v
	}
	return kernelSrc
}

// readV2Protection sets cg's memory.min and memory.low (when above 0) and
// memory.swap.max, in bytes; nil for "max" or an absent file.
func readV2Protection(cg *Cgroup, dir string) error {
	for _, f := range []struct {
		file string
		dst  **uint64
	}{{"memory.min", &cg.MinBytes}, {"memory.low", &cg.LowBytes}, {"memory.swap.max", &cg.SwapLimitBytes}} {
		v, err := readLimit(filepath.Join(dir, f.file))
		if err != nil {
			return err
		}
		if v != nil && (*v > 0 || f.file == "memory.swap.max") {
			*f.dst = v
		}
	}
	return nil
}

// v2Sources names the v2 file (or memory.stat field) each of a v2
// group's figures comes from; kernelSrc is v2Stat's.
func v2Sources(kernelSrc string) map[string]string {
	return map[string]string{
		"kernel_bytes": kernelSrc, "slab_reclaimable_bytes": "memory.stat slab_reclaimable",
		"slab_unreclaimable_bytes": "memory.stat slab_unreclaimable", "unevictable_bytes": "memory.stat unevictable",
		"min_bytes": "memory.min", "low_bytes": "memory.low", "swap_limit_bytes": "memory.swap.max",
		"swap_room_bytes": "min(/proc/meminfo SwapFree, memory.swap.max − memory.swap.current)",
		"pinned_bytes":    "anon + shmem − swap room + (memory.stat kernel − slab_reclaimable)",
		"usage_bytes":     "memory.current", "limit_bytes": "memory.max", "high_bytes": "memory.high",
		"swap_bytes": "memory.swap.current", "anon_bytes": "memory.stat anon", "file_bytes": "memory.stat file",
		"shmem_bytes": "memory.stat shmem", "active_file_bytes": "memory.stat active_file",
		"inactive_file_bytes": "memory.stat inactive_file", "dirty_bytes": "memory.stat file_dirty",
		"cache_bytes":         "memory.stat file − shmem",
		"working_set_bytes":   "memory.current − memory.stat inactive_file",
		"unreclaimable_bytes": "memory.stat anon + shmem",
		"peak_bytes":          "memory.peak",
	}
}

// readV1 reads one v1 memory group; v2dir is the v2 group of the same path
// on a hybrid host, where its memory.pressure lives.
func readV1(dir, rel, v2dir string, swapFree *uint64) (Cgroup, bool, error) {
	cg := Cgroup{Path: rel, Version: 1}
	u, ok, err := readUint(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil || !ok {
		return cg, false, err
	}
	cg.UsageBytes = u
	st, err := readKV(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return cg, false, err
	}
	if err := readV1Limit(&cg, dir, st); err != nil {
		return cg, false, err
	}
	if err := readV1Swap(&cg, dir, st); err != nil {
		return cg, false, err
	}
	v1Stat(&cg, st)
	swapLeft, err := readV1SwapLimit(&cg, dir, st)
	if err != nil {
		return cg, false, err
	}
	cg.Sources = v1Sources(st)
	if err := readCounters(dir, []counter{
		{"memory.kmem.usage_in_bytes", &cg.KernelBytes, false},
		{"memory.soft_limit_in_bytes", &cg.SoftLimitBytes, true},
		{"memory.swappiness", &cg.Swappiness, false},
		{"memory.failcnt", &cg.Failcnt, false},
		{"memory.memsw.failcnt", &cg.MemswFailcnt, false},
		{"memory.max_usage_in_bytes", &cg.PeakBytes, false},
	}); err != nil {
		return cg, false, err
	}
	oc, err := readKV(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		return cg, false, err
	}
	if v, ok := oc["oom_kill"]; ok {
		cg.OOMKills = &v
	}
	if cg.PSI, err = readPSI(filepath.Join(v2dir, "memory.pressure")); err != nil {
		return cg, false, err
	}
	judge(&cg, swapFree, swapLeft)
	return cg, true, nil
}

// readV1Limit sets cg.LimitBytes: the smaller of memory.limit_in_bytes
// and memory.stat's hierarchical_memory_limit (st), unless unlimited.
func readV1Limit(cg *Cgroup, dir string, st map[string]uint64) error {
	lim, ok, err := readUint(filepath.Join(dir, "memory.limit_in_bytes"))
	if err != nil {
		return err
	}
	if h, hok := st["hierarchical_memory_limit"]; hok && (!ok || h < lim) {
		lim, ok = h, true
	}
	if ok && lim < v1Unlimited {
		cg.LimitBytes = &lim
	}
	return nil
}

// readV1Swap sets cg.SwapBytes, in bytes, from memory.stat (st) or
// memory.memsw.usage_in_bytes.
func readV1Swap(cg *Cgroup, dir string, st map[string]uint64) error {
	// Swap: memory.stat's total_swap (hierarchical; present with swap
	// accounting) is one consistent reading. memsw.usage − usage is the
	// fallback: two files read at different moments, so it can show a
	// few hundred KiB of "swap" on a host without any.
	if s, ok := st["total_swap"]; ok {
		cg.SwapBytes = &s
	} else if sw, ok, err := readUint(filepath.Join(dir, "memory.memsw.usage_in_bytes")); err != nil {
		return err
	} else if ok {
		s := sub(sw, cg.UsageBytes)
		cg.SwapBytes = &s
	}
	return nil
}

// v1Stat sets cg's byte counts from memory.stat (st), hierarchical.
func v1Stat(cg *Cgroup, st map[string]uint64) {
	// total_* are hierarchical (this group and its children), like v2's
	// figures; the plain names count this group's own pages only.
	pick := func(name string) uint64 {
		if v, ok := st["total_"+name]; ok {
			return v
		}
		return st[name]
	}
	cg.AnonBytes, cg.FileBytes, cg.ShmemBytes = pick("rss"), pick("cache"), pick("shmem")
	cg.MappedBytes, cg.DirtyBytes, cg.WritebackBytes = pick("mapped_file"), pick("dirty"), pick("writeback")
	cg.ActiveFileBytes, cg.InactiveFileBytes = pick("active_file"), pick("inactive_file")
	cg.UnevictableBytes = pick("unevictable")
}

// counter is a cgroup file of one number (File) and the field it
// sets (P), left nil when the file is absent or, Bounded, when the
// number means unlimited.
type counter struct {
	File    string
	P       **uint64
	Bounded bool
}

// readCounters reads the counters' files in dir, in order; the first
// unreadable one is the error.
func readCounters(dir string, cs []counter) error {
	for _, c := range cs {
		v, ok, err := readUint(filepath.Join(dir, c.File))
		if err != nil {
			return err
		}
		if ok && (!c.Bounded || v < v1Unlimited) {
			*c.P = &v
		}
	}
	return nil
}

// readV1SwapLimit sets cg.SwapLimitBytes from the memsw limit (the
// smaller of memory.memsw.limit_in_bytes and memory.stat's
// hierarchical_memsw_limit) and returns the swap the group's own reclaim
// may still fill (bytes; nil without a memsw limit). cg.LimitBytes and
// cg.SwapBytes must be set.
func readV1SwapLimit(cg *Cgroup, dir string, st map[string]uint64) (*uint64, error) {
	memsw, hasMemsw := st["hierarchical_memsw_limit"]
	if l, ok, err := readUint(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err != nil {
		return nil, err
	} else if ok && (!hasMemsw || l < memsw) {
		memsw, hasMemsw = l, true
	}
	if !hasMemsw || memsw >= v1Unlimited {
		return nil, nil
	}
	if cg.LimitBytes == nil {
		// The memsw limit is the one the group reaches, and reclaim at
		// the memsw limit never swaps (swapping out moves a page from
		// memory to swap, memory + swap stays the same).
		var none uint64
		return &none, nil
	}
	allowance := sub(memsw, *cg.LimitBytes)
	cg.SwapLimitBytes = &allowance
	// The group's own reclaim swaps only while memory + swap is below
	// the memsw limit when memory reaches its limit: swap can grow to
	// memsw − limit, not to memsw − memsw usage (a group below its
	// memory limit has memsw room that is not swap room).
	// Documentation/admin-guide/cgroup-v1/memory.rst, "memsw".
	left := sub(allowance, deref(cg.SwapBytes)) // readV1Swap has read it
	return &left, nil
}

// v1Sources names the v1 file (or memory.stat field) each of a v1
// group's figures comes from; st is its memory.stat.
func v1Sources(st map[string]uint64) map[string]string {
	src := map[string]string{
		"kernel_bytes": "memory.kmem.usage_in_bytes", "unevictable_bytes": "memory.stat total_unevictable",
		"soft_limit_bytes": "memory.soft_limit_in_bytes", "swappiness": "memory.swappiness",
		"swap_limit_bytes": "min(memory.memsw.limit_in_bytes, memory.stat hierarchical_memsw_limit) − limit",
		"swap_room_bytes":  "min(/proc/meminfo SwapFree, memsw limit − limit − swap); 0 with memory.swappiness 0",
		"pinned_bytes":     "total_rss + total_shmem − swap room (v1 does not split kmem into reclaimable and not)",
		"usage_bytes":      "memory.usage_in_bytes", "limit_bytes": "min(memory.limit_in_bytes, memory.stat hierarchical_memory_limit)",
		"swap_bytes": "memory.stat total_swap", "anon_bytes": "memory.stat total_rss", "file_bytes": "memory.stat total_cache",
		"shmem_bytes": "memory.stat total_shmem", "active_file_bytes": "memory.stat total_active_file",
		"inactive_file_bytes": "memory.stat total_inactive_file", "dirty_bytes": "memory.stat total_dirty",
		"cache_bytes":         "memory.stat total_cache − total_shmem",
		"working_set_bytes":   "memory.usage_in_bytes − memory.stat total_inactive_file",
		"unreclaimable_bytes": "memory.stat total_rss + total_shmem",
		"peak_bytes":          "memory.max_usage_in_bytes",
	}
	if _, ok := st["total_swap"]; !ok {
		src["swap_bytes"] = "memory.memsw.usage_in_bytes − memory.usage_in_bytes"
	}
	return src
}

// judge sets CacheBytes, WorkingSetBytes, UnreclaimableBytes,
// SwapRoomBytes, PinnedBytes, NearLimit, NearHigh, MostlyCache and
// Stalling; report/mem writes them in words (Note). swapFree is the
// host's free swap, swapLeft the group's swap allowance left (nil:
// unlimited).
func judge(cg *Cgroup, swapFree, swapLeft *uint64) {
	cg.CacheBytes = sub(cg.FileBytes, cg.ShmemBytes)
	cg.WorkingSetBytes = sub(cg.UsageBytes, cg.InactiveFileBytes)
	cg.UnreclaimableBytes = cg.AnonBytes + cg.ShmemBytes
	room := deref(swapFree)
	if swapFree == nil && cg.Sources != nil {
		cg.Sources["swap_room_bytes"] += " (SwapFree unreadable: taken as 0)"
	}
	if swapLeft != nil {
		room = min(room, *swapLeft)
	}
	if cg.Swappiness != nil && *cg.Swappiness == 0 {
		room = 0
	}
	cg.SwapRoomBytes = room
	cg.PinnedBytes = cg.UnreclaimableBytes - min(cg.UnreclaimableBytes, room)
	if cg.Version == 2 && cg.KernelBytes != nil {
		cg.PinnedBytes += sub(*cg.KernelBytes, deref(cg.SlabReclaimableBytes))
	}
	cg.MostlyCache = cg.UsageBytes > 0 && float64(cg.CacheBytes) >= mostlyCacheShare*float64(cg.UsageBytes)
	cg.Stalling = cg.PSI != nil && cg.PSI.Some.Avg10 >= pressureStallShare*100
	if cg.LimitBytes != nil && *cg.LimitBytes > 0 {
		cg.NearLimit = float64(cg.UsageBytes) >= nearLimitShare*float64(*cg.LimitBytes)
	}
	cg.NearHigh = !cg.NearLimit && cg.HighBytes != nil && *cg.HighBytes > 0 &&
		float64(cg.UsageBytes) >= nearLimitShare*float64(*cg.HighBytes)
}

// LimitHits is how many times the group's usage reached its limit, as the
// kernel counts it: v1 memory.failcnt plus memory.memsw.failcnt (a charge
// that found the memory, or the memory + swap, counter at its limit; one
// charge fails on one of them only), v2 memory.events max (usage about to go over memory.max,
// counted for the group and the groups below it); the file it came from
// is the second result. ok is false where the kernel gives neither.
func (cg *Cgroup) LimitHits() (n uint64, source string, ok bool) {
	if cg.Version == 1 && cg.Failcnt != nil {
		if cg.MemswFailcnt != nil && *cg.MemswFailcnt > 0 {
			return *cg.Failcnt + *cg.MemswFailcnt, fmt.Sprintf("memory.failcnt %d + memory.memsw.failcnt %d", *cg.Failcnt, *cg.MemswFailcnt), true
		}
		return *cg.Failcnt, "memory.failcnt", true
	}
	if v, has := cg.Events["max"]; has && cg.Version == 2 {
		return v, "memory.events max", true
	}
	return 0, "", false
}

// ReachedLimit reports whether the group has been at its limit since it
// was made, whatever its usage now: its limit hits (failcnt, memory.events
// max), an OOM kill in it, or a peak within 10 % of the limit.
func (cg *Cgroup) ReachedLimit() bool {
	if n, _, ok := cg.LimitHits(); ok && n > 0 {
		return true
	}
	if cg.OOMKills != nil && *cg.OOMKills > 0 {
		return true
	}
	return cg.LimitBytes != nil && cg.PeakBytes != nil && *cg.LimitBytes > 0 &&
		float64(*cg.PeakBytes) >= nearLimitShare*float64(*cg.LimitBytes)
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func hasController(dir, c string) bool {
	b, err := rootfs.ReadPath(context.Background(), filepath.Join(dir, "cgroup.controllers"), rootfs.ProcLimit)
	return err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " "+c+" ")
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// readUint reads a file holding one number; ok is false if it does not exist.
func readUint(p string) (v uint64, ok bool, err error) {
	b, err := rootfs.ReadPath(context.Background(), p, rootfs.ProcLimit)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	s := strings.TrimSpace(string(b))
	v, err = strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s:1: %w: %q", p, ErrParse, s)
	}
	return v, true, nil
}

// readLimit reads a v2 limit file: a number, or "max" (nil). A missing
// file is nil too.
func readLimit(p string) (*uint64, error) {
	b, err := rootfs.ReadPath(context.Background(), p, rootfs.ProcLimit)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return nil, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w: %q", p, ErrParse, s)
	}
	return &v, nil
}

// readKV reads a flat keyed file ("name value" per line: memory.stat,
// memory.events, memory.oom_control) with lru.ParseKV. A missing file is
// an empty map.
func readKV(p string) (map[string]uint64, error) {
	f, err := rootfs.OpenPath(p)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]uint64{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return lru.ParseKV(f, p)
}

// readPSI reads a cgroup's memory.pressure; nil when it does not exist.
func readPSI(p string) (*psi.Resource, error) {
	r, err := psi.ReadFile(p)
	if err != nil {
		var ue *psi.UnavailableError
		if errors.As(err, &ue) {
			return nil, nil
		}
		return nil, err
	}
	return &r, nil
}
