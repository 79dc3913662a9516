package correlate

import (
	"slices"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// victimSelfScenario: a web service (the recorded victim, pid 200) whose
// memory is taken every 10 s by something that does no I/O the
// recording sees (a tmpfs filler, another limit's tenant); in each
// episode the service reads back 24 MiB of its own pages, the only I/O
// there is. With writes instead, the service's own I/O is a flush it
// scheduled itself.
func victimSelfScenario(reads bool) scenario {
	ats := offs(10*time.Second, 11, 5*time.Second)
	ps := []sproc{
		{pid: 200, ppid: 1, comm: "websvc", cmdline: "/usr/bin/websvc", unit: "web.service", reads: reads,
			bps: func(t time.Duration) float64 { return every(6*mib, 4*time.Second, ats...)(t) + 64<<10 }},
		// A worker it started reads too.
		{pid: 201, ppid: 200, comm: "websvc", cmdline: "/usr/bin/websvc --worker", unit: "web.service", reads: reads,
			bps: every(1*mib, 4*time.Second, ats...)},
	}
	return scenario{dur: 2 * time.Minute, hostSome: burstPSI(0.3, 4*time.Second, ats...), procs: ps,
		victim: &record.Victim{PID: 200, Comm: "websvc", How: record.VictimFromProbe}}
}

// TestScenarioVictimReadsBack: the victim's own reads in its episodes
// are as likely the stall's effect (its pages read back after reclaim
// took them) as its cause: without a traced chain they name nobody; the
// recurrence is unknown, the victim listed as read-back and the
// recording said to lack what took its memory. The old model named the
// victim as its own culprit ("websvc — process").
func TestScenarioVictimReadsBack(t *testing.T) {
	res := Analyze(victimSelfScenario(true).build(), Options{})
	if len(res.Culprits) != 1 || res.Culprits[0].Kind != KindUnknown {
		t.Fatalf("culprits %v (%+v); want one of kind unknown", names(res), res.Culprits)
	}
	c := res.Culprits[0]
	if len(c.Programs) == 0 || c.Programs[0].Program != "websvc" || c.Programs[0].Unnamed != UnnamedVictim {
		t.Errorf("programs %+v; want websvc first, unnamed as the victim", c.Programs)
	}
	// (No process events in the scenario: the recording lacks them too.)
	if !slices.Equal(c.Missing, []Missing{MissingVictimSelf, MissingEvents}) {
		t.Errorf("missing %v; want [victim_self events]", c.Missing)
	}
	if v := res.VictimReads; v == nil || *v != (VictimReads{Program: "websvc", Episodes: 11, Of: 11}) {
		t.Errorf("victim reads %+v; want websvc in 11 of 11", v)
	}
	// Writing, the service's own I/O is its own: named.
	res = Analyze(victimSelfScenario(false).build(), Options{})
	if len(res.Culprits) != 1 || res.Culprits[0].Kind != KindProcess || res.Culprits[0].Name != "websvc" || res.VictimReads != nil {
		t.Errorf("writing: culprits %v, victim reads %+v; want websvc, a process pattern, and no reads set aside", names(res), res.VictimReads)
	}
}
