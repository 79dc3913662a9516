package lru

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// ReadCgroupCounters reads a cgroup v2 group's <dir>/memory.stat
// (workingset_refault_*, pgscan_*, pgsteal_*, pswpin/pswpout, pgmajfault:
// pages or events, cumulative, for the group and its descendants) and
// <dir>/memory.events (oom_kill) into a VMStat with the same meanings as
// the host's. Either file may be absent — a v2 group without the memory
// controller, as on hybrid hosts whose memory controller is in cgroup v1 —
// and then its counters stay nil. With neither, on a hybrid host (dir
// under .../unified/), it reads the v1 memory controller's group of the
// same path instead (see [ReadCgroupCountersV1]); otherwise it returns
// nil, nil.
// memory.stat uses the /proc/vmstat names, so the same mapping applies.
// Source: https://docs.kernel.org/admin-guide/cgroup-v2.html ("memory.stat",
// "memory.events").
func ReadCgroupCounters(dir string) (*VMStat, error) {
	stat, err := ReadKV(filepath.Join(dir, "memory.stat"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	events, err := ReadKV(filepath.Join(dir, "memory.events"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if stat == nil && events == nil {
		if v1 := hybridTwin(dir); v1 != "" {
			cg, err := ReadCgroupCountersV1(v1)
			if err != nil {
				return nil, err
			}
			return cg.VMStat, nil
		}
		return nil, nil
	}
	if stat == nil {
		stat = map[string]uint64{}
	}
	// memory.stat has no oom_kill; memory.events counts it for the group
	// and its descendants.
	delete(stat, "oom_kill")
	if x, ok := events["oom_kill"]; ok {
		stat["oom_kill"] = x
	}
	v, _ := mapVMStat(stat, false)
	return v, nil
}

// hybridTwin maps a group of the v2 mount of a hybrid host
// (<cgroupfs>/unified/<path>) to the v1 memory controller's group of the
// same path (<cgroupfs>/memory/<path>), "" when dir is not under a
// unified/ mount or the twin does not exist.
func hybridTwin(dir string) string {
	clean := filepath.Clean(dir)
	i := strings.LastIndex(clean, "/unified")
	if i < 0 || (len(clean) > i+8 && clean[i+8] != '/') {
		return ""
	}
	twin := clean[:i] + "/memory" + clean[i+8:]
	if _, err := os.Stat(filepath.Join(twin, "memory.stat")); err != nil {
		return ""
	}
	return twin
}

// CgroupV1 is a cgroup v1 memory group's counters (hybrid and legacy
// hosts). The memory.stat values are the hierarchical total_* ones: the
// group and its descendants, as cgroup v2's memory.stat counts them. A
// nil field is absent on the kernel (or file) that was read, never zero.
// Source: https://docs.kernel.org/admin-guide/cgroup-v1/memory.html
// (5.2 stat file, 2.5 failcnt, 10 OOM control).
type CgroupV1 struct {
	// VMStat has the host's meanings: WorkingsetRefaultFile and
	// WorkingsetRefaultAnon (total_workingset_refault_file/_anon, pages,
	// 5.9+; on 6.18 its delta equalled /proc/vmstat
	// workingset_refault_file's for a group that was the only one
	// refaulting, so pages, not bytes), Pgmajfault (total_pgmajfault,
	// events) and OOMKill (memory.oom_control oom_kill, 4.13+). v1 has no
	// per-group pgscan_*/pgsteal_* or pswpin/pswpout: those stay nil.
	VMStat *VMStat
	// FileLRUBytes is total_active_file + total_inactive_file, bytes
	// (v1 memory.stat reports bytes, unlike /proc/meminfo's kB);
	// AnonLRUBytes the same of *_anon.
	FileLRUBytes *uint64
	AnonLRUBytes *uint64
	// Failcnt is memory.failcnt: how many times usage hit
	// memory.limit_in_bytes (each a charge that had to reclaim first).
	Failcnt *uint64
	// LimitBytes is memory.limit_in_bytes; no limit reads as
	// PAGE_COUNTER_MAX pages (9223372036854771712 on 4 KiB pages).
	LimitBytes *uint64
}

// ReadCgroupCountersV1 reads a cgroup v1 memory group's <dir>/memory.stat
// (ParseCgroupV1Stat), memory.oom_control (oom_kill), memory.failcnt and
// memory.limit_in_bytes. memory.stat must exist (else an error wrapping
// os.ErrNotExist: dir is not a v1 memory group); the others are left nil
// when absent.
func ReadCgroupCountersV1(dir string) (*CgroupV1, error) {
	path := filepath.Join(dir, "memory.stat")
	f, err := rootfs.OpenPath(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cg, err := ParseCgroupV1Stat(f, path)
	if err != nil {
		return nil, err
	}
	oc, err := ReadKV(filepath.Join(dir, "memory.oom_control"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if x, ok := oc["oom_kill"]; ok {
		cg.VMStat.OOMKill = &x
	}
	if cg.Failcnt, err = readUint(filepath.Join(dir, "memory.failcnt")); err != nil {
		return nil, err
	}
	if cg.LimitBytes, err = readUint(filepath.Join(dir, "memory.limit_in_bytes")); err != nil {
		return nil, err
	}
	return cg, nil
}

// ParseCgroupV1Stat parses a cgroup v1 memory.stat (name is its path, for
// errors) into a CgroupV1 without the fields of other files: a real
// excerpt (kernel 6.18, lru/testdata/cgroupv1):
//
//	total_workingset_refault_anon 0
//	total_workingset_refault_file 0
//	total_pgmajfault 0
//	total_inactive_file 8392704
//	total_active_file 0
//
// The non-hierarchical values (without total_) are ignored. A malformed
// line is an error wrapping ErrKV.
func ParseCgroupV1Stat(r io.Reader, name string) (*CgroupV1, error) {
	stat, err := ParseKV(r, name)
	if err != nil {
		return nil, err
	}
	vals := map[string]uint64{}
	for _, n := range []string{"workingset_refault_anon", "workingset_refault_file", "pgmajfault"} {
		if x, ok := stat["total_"+n]; ok {
			vals[n] = x
		}
	}
	v, _ := mapVMStat(vals, false)
	return &CgroupV1{
		VMStat:       v,
		FileLRUBytes: sum2(stat, "total_active_file", "total_inactive_file"),
		AnonLRUBytes: sum2(stat, "total_active_anon", "total_inactive_anon"),
	}, nil
}

// sum2 is m[a]+m[b], nil unless both are present.
func sum2(m map[string]uint64, a, b string) *uint64 {
	x, okA := m[a]
	y, okB := m[b]
	if !okA || !okB {
		return nil
	}
	s := x + y
	return &s
}

// readUint reads a file of one unsigned number (memory.failcnt,
// memory.limit_in_bytes); nil, nil when it does not exist.
func readUint(path string) (*uint64, error) {
	b, err := rootfs.ReadPath(context.Background(), path, rootfs.ProcLimit)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	x, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w: %q: want a number", path, ErrKV, strings.TrimSpace(string(b)))
	}
	return &x, nil
}

// ErrKV is wrapped by the errors of [ParseKV] and [ReadKV].
var ErrKV = errors.New("malformed line")

// ReadKV reads a "name value" file of unsigned counters (cgroup v2
// memory.stat and memory.events, v1 memory.stat and memory.oom_control)
// whole with [ParseKV]; a missing file is an error (os.ErrNotExist).
func ReadKV(path string) (map[string]uint64, error) {
	f, err := rootfs.OpenPath(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseKV(f, path)
}

// ParseKV parses "name value" lines of unsigned counters, blank lines
// and surrounding spaces ignored; a malformed line is an error wrapping
// [ErrKV] that names the file (name) and line.
func ParseKV(r io.Reader, name string) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, value, ok := strings.Cut(line, " ")
		v, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s:%d: %w: %q: want \"name value\"", name, n, ErrKV, line)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
