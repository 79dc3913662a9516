package session

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/sources"
	"github.com/memdiag/memdiag/victim"
)

// FoundVictim is FindVictim's result.
type FoundVictim struct {
	V      *record.Victim // nil: none
	Status record.CollectorStatus
}

// FindVictim runs victim.Find on the host under root: --victim (flag),
// else the service behind a local probe URL. Only a wrong --victim is an
// error, a *UsageError.
func FindVictim(ctx context.Context, root, procRoot, flag, probe string) (FoundVictim, error) {
	fin, err := victim.New(victim.Options{ProcRoot: procRoot, Mounts: CgroupMounts(procRoot, root)})
	if err != nil {
		if flag != "" {
			return FoundVictim{}, &UsageError{Err: err}
		}
		return FoundVictim{Status: record.CollectorStatus{Name: victim.StatusName, Reason: err.Error() + "; pass --victim PID|UNIT|CGROUP"}}, nil
	}
	v, st, err := fin.Find(ctx, flag, probe)
	if err != nil {
		if errors.Is(err, victim.ErrBadFlag) || errors.Is(err, victim.ErrNotFound) {
			return FoundVictim{}, &UsageError{Err: err}
		}
		return FoundVictim{}, err
	}
	return FoundVictim{V: v, Status: st}, nil
}

// CgroupCounters is the source of Sample.CgroupVMStat: the --cgroup
// group's (v2, or its v1 memory twin on a hybrid host), else the
// victim's memory cgroup's (the v1 reader on a hybrid host, the v2 one
// on pure v2); nil when there is neither.
func CgroupCounters(cgroup string, v *record.Victim) record.Source {
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
