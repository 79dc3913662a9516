package cmd

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/sources"
	"github.com/memdiag/memdiag/victim"
)

// victimFlagHelp is the help of --victim, the same in watch, record and gate.
const victimFlagHelp = "whose latency is measured: `PID`, UNIT (web.service) or CGROUP (its own stall and memory are recorded; default: the service behind a local --probe)"

// foundVictim is findVictim's result.
type foundVictim struct {
	v      *record.Victim // nil: none
	status record.CollectorStatus
}

// findVictim runs victim.Find on the host under root: --victim (flag),
// else the service behind a local probe URL. Only a wrong --victim is an
// error, a usage error.
func findVictim(ctx context.Context, root, procRoot, flag, probe string) (foundVictim, error) {
	fin, err := victim.New(victim.Options{ProcRoot: procRoot, Mounts: cgroupMounts(procRoot, root)})
	if err != nil {
		if flag != "" {
			return foundVictim{}, &usageError{Err: err}
		}
		return foundVictim{status: record.CollectorStatus{Name: victim.StatusName, Reason: err.Error() + "; pass --victim PID|UNIT|CGROUP"}}, nil
	}
	v, st, err := fin.Find(ctx, flag, probe)
	if err != nil {
		if errors.Is(err, victim.ErrBadFlag) || errors.Is(err, victim.ErrNotFound) {
			return foundVictim{}, &usageError{Err: err}
		}
		return foundVictim{}, err
	}
	return foundVictim{v: v, status: st}, nil
}

// cgroupCounters is the source of Sample.CgroupVMStat: the --cgroup
// group's (v2, or its v1 memory twin on a hybrid host), else the
// victim's memory cgroup's (the v1 reader on a hybrid host, the v2 one
// on pure v2); nil when there is neither.
func cgroupCounters(cgroup string, v *record.Victim) record.Source {
	switch {
	case cgroup != "":
		return sources.CgroupCounters{Dir: cgroup}
	case v == nil || v.MemcgDir == "" || filepath.Clean(v.Memcg) == "/":
		// The root memory group's counters are the host's.
		return nil
	case v.MemcgVersion == 1:
		return sources.CgroupCountersV1{Dir: v.MemcgDir}
	default:
		return sources.CgroupCounters{Dir: v.MemcgDir}
	}
}
