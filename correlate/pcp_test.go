package correlate

import (
	"fmt"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// pcpScenario is PCP's own pattern on Debian (testdata/timers/debian):
// pmlogger_check.timer fires at :25:00 and :55:00, pmlogger_farm_check.timer
// at :25:10 and :55:10, both half-hourly, 10 s apart. At each firing the
// busy one's service (farm: pmlogctl -m check; else pmlogger_check) runs
// for 10 minutes and starts a train of short-lived children, one every
// 30 s, each writing 40 MiB/s for 20 s: the memory stall lasts the train.
// The other service starts too and exits within 2 s having written
// 64 KiB. Both trains' children are called pmlogger: only their units
// (the service whose cgroup they run in) tell whose they are.
func pcpScenario(farm bool) scenario {
	start := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	check := withPeriod(sysTimer("pmlogger_check.timer", "*-*-* *:25:00", "/usr/lib/pcp/bin/pmlogger_check --skip-primary"), 30*time.Minute)
	check.Schedule = []string{"*-*-* *:25:00", "*-*-* *:55:00"}
	farmJob := withPeriod(sysTimer("pmlogger_farm_check.timer", "*-*-* *:25:10", "/usr/bin/pmlogctl -m check"), 30*time.Minute)
	farmJob.Schedule = []string{"*-*-* *:25:10", "*-*-* *:55:10"}
	type svc struct {
		comm, cmdline, unit string
		fire                time.Duration // after the hour and half hour
	}
	busy := svc{"pmlogger_check", "/bin/sh /usr/lib/pcp/bin/pmlogger_check --skip-primary", "pmlogger_check.service", 25 * time.Minute}
	idle := svc{"pmlogctl", "/usr/bin/pmlogctl -m check", "pmlogger_farm_check.service", 25*time.Minute + 10*time.Second}
	if farm {
		busy, idle = idle, busy
	}
	var ps []sproc
	var stalls []time.Duration
	pid := 20000
	for h := range 6 { // 12:25 to 14:55, every half hour
		base := time.Duration(h) * 30 * time.Minute
		b, i := base+busy.fire, base+idle.fire
		stalls = append(stalls, b)
		pid++
		parent := pid
		ps = append(ps, sproc{pid: parent, ppid: 1, comm: busy.comm, cmdline: busy.cmdline, unit: busy.unit,
			from: b + sec(0.3), to: b + 10*time.Minute, bps: steady(8 << 10)})
		for k := range 20 {
			a := b + time.Second + time.Duration(k)*30*time.Second
			pid++
			ps = append(ps, sproc{pid: pid, ppid: parent, comm: "pmlogger", cmdline: fmt.Sprintf("pmlogger -c config.%d -m check", k), unit: busy.unit,
				from: a, to: a + 20*time.Second, bps: every(40*mib, 20*time.Second, a)})
		}
		pid++
		ps = append(ps, sproc{pid: pid, ppid: 1, comm: idle.comm, cmdline: idle.cmdline, unit: idle.unit,
			from: i + sec(0.3), to: i + 2*time.Second, bps: every(32<<10, 2*time.Second, i)})
	}
	return scenario{start: start, interval: 10 * time.Second, dur: 3 * time.Hour,
		hostSome: burstPSI(0.25, 10*time.Minute, stalls...), procs: ps, jobs: []record.Job{check, farmJob}}
}

// TestScenarioPCPFarmCheckTrain (issue 30.13): a 10-minute train from
// pmlogger_farm_check's short-lived children is pmlogger_farm_check.timer's,
// not the half-hourly pmlogger_check.timer's that fires 10 s before it;
// and the same train from pmlogger_check's children is pmlogger_check's,
// not pmlogger_farm_check's. Firing times cannot tell them apart; the
// children's unit does.
func TestScenarioPCPFarmCheckTrain(t *testing.T) {
	for _, farm := range []bool{true, false} {
		want, other := "pmlogger_check.timer", "pmlogger_farm_check.timer"
		if farm {
			want, other = other, want
		}
		t.Run(want, func(t *testing.T) {
			res := Analyze(pcpScenario(farm).build(), Options{Project: timers.Project})
			if len(res.Episodes) != 6 {
				t.Errorf("%d episodes, want 6 (one per train)", len(res.Episodes))
			}
			if len(res.Culprits) == 0 || res.Culprits[0].Name != want {
				t.Fatalf("culprits %v; want %s first", names(res), want)
			}
			c := res.Culprits[0]
			if c.EpisodesExplained != 6 || c.ConfidenceLabel() != "high" {
				t.Errorf("%s explains %d of 6 episodes at %.2f (%s); want 6, high", want, c.EpisodesExplained, c.Confidence, c.ConfidenceLabel())
			}
			for _, o := range res.Culprits[1:] {
				t.Errorf("%s also named (%.2f, %s, episodes %v); want %s alone: %s wrote 64 KiB a firing", o.Name, o.Confidence, o.ConfidenceLabel(), o.Episodes, want, other)
			}
		})
	}
}
