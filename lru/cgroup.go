package lru

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadCgroupCounters reads a cgroup v2 group's <dir>/memory.stat
// (workingset_refault_*, pgscan_*, pgsteal_*, pswpin/pswpout, pgmajfault:
// pages or events, cumulative, for the group and its descendants) and
// <dir>/memory.events (oom_kill) into a VMStat with the same meanings as
// the host's. Either file may be absent — a v2 group without the memory
// controller, as on hybrid hosts whose memory controller is in cgroup v1 —
// and then its counters stay nil. With neither, on a hybrid host (dir
// under .../unified/), it reads the v1 memory controller's group of the
// same path instead (see [readCgroupCountersV1]); otherwise it returns
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
			return readCgroupCountersV1(v1)
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

// readCgroupCountersV1 reads a cgroup v1 memory group's counters into a
// VMStat with the host's meanings: from <dir>/memory.stat the
// hierarchical total_workingset_refault_anon/_file (refaults, pages;
// 5.9+; on 6.18 its delta equalled /proc/vmstat workingset_refault_file's
// for a group that was the only one refaulting, so pages, not bytes),
// total_pgmajfault (events), and from
// <dir>/memory.oom_control oom_kill (4.13+). v1 has no per-group
// pgscan_*/pgsteal_* or pswpin/pswpout: those stay nil. Source:
// https://docs.kernel.org/admin-guide/cgroup-v1/memory.html (5.2 stat
// file, 10 OOM control).
func readCgroupCountersV1(dir string) (*VMStat, error) {
	stat, err := ReadKV(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return nil, err
	}
	oc, err := ReadKV(filepath.Join(dir, "memory.oom_control"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	vals := map[string]uint64{}
	for _, n := range []string{"workingset_refault_anon", "workingset_refault_file", "pgmajfault"} {
		if x, ok := stat["total_"+n]; ok {
			vals[n] = x
		}
	}
	if x, ok := oc["oom_kill"]; ok {
		vals["oom_kill"] = x
	}
	v, _ := mapVMStat(vals, false)
	return v, nil
}

// ErrKV is wrapped by the errors of [ParseKV] and [ReadKV].
var ErrKV = errors.New("malformed line")

// ReadKV reads a "name value" file of unsigned counters (cgroup v2
// memory.stat and memory.events, v1 memory.stat and memory.oom_control)
// whole with [ParseKV]; a missing file is an error (os.ErrNotExist).
func ReadKV(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
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
