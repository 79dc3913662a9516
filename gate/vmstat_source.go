package gate

// ─── TEMPORARY: host /proc/vmstat reading for the gate ─────────────────────
//
// This file is the gate's only reader of /proc/vmstat. It exists so that
// `memdiag gate` works before branch lru lands; when it does, delete this
// file and fill Sample.VMStat from lru.Collector.VMStat() instead (an
// adapter in cmd, or a record.Source in lru). Nothing else in package gate
// reads /proc/vmstat: Evaluate only looks at Sample.VMStat.
//
// The name mapping below follows the one lru is meant to own (see
// lru/types.go): zone-split counters of older kernels are summed, and
// counters renamed in 5.9 are mapped to one meaning.
// ────────────────────────────────────────────────────────────────────────────

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/record"
)

// VMStatSource fills Sample.VMStat from <ProcRoot>/vmstat.
type VMStatSource struct {
	ProcRoot string // "/proc", or a fixture's proc directory
}

var _ record.Source = VMStatSource{}

// Name implements record.Source.
func (VMStatSource) Name() string { return "vmstat" }

// Fill implements record.Source.
func (v VMStatSource) Fill(ctx context.Context, s *record.Sample) error {
	vm, err := ReadVMStat(filepath.Join(v.ProcRoot, "vmstat"))
	if err != nil {
		return err
	}
	s.VMStat = vm
	return nil
}

// ReadVMStat reads /proc/vmstat ("name value" per line; page and event
// counters cumulative since boot). Source: mm/vmstat.c (vmstat_text),
// include/linux/vm_event_item.h.
func ReadVMStat(path string) (*lru.VMStat, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseVMStat(f, path)
}

// parseVMStat maps the counters of one /proc/vmstat to lru.VMStat:
//
//	pgscan_kswapd, pgscan_direct,   one counter since 4.8; before, per zone
//	pgsteal_kswapd, pgsteal_direct  (pgscan_kswapd_normal, …), summed here;
//	                                pgscan_direct_throttle is not a zone
//	workingset_refault_file         workingset_refault before 5.9 (file only)
//	workingset_refault_anon         since 5.9
//	workingset_activate             _file + _anon since 5.9
//	allocstall                      one counter before 4.11, then per zone, summed
//	oom_kill                        since 4.13
//	pgmajfault, pswpin, pswpout     unchanged
//
// On current kernels (seen on 6.18) the global pgscan_kswapd and
// pgscan_direct count only global reclaim: reclaim against a cgroup's
// limit shows in pgscan_anon/pgscan_file and in the group's memory.stat
// (mm/vmscan.c, cgroup_reclaim()). Judge a limited service with --cgroup.
func parseVMStat(r io.Reader, path string) (*lru.VMStat, error) {
	vals := map[string]uint64{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: malformed vmstat line: %q", path, n, line)
		}
		x, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: malformed vmstat line: %q: %w", path, n, line, err)
		}
		vals[k] = x
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("%s: empty vmstat", path)
	}
	return vmstatFromMap(vals, false), nil
}

// vmstatFromMap maps counter names to lru.VMStat. memcg is true for a
// cgroup's memory.stat, whose names are the newer unsplit ones.
func vmstatFromMap(vals map[string]uint64, memcg bool) *lru.VMStat {
	one := func(name string) *uint64 {
		if x, ok := vals[name]; ok {
			return &x
		}
		return nil
	}
	// sum returns the single counter if present, else the sum of
	// name_<zone> counters (excluding the names in skip), else nil.
	sum := func(name string, skip ...string) *uint64 {
		if p := one(name); p != nil {
			return p
		}
		var t uint64
		found := false
	next:
		for k, x := range vals {
			if !strings.HasPrefix(k, name+"_") {
				continue
			}
			for _, s := range skip {
				if k == s {
					continue next
				}
			}
			t += x
			found = true
		}
		if !found {
			return nil
		}
		return &t
	}
	first := func(names ...string) *uint64 {
		for _, n := range names {
			if p := one(n); p != nil {
				return p
			}
		}
		return nil
	}
	v := &lru.VMStat{
		WorkingsetRefaultFile: first("workingset_refault_file", "workingset_refault"),
		WorkingsetRefaultAnon: one("workingset_refault_anon"),
		Pgmajfault:            one("pgmajfault"),
		OOMKill:               one("oom_kill"),
		Pswpin:                one("pswpin"),
		Pswpout:               one("pswpout"),
	}
	if memcg {
		v.PgscanKswapd, v.PgscanDirect = one("pgscan_kswapd"), one("pgscan_direct")
		v.PgstealKswapd, v.PgstealDirect = one("pgsteal_kswapd"), one("pgsteal_direct")
	} else {
		v.PgscanKswapd = sum("pgscan_kswapd")
		v.PgscanDirect = sum("pgscan_direct", "pgscan_direct_throttle")
		v.PgstealKswapd = sum("pgsteal_kswapd")
		v.PgstealDirect = sum("pgsteal_direct")
		v.Allocstall = sum("allocstall")
	}
	if f, a := one("workingset_activate_file"), one("workingset_activate_anon"); f != nil && a != nil {
		t := *f + *a
		v.WorkingsetActivate = &t
	} else {
		v.WorkingsetActivate = one("workingset_activate")
	}
	return v
}
