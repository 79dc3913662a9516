package memstate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/psi"
)

// NearLimitShare is the share of its limit from which a cgroup is flagged:
// within 10 % of it.
const NearLimitShare = 0.9

// MostlyCacheShare is the share of a cgroup's usage that must be page cache
// (file minus shmem) for memstate to call it "mostly cache".
const MostlyCacheShare = 0.5

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
	// Sources names, for each figure above that comes from the kernel,
	// the file and field it was read from ("memory.stat total_rss"), keyed
	// by the figure's JSON name.
	Sources map[string]string `json:"sources"`

	Events  map[string]uint64 `json:"events,omitempty"`  // v2 memory.events: low, high, max, oom, oom_kill, …
	Failcnt *uint64           `json:"failcnt,omitempty"` // v1 memory.failcnt: times usage hit the limit
	// OOMKills is v2 memory.events oom_kill or v1 memory.oom_control
	// oom_kill (since 4.13); nil where the kernel has no such counter.
	OOMKills *uint64 `json:"oom_kills,omitempty"`

	// PSI is the group's memory.pressure: its own v2 directory, or on a
	// hybrid host the v2 group of the same path; nil if there is none.
	PSI *psi.Resource `json:"psi,omitempty"`

	NearLimit bool `json:"near_limit"` // usage ≥ NearLimitShare × limit
	// NearHigh: usage ≥ NearLimitShare × memory.high (v2) while not near
	// the limit: the kernel throttles the group's allocations and reclaims
	// it there, so its tasks slow down without being OOM-killed.
	NearHigh    bool   `json:"near_high,omitempty"`
	MostlyCache bool   `json:"mostly_cache"` // CacheBytes ≥ MostlyCacheShare × usage
	Note        string `json:"note,omitempty"`
}

