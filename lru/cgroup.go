package lru

import (
	"errors"
	"os"
	"path/filepath"
)

// ReadCgroupCounters reads a cgroup v2 group's <dir>/memory.stat
// (workingset_refault_*, pgscan_*, pgsteal_*, pswpin/pswpout, pgmajfault:
// pages or events, cumulative, for the group and its descendants) and
// <dir>/memory.events (oom_kill) into a VMStat with the same meanings as
// the host's. Either file may be absent — a v2 group without the memory
// controller, as on hybrid hosts whose memory controller is in cgroup v1 —
// and then its counters stay nil; with neither it returns nil, nil.
// memory.stat uses the /proc/vmstat names, so the same mapping applies.
// Source: https://docs.kernel.org/admin-guide/cgroup-v2.html ("memory.stat",
// "memory.events").
func ReadCgroupCounters(dir string) (*VMStat, error) {
	stat, err := readCounterFile(filepath.Join(dir, "memory.stat"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	events, err := readCounterFile(filepath.Join(dir, "memory.events"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if stat == nil && events == nil {
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

func readCounterFile(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseVMStat(f, path)
}
