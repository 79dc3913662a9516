package gate

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

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
)

// PSISource fills Sample.PSI (host) and, when the collector has a cgroup,
// Sample.CgroupPSI. Resources the kernel lacks stay nil; [Preflight]
// turns that into an environment error before a run starts.
type PSISource struct {
	C *psi.Collector
}

var _ record.Source = PSISource{}

// Name implements record.Source.
func (PSISource) Name() string { return "psi" }

// Fill implements record.Source.
func (p PSISource) Fill(ctx context.Context, s *record.Sample) error {
	host, _, err := p.C.Collect(ctx)
	if err != nil {
		return err
	}
	if host.Memory != nil || host.IO != nil || host.CPU != nil {
		s.PSI = &host
	}
	cg, _, ok, err := p.C.CollectCgroup(ctx)
	if err != nil {
		return err
	}
	if ok && (cg.Memory != nil || cg.IO != nil || cg.CPU != nil) {
		s.CgroupPSI = &cg
	}
	return nil
}

// CgroupCountersSource fills Sample.CgroupVMStat from a cgroup v2 group's
// memory.stat (workingset_refault_*, pgscan_*, pgsteal_*, pswpin/pswpout,
// pgmajfault; pages or events, cumulative) and memory.events (oom_kill).
// Either file may be absent — a v2 group without the memory controller,
// as on hybrid hosts whose memory controller is in cgroup v1 — and then
// its counters stay nil, which Evaluate reports as NoData.
// Source: https://docs.kernel.org/admin-guide/cgroup-v2.html ("memory.stat",
// "memory.events").
type CgroupCountersSource struct {
	Dir string
}

var _ record.Source = CgroupCountersSource{}

// Name implements record.Source.
func (CgroupCountersSource) Name() string { return "cgroup-counters" }

// Fill implements record.Source.
func (c CgroupCountersSource) Fill(ctx context.Context, s *record.Sample) error {
	v, err := ReadCgroupCounters(c.Dir)
	if err != nil {
		return err
	}
	s.CgroupVMStat = v
	return nil
}

// ReadCgroupCounters reads <dir>/memory.stat and <dir>/memory.events. It
// returns nil, nil when neither exists.
func ReadCgroupCounters(dir string) (*lru.VMStat, error) {
	stat, err := readKeyValues(filepath.Join(dir, "memory.stat"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	events, err := readKeyValues(filepath.Join(dir, "memory.events"))
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
	return vmstatFromMap(stat, true), nil
}

func readKeyValues(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseKeyValues(f, path)
}

// parseKeyValues reads "key value" lines (memory.stat, memory.events).
func parseKeyValues(r io.Reader, path string) (map[string]uint64, error) {
	vals := map[string]uint64{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: malformed line, want \"key value\": %q", path, n, line)
		}
		x, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: malformed line: %q: %w", path, n, line, err)
		}
		vals[f[0]] = x
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vals, nil
}