// Cgroups walks the memory cgroups under <root>/sys/fs/cgroup: the v2
// hierarchy when it has the memory controller, else the v1 memory
// controller at memory/ with PSI from the v2 mount at unified/ (hybrid
// layout). It returns them largest usage first. A group that vanishes
// while being read is skipped. Neither layout present is an
// *UnavailableError.
func (c *Collector) Cgroups() ([]Cgroup, error) {
	base := filepath.Join(c.root, "sys/fs/cgroup")
	var out []Cgroup
	var err error
	switch {
	case hasController(base, "memory"):
		out, err = walk(base, func(dir, rel string) (Cgroup, bool, error) { return readV2(dir, rel) })
	case exists(filepath.Join(base, "memory/memory.usage_in_bytes")):
		unified := filepath.Join(base, "unified")
		out, err = walk(filepath.Join(base, "memory"), func(dir, rel string) (Cgroup, bool, error) {
			return readV1(dir, rel, filepath.Join(unified, rel))
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
			if p != top && gone(err) {
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
			if gone(err) {
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
func readV2(dir, rel string) (Cgroup, bool, error) {
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
	if v, ok, err := readUint(filepath.Join(dir, "memory.swap.current")); err != nil {
		return cg, false, err
	} else if ok {
		cg.SwapBytes = &v
	}
	st, err := readKV(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return cg, false, err
	}
	cg.AnonBytes, cg.FileBytes, cg.ShmemBytes = st["anon"], st["file"], st["shmem"]
	cg.MappedBytes, cg.DirtyBytes, cg.WritebackBytes = st["file_mapped"], st["file_dirty"], st["file_writeback"]
	cg.SockBytes = st["sock"]
	cg.ActiveFileBytes, cg.InactiveFileBytes = st["active_file"], st["inactive_file"]
	cg.Sources = map[string]string{
		"usage_bytes": "memory.current", "limit_bytes": "memory.max", "high_bytes": "memory.high",
		"swap_bytes": "memory.swap.current", "anon_bytes": "memory.stat anon", "file_bytes": "memory.stat file",
		"shmem_bytes": "memory.stat shmem", "active_file_bytes": "memory.stat active_file",
		"inactive_file_bytes": "memory.stat inactive_file", "dirty_bytes": "memory.stat file_dirty",
		"cache_bytes":         "memory.stat file − shmem",
		"working_set_bytes":   "memory.current − memory.stat inactive_file",
		"unreclaimable_bytes": "memory.stat anon + shmem",
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
	judge(&cg)
	return cg, true, nil
}

// readV1 reads one v1 memory group; v2dir is the v2 group of the same path
// on a hybrid host, where its memory.pressure lives.
func readV1(dir, rel, v2dir string) (Cgroup, bool, error) {
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
	lim, ok, err := readUint(filepath.Join(dir, "memory.limit_in_bytes"))
	if err != nil {
		return cg, false, err
	}
	if h, hok := st["hierarchical_memory_limit"]; hok && (!ok || h < lim) {
		lim, ok = h, true
	}
	if ok && lim < v1Unlimited {
		cg.LimitBytes = &lim
	}
	// Swap: memory.stat's total_swap (hierarchical; present with swap
	// accounting) is one consistent reading. memsw.usage − usage is the
	// fallback: two files read at different moments, so it can show a
	// few hundred KiB of "swap" on a host without any.
	if s, ok := st["total_swap"]; ok {
		cg.SwapBytes = &s
	} else if sw, ok, err := readUint(filepath.Join(dir, "memory.memsw.usage_in_bytes")); err != nil {
		return cg, false, err
	} else if ok {
		s := sub(sw, u)
		cg.SwapBytes = &s
	}
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
	cg.Sources = map[string]string{
		"usage_bytes": "memory.usage_in_bytes", "limit_bytes": "min(memory.limit_in_bytes, memory.stat hierarchical_memory_limit)",
		"swap_bytes": "memory.stat total_swap", "anon_bytes": "memory.stat total_rss", "file_bytes": "memory.stat total_cache",
		"shmem_bytes": "memory.stat total_shmem", "active_file_bytes": "memory.stat total_active_file",
		"inactive_file_bytes": "memory.stat total_inactive_file", "dirty_bytes": "memory.stat total_dirty",
		"cache_bytes":         "memory.stat total_cache − total_shmem",
		"working_set_bytes":   "memory.usage_in_bytes − memory.stat total_inactive_file",
		"unreclaimable_bytes": "memory.stat total_rss + total_shmem",
	}
	if _, ok := st["total_swap"]; !ok {
		cg.Sources["swap_bytes"] = "memory.memsw.usage_in_bytes − memory.usage_in_bytes"
	}
	if v, ok, err := readUint(filepath.Join(dir, "memory.failcnt")); err != nil {
		return cg, false, err
	} else if ok {
		cg.Failcnt = &v
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
	judge(&cg)
	return cg, true, nil
}

// judge sets CacheBytes, WorkingSetBytes, UnreclaimableBytes,
// NearLimit, MostlyCache and Note.
func judge(cg *Cgroup) {
	cg.CacheBytes = sub(cg.FileBytes, cg.ShmemBytes)
	cg.WorkingSetBytes = sub(cg.UsageBytes, cg.InactiveFileBytes)
	cg.UnreclaimableBytes = cg.AnonBytes + cg.ShmemBytes
	cache := cg.CacheBytes
	cg.MostlyCache = cg.UsageBytes > 0 && float64(cache) >= MostlyCacheShare*float64(cg.UsageBytes)
	// Without the group's PSI, say what to watch instead.
	psiText := "no memory.pressure for it (no PSI in this kernel): watch memory.events max and its refaults instead"
	if cg.Version == 1 {
		psiText = "no memory.pressure for it (a v1 group without a v2 twin): watch memory.failcnt and its refaults instead"
	}
	stalls := false
	if cg.PSI != nil {
		psiText = fmt.Sprintf("its memory PSI is some avg10=%.2f %%", cg.PSI.Some.Avg10)
		stalls = cg.PSI.Some.Avg10 >= PressureStallShare*100
	}
	if cg.LimitBytes != nil && *cg.LimitBytes > 0 {
		cg.NearLimit = float64(cg.UsageBytes) >= NearLimitShare*float64(*cg.LimitBytes)
	}
	if !cg.NearLimit && cg.HighBytes != nil && *cg.HighBytes > 0 &&
		float64(cg.UsageBytes) >= NearLimitShare*float64(*cg.HighBytes) {
		cg.NearHigh = true
		cg.Note = fmt.Sprintf("%s of its memory.high (%s): the kernel throttles its allocations and reclaims it there (memory.events high=%d)",
			percent(cg.UsageBytes, *cg.HighBytes), FormatBytes(*cg.HighBytes), cg.Events["high"])
		if cg.SwapBytes != nil && *cg.SwapBytes > 0 {
			cg.Note += fmt.Sprintf(", %s of it swapped out", FormatBytes(*cg.SwapBytes))
		}
		cg.Note += "; " + psiText
		return
	}
	if !cg.NearLimit {
		if cg.OOMKills != nil && *cg.OOMKills > 0 {
			cg.Note = fmt.Sprintf("%s in this group since it was made (%s oom_kill); now %s of its limit",
				english.Count(int(*cg.OOMKills), "OOM kill"), map[int]string{1: "memory.oom_control", 2: "memory.events"}[cg.Version],
				percent(cg.UsageBytes, deref(cg.LimitBytes)))
		}
		return
	}
	// What the group cannot give back without swap, against its limit.
	unrecl := fmt.Sprintf("%s of anon + shmem not reclaimable without swap (anon %s, shmem %s: %s of the limit)",
		FormatBytes(cg.UnreclaimableBytes), FormatBytes(cg.AnonBytes), FormatBytes(cg.ShmemBytes),
		percent(cg.UnreclaimableBytes, *cg.LimitBytes))
	ws := fmt.Sprintf("working set (usage − inactive file) %s", FormatBytes(cg.WorkingSetBytes))
	if cg.MostlyCache && stalls {
		cg.Note = fmt.Sprintf("%s of its limit, mostly page cache (%s, reclaimable), %s, %s; but %s: reclaiming it stalls the group's tasks, its working set does not fit the limit",
			percent(cg.UsageBytes, *cg.LimitBytes), FormatBytes(cache), unrecl, ws, psiText)
		return
	}
	if cg.MostlyCache {
		cg.Note = fmt.Sprintf("%s of its limit, mostly page cache (%s, reclaimable), %s, %s: fine unless reclaiming it stalls the group's tasks; %s",
			percent(cg.UsageBytes, *cg.LimitBytes), FormatBytes(cache), unrecl, ws, psiText)
		return
	}
	cg.Note = fmt.Sprintf("%s of its limit, mostly %s; cache %s, %s: the next allocations reclaim the cache, swap, or OOM-kill; %s",
		percent(cg.UsageBytes, *cg.LimitBytes), unrecl, FormatBytes(cache), ws, psiText)
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func hasController(dir, c string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " "+c+" ")
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// readUint reads a file holding one number; ok is false if it does not exist.
func readUint(p string) (v uint64, ok bool, err error) {
	b, err := os.ReadFile(p)
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
	b, err := os.ReadFile(p)
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
// memory.events, memory.oom_control). A missing file is an empty map.
func readKV(p string) (map[string]uint64, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]uint64{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseKV(f, p)
}

func parseKV(r io.Reader, p string) (map[string]uint64, error) {
	m := map[string]uint64{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		x, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s:%d: %w: %q", p, n, ErrParse, line)
		}
		m[k] = x
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return m, nil
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
