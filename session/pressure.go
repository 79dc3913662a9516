package session

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/sources"
	"github.com/memdiag/memdiag/victim"
)

// Pressure is what a live `memdiag gate` samples: PSI and /proc/vmstat,
// and the memory counters of its scope, no process or disk.
type Pressure struct {
	// Cgroup is the scope: --cgroup resolved below the cgroup2 mount,
	// else the --victim's v2 group; "" for the host.
	Cgroup string
	// Limit and LimitBytes are the memory limit that bounds Cgroup
	// (victim.GroupLimit); "" when none or not found.
	Limit      string
	LimitBytes uint64
	Victim     FoundVictim // looked up only for a --victim
	PSI        *psi.Collector
	List       []record.Source
}

// PressureSources wires gate's sources on the host under root for the
// --cgroup and --victim values (either may be ""). A victim that was
// found with a note (no v2 group) is said through warn before anything
// else can fail.
func PressureSources(ctx context.Context, root, cgroup, victimFlag string, warn func(string)) (*Pressure, error) {
	procRoot := filepath.Join(root, "proc")
	p := &Pressure{}
	if cgroup != "" {
		p.Cgroup = cgroupfs.Resolve(root, CgroupMounts(procRoot, root), cgroup)
		if err := psi.CheckCgroup(p.Cgroup); err != nil {
			return nil, fmt.Errorf("--cgroup: %w", err)
		}
	}
	if victimFlag != "" {
		// --victim's group is the scope unless --cgroup names one.
		vic, err := FindVictim(ctx, root, procRoot, victimFlag, nil)
		if err != nil {
			return nil, err
		}
		p.Victim = vic
		if vic.Status.Reason != "" {
			warn("victim: " + vic.Status.Reason)
		}
		var w string
		if p.Cgroup, w = Scope(p.Cgroup, vic.V); w != "" {
			warn(w)
		}
	}
	var psiOpts []psi.Option
	if p.Cgroup != "" {
		psiOpts = append(psiOpts, psi.WithCgroup(p.Cgroup))
		p.Limit, p.LimitBytes, _ = victim.GroupLimit(CgroupMounts(procRoot, root), p.Cgroup)
	}
	c, err := psi.NewCollector(procRoot, psiOpts...)
	if err != nil {
		return nil, err
	}
	lc, err := lru.NewCollector(procRoot)
	if err != nil {
		return nil, err
	}
	p.PSI = c
	p.List = []record.Source{sources.PSI{C: c}, sources.VMStat{C: lc}}
	// The --cgroup group's counters, else the victim's memory cgroup's.
	if cgroup != "" {
		p.List = append(p.List, sources.CgroupCounters{Dir: p.Cgroup})
	} else if src := CgroupCounters("", p.Victim.V); src != nil {
		p.List = append(p.List, src)
	}
	return p, nil
}
