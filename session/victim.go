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
// else the service behind the first local URL of targets (VictimTargets).
// Only a wrong --victim is an error, a *UsageError.
func FindVictim(ctx context.Context, root, procRoot, flag string, targets []victim.Target) (FoundVictim, error) {
	fin, err := victim.New(victim.Options{ProcRoot: procRoot, Mounts: CgroupMounts(procRoot, root)})
	if err != nil {
		if flag != "" {
			return FoundVictim{}, &UsageError{Err: err}
		}
		return FoundVictim{Status: record.CollectorStatus{Name: victim.StatusName, Reason: err.Error() + "; pass --victim PID|UNIT|CGROUP"}}, nil
	}
	v, st, err := fin.Find(ctx, flag, targets)
	if err != nil {
		if errors.Is(err, victim.ErrBadFlag) || errors.Is(err, victim.ErrNotFound) {
			return FoundVictim{}, &UsageError{Err: err}
		}
		return FoundVictim{}, err
	}
	return FoundVictim{V: v, Status: st}, nil
}

// VictimTargets are the URLs the victim may listen behind, in the order
// FindVictim tries them: --probe, the first URL in the --latency file
// when it exists at start (vegeta's, k6's and JMeter's files record the
// request URL; hey's, ab's, Locust's and Gatling's do not), the first
// URL among the wrapped command's arguments (hey, wrk, ab).
func VictimTargets(probe, latencyFile string, command []string) []victim.Target {
	var ts []victim.Target
	if probe != "" {
		ts = append(ts, victim.Target{URL: probe, How: record.VictimFromProbe, From: "--probe"})
	}
	if latencyFile != "" {
		if u, err := victim.URLInFile(latencyFile); err == nil && u != "" {
			ts = append(ts, victim.Target{URL: u, How: record.VictimFromLatency, From: "--latency " + filepath.Base(latencyFile)})
		}
	}
	if u := victim.URLInArgs(command); u != "" {
		ts = append(ts, victim.Target{URL: u, How: record.VictimFromCommand, From: "the command after --"})
	}
	return ts
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
