package correlate

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// An OOM kill in another memory cgroup, in a recording of a --cgroup
// group: the interval's kill carries the victim the kernel log named
// (Sample.OOMKills), marked outside the group, and the group's own
// oom_kill counter's rise (0).
func TestOOMKillScope(t *testing.T) {
	rec := synth{dur: 2 * time.Minute}.build(t)
	rec.Header.Cgroup = "/sys/fs/cgroup/unified/s6trial"
	kill := 2
	for i := range rec.Samples {
		s := &rec.Samples[i]
		host, group := uint64(28), uint64(0)
		if i >= kill {
			host = 29
		}
		s.VMStat.OOMKill, s.CgroupVMStat = &host, &record.VMStat{OOMKill: &group}
	}
	s := &rec.Samples[kill]
	s.OOMKills = []record.OOMVictim{{Time: s.Time.Add(-time.Second), PID: 28520, Comm: "hog",
		Cgroup: "/memdiag-mem-oom-23289", OOMCgroup: "/memdiag-mem-oom-23289", Constraint: "memcg"}}
	s.Events = append(s.Events, record.Event{Kind: process.Exit, Time: s.Time, PID: 27622})
	res := Analyze(rec, Options{})
	if len(res.OOMKills) != 1 {
		t.Fatalf("OOM kills = %+v, want 1", res.OOMKills)
	}
	k := res.OOMKills[0]
	if k.Count != 1 || k.InGroup == nil || *k.InGroup != 0 || k.Group != rec.Header.Cgroup {
		t.Errorf("kill count %d, in group %v of %q; want 1, 0 of the recorded group", k.Count, k.InGroup, k.Group)
	}
	want := OOMVictim{PID: 28520, Comm: "hog", Cgroup: "/memdiag-mem-oom-23289", OOMCgroup: "/memdiag-mem-oom-23289", Constraint: "memcg", OutsideScope: true}
	if len(k.Victims) != 1 || k.Victims[0] != want {
		t.Errorf("victims = %+v, want [%+v]", k.Victims, want)
	}
	// A process that exited unnamed is "? PID", not " PID".
	if len(k.Exited) != 1 || k.Exited[0] != "? 27622" {
		t.Errorf("exited = %q, want [\"? 27622\"]", k.Exited)
	}
}
