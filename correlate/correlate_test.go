package correlate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

const mib = 1 << 20

// unionCase is the reference case: two 20-minute timers offset by 10
// minutes (a 10-minute union), with start jitter, one firing that did
// nothing (13:15), one unrelated burst (13:40), one latency spike with calm
// kernel signals (12:58:10), a decoy timer firing at :10/:30/:50 between
// the episodes, and the service itself writing 1 MiB/s all the time.
func unionCase() synth {
	var bs []burst
	pid := 1000
	add := func(hms, comm, unit string) {
		pid++
		bs = append(bs, burst{at: at(hms), dur: 90 * time.Second, comm: comm, unit: unit, pid: pid,
			writeBps: 60 * mib, latency: 2500 * time.Millisecond})
	}
	for _, hms := range []string{"12:05:10", "12:25:40", "12:45:25", "13:05:05", "13:25:50", "13:45:30"} {
		add(hms, "pmlogger_check", "pmlogger_check.service")
	}
	for _, hms := range []string{"12:15:20", "12:35:35", "12:55:15", "13:35:45", "13:55:10"} {
		add(hms, "pmlogger_farm_c", "pmlogger_farm_check.service")
	}
	add("13:40:00", "updatedb.plocat", "")
	bs = append(bs, burst{at: at("12:58:10"), dur: 20 * time.Second, noSignal: true, latency: 1500 * time.Millisecond})
	var starts []burst
	for i, hms := range []string{"12:10:05", "12:30:05", "12:50:05", "13:10:05", "13:30:05", "13:50:05"} {
		starts = append(starts, burst{at: at(hms), comm: "decoy-job", unit: "decoy.service", pid: 2000 + i})
	}
	return synth{
		bursts: bs, starts: starts, steady: "webapp", steadyUnit: "webapp.service", steadyBps: 1 * mib,
		jobs: []record.Job{
			timerJob("pmlogger_check.timer", "*:05/20", "/usr/libexec/pcp/bin/pmlogger_check -C"),
			timerJob("pmlogger_farm_check.timer", "*:15/20", "/usr/libexec/pcp/bin/pmlogger_farm_check"),
			timerJob("decoy.timer", "*:10/20", "/usr/local/bin/decoy-job"),
		},
	}
}

func TestAnalyzeUnionOfTwoTimers(t *testing.T) {
	rec := unionCase().build(t)
	res := Analyze(rec, Options{Project: testProject})

	if !res.HasLatency {
		t.Fatal("HasLatency = false, want true")
	}
	var starts []string
	for _, e := range res.Episodes {
		starts = append(starts, e.Start.Format("15:04:05"))
	}
	wantStarts := []string{"12:05:00", "12:15:00", "12:25:30", "12:35:30", "12:45:00", "12:55:00",
		"13:05:00", "13:25:30", "13:35:30", "13:40:00", "13:45:30", "13:55:00"}
	if d := cmp.Diff(wantStarts, starts); d != "" {
		t.Fatalf("episode starts (-want +got):\n%s", d)
	}

	p := res.Period
	if p == nil {
		t.Fatal("no period found, want 10m")
	}
	if d := p.Period - 10*time.Minute; d < -10*time.Second || d > 10*time.Second {
		t.Errorf("period = %v, want 10m ± 10s", p.Period)
	}
	// 12 schedule points 12:05..13:55; 13:15 missed; 13:40 off it.
	if p.Matched != 11 || p.Expected != 12 || p.Missed != 1 || p.Extra != 1 {
		t.Errorf("period matched/expected/missed/extra = %d/%d/%d/%d, want 11/12/1/1", p.Matched, p.Expected, p.Missed, p.Extra)
	}
	if got := p.Phase.Format("15:04"); got != "12:05" {
		t.Errorf("phase = %s, want 12:05", got)
	}
	// The spikes recur likewise; the 12:58 spike outside episodes is one
	// more off the schedule.
	if sp := res.SpikePeriod; sp == nil || sp.Matched != 11 || sp.Extra != 2 {
		t.Errorf("spike period = %+v, want 11 matched and 2 off schedule", sp)
	}

	type row struct {
		Name             string
		Kind             Kind
		Explained, Total int
		Matched, Firings int
		Procs            string
		HighConfidence   bool
	}
	var got []row
	for _, c := range res.Culprits {
		var procs []string
		for _, pr := range c.Processes {
			procs = append(procs, pr.Comm)
		}
		got = append(got, row{c.Name, c.Kind, c.EpisodesExplained, c.EpisodesTotal, c.FiringsMatched, c.Firings,
			strings.Join(procs, ","), c.ConfidenceLabel() == "high"})
	}
	want := []row{
		{"pmlogger_check.timer", KindTimer, 6, 12, 6, 6, "pmlogger_check", true},
		{"pmlogger_farm_check.timer", KindTimer, 5, 12, 5, 6, "pmlogger_farm_c", true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("culprits (-want +got):\n%s", d)
	}
	if len(res.Culprits) > 0 {
		c := res.Culprits[0]
		// The builder charges a burst's full rate to each 30 s interval it
		// touches: 4 intervals for the five unaligned starts, 3 for 13:45:30,
		// so (5×4+3) × 30 s × 60 MiB/s / 6 = 6900 MiB per episode.
		if c.BytesPerEpisode != 6900*mib {
			t.Errorf("bytes per episode = %s, want 6.7 GiB", FormatBytes(c.BytesPerEpisode))
		}
		// "6 of 6 firings in the recording were followed within 1m by
		// an episode" (report writes it).
		if c.FiringsMatched != 6 || c.Firings != 6 || c.Lag != time.Minute || !c.Proof.FiringsUsed {
			t.Errorf("firings %d of %d within %s (used %v); want 6 of 6 within 1m", c.FiringsMatched, c.Firings, c.Lag, c.Proof.FiringsUsed)
		}
	}

	// The latency spike with calm kernel signals is a spike outside
	// episodes.
	if d := cmp.Diff([]Spike{{Start: at("12:58:00"), End: at("12:58:30"), LatencyPeak: 1500 * time.Millisecond}}, res.LoneSpikes); d != "" {
		t.Errorf("spikes outside episodes (-want +got):\n%s", d)
	}
	// A pmlogger episode raises every signal, and its top I/O process is
	// the job's, not the steady web service.
	e := res.Episodes[0]
	var sigs []Signal
	for _, s := range e.Signals {
		sigs = append(sigs, s.Signal)
	}
	// (but limit reclaim: the synthetic vmstat has pgscan_direct and no
	// pgscan_anon/_file, as before 5.8, so limit reclaim is unknown).
	wantSigs := slices.DeleteFunc(slices.Clone(AllSignals), func(s Signal) bool { return s == LimitReclaim })
	if d := cmp.Diff(wantSigs, sigs); d != "" {
		t.Errorf("signals of the 12:05 episode (-want +got):\n%s", d)
	}
	if e.Culprit != "pmlogger_check.timer" || len(e.Processes) == 0 || e.Processes[0].Comm != "pmlogger_check" ||
		e.Processes[0].Unit != "pmlogger_check.service" || len(e.Started) != 1 {
		t.Errorf("12:05 episode: culprit %q, processes %+v, started %+v", e.Culprit, e.Processes, e.Started)
	}
	if e.LatencyPeak != 2500*time.Millisecond || !e.Spike {
		t.Errorf("12:05 episode latency peak %v spike %v, want 2.5s spike", e.LatencyPeak, e.Spike)
	}
}

// A disabled timer on the same schedule as the culprit does not fire: its
// firings match the episodes on paper only, and its own service never ran.
func TestAnalyzeDisabledTwin(t *testing.T) {
	s := unionCase()
	twin := timerJob("pmlogger_check_twin.timer", "*:05/20", "/usr/local/bin/twin")
	twin.Active = false
	s.jobs = append(s.jobs, twin)
	res := Analyze(s.build(t), Options{Project: testProject})
	if d := cmp.Diff([]string{"pmlogger_check.timer", "pmlogger_farm_check.timer"}, names(res)); d != "" {
		t.Errorf("culprits (-want +got):\n%s", d)
	}
}

// A cron line that runs every minute starts a process in every episode,
// but does no I/O in them: it explains nothing.
func TestAnalyzeMinutelyCron(t *testing.T) {
	s := unionCase()
	one := 60.0
	s.jobs = append(s.jobs, record.Job{Name: "cron.d/tick:1", Source: timers.Cron, File: "etc/cron.d/tick", Line: 1,
		Schedule: []string{"*:00/1"}, PeriodSeconds: &one, Command: "/usr/local/bin/tick", Active: true})
	for i := range 120 {
		s.starts = append(s.starts, burst{at: t0.Add(time.Duration(i)*time.Minute + 2*time.Second), comm: "tick", pid: 9000 + i})
	}
	res := Analyze(s.build(t), Options{Project: testProject})
	if d := cmp.Diff([]string{"pmlogger_check.timer", "pmlogger_farm_check.timer"}, names(res)); d != "" {
		t.Errorf("culprits (-want +got):\n%s", d)
	}
	if got := len(res.Episodes[0].Started); got != 3 {
		t.Errorf("12:05 episode started %d processes, want 3 (pmlogger_check and two ticks)", got)
	}
}

// The decoy fires between the episodes, with its own process starting: it
// must not be named, even alone in the header.
func TestAnalyzeDecoyTimerNotNamed(t *testing.T) {
	s := unionCase()
	s.jobs = s.jobs[2:] // only decoy.timer
	res := Analyze(s.build(t), Options{Project: testProject})
	for _, c := range res.Culprits {
		if c.Name == "decoy.timer" {
			t.Fatalf("decoy named: %+v", c)
		}
	}
	// Without their jobs the pmlogger episodes still recur: they are
	// reported as processes on an unknown schedule, led by pmlogger_check
	// (6 episodes, its own count: its credits), with pmlogger_farm_c
	// (5) beside it, and never as the steady web service.
	if len(res.Culprits) != 1 {
		t.Fatalf("culprits = %+v, want one", res.Culprits)
	}
	c := res.Culprits[0]
	var progs []string
	for _, p := range c.Programs {
		progs = append(progs, fmt.Sprintf("%s %d", p.Program, p.Episodes))
	}
	if c.Kind != KindProcess || c.Name != "pmlogger_check" || c.EpisodesExplained != 6 || len(c.Proof.Credits) != 6 ||
		strings.Join(progs, ",") != "pmlogger_check 6,pmlogger_farm_c 5" {
		t.Errorf("culprit %s %q explains %d (%d credits) with %v; want process pmlogger_check explaining 6 with pmlogger_check 6,pmlogger_farm_c 5",
			c.Kind, c.Name, c.EpisodesExplained, len(c.Proof.Credits), progs)
	}
}

// noPeriodCase: six bursts at irregular times by six different
// processes, and a 20-minute timer whose firings match none of them.
func noPeriodCase() synth {
	var bs []burst
	for i, hms := range []string{"12:07:00", "12:19:00", "12:52:00", "13:03:00", "13:41:00", "13:47:00"} {
		bs = append(bs, burst{at: at(hms), dur: 60 * time.Second, comm: []string{"a", "b", "c", "d", "e", "f"}[i],
			pid: 3000 + i, writeBps: 50 * mib, latency: 2 * time.Second})
	}
	return synth{bursts: bs, jobs: []record.Job{
		timerJob("pmlogger_check.timer", "*:00/20", "/usr/libexec/pcp/bin/pmlogger_check -C"),
	}}
}

func TestAnalyzeNoPeriodicPattern(t *testing.T) {
	s := noPeriodCase()
	res := Analyze(s.build(t), Options{Project: testProject})
	if len(res.Episodes) != 6 {
		t.Fatalf("%d episodes, want 6", len(res.Episodes))
	}
	if res.Period != nil {
		t.Errorf("period = %+v, want none", *res.Period)
	}
	if len(res.Culprits) != 0 {
		t.Errorf("culprits = %+v, want none", res.Culprits)
	}
}

// A database's own schedule: every 15 minutes postgres writes 1.2 GiB, and
// no timer or cron job runs it.
func inProcessCase() synth {
	var bs []burst
	for i := range 8 {
		bs = append(bs, burst{at: t0.Add(3*time.Minute + time.Duration(i)*15*time.Minute), dur: time.Minute,
			comm: "postgres", unit: "postgresql.service", pid: 4000 + i, writeBps: 20 * mib, latency: time.Second})
	}
	return synth{bursts: bs, steady: "postgres", steadyUnit: "postgresql.service", steadyBps: 512 << 10,
		jobs: []record.Job{timerJob("decoy.timer", "*:10/20", "/usr/local/bin/decoy-job")}}
}

func TestAnalyzeInProcessSchedule(t *testing.T) {
	s := inProcessCase()
	res := Analyze(s.build(t), Options{Project: testProject})
	if len(res.Culprits) != 1 {
		t.Fatalf("culprits = %+v, want one", res.Culprits)
	}
	c := res.Culprits[0]
	if c.Kind != KindProcess || c.Name != "postgres" || c.EpisodesExplained != 8 || c.Period != 15*time.Minute {
		t.Errorf("culprit = %s %q explains %d, period %v; want process postgres, 8, 15m", c.Kind, c.Name, c.EpisodesExplained, c.Period)
	}
	// Per episode: 60 s × 20 MiB/s from the burst plus 2 intervals × 30 s ×
	// 512 KiB/s from the steady postgres = 1230 MiB = 1.2 GiB.
	// (report: "recurs every 15m, postgres (postgresql.service) wrote
	// 1.2 GiB per episode (median), no timer or cron job: an in-process schedule?")
	if p := c.Processes[0]; c.NewEachTime || p.Program != "postgres" || p.Unit != "postgresql.service" ||
		p.WriteBytes/uint64(len(c.Proof.Credits)) != 1230*mib {
		t.Errorf("new each time %v, process %+v over %d credits; want postgres in postgresql.service writing 1230 MiB each time",
			c.NewEachTime, p, len(c.Proof.Credits))
	}
}

func TestAnalyzeNewProcessEachTime(t *testing.T) {
	// As a new user's reproduction had it: a shell loop outside any unit
	// starts a new "cat" every 15 minutes. Not an in-process schedule:
	// something starts it, and the advice says to find what.
	var bs []burst
	for i := range 8 {
		bs = append(bs, burst{at: t0.Add(3*time.Minute + time.Duration(i)*15*time.Minute), dur: time.Minute,
			comm: "cat", pid: 7000 + 10*i, writeBps: 20 * mib, latency: time.Second})
	}
	s := synth{bursts: bs, steady: "web", steadyBps: 512 << 10}
	res := Analyze(s.build(t), Options{Project: testProject})
	if len(res.Culprits) != 1 || res.Culprits[0].Name != "cat" {
		t.Fatalf("culprits = %+v, want cat", res.Culprits)
	}
	c := res.Culprits[0]
	if !c.NewEachTime || c.Runs != 8 {
		t.Errorf("NewEachTime %v, runs %d; want a new cat process each time, 8", c.NewEachTime, c.Runs)
	}
	if res2 := Analyze(inProcessCase().build(t), Options{Project: testProject}); len(res2.Culprits) != 1 || res2.Culprits[0].NewEachTime {
		t.Errorf("postgres's own workers are a schedule inside postgresql.service: %+v", res2.Culprits)
	}
}

// A cron job is tied to its episodes through its firings and through its
// command's program name.
func TestAnalyzeCronJob(t *testing.T) {
	var bs []burst
	for i, hms := range []string{"12:30:20", "13:30:20", "14:30:20", "15:30:20"} {
		bs = append(bs, burst{at: at(hms), dur: 2 * time.Minute, comm: "backup.sh", pid: 5000 + i, writeBps: 30 * mib})
	}
	p := 3600.0
	s := synth{dur: 4 * time.Hour, bursts: bs, noLatency: true, jobs: []record.Job{{
		Name: "cron.d/backup:2", Source: timers.Cron, File: "etc/cron.d/backup", Line: 2,
		Schedule: []string{"*:30/60"}, PeriodSeconds: &p, Command: "test -x /usr/local/bin/backup.sh && /usr/local/bin/backup.sh --full",
		User: "root", Active: true,
	}}}
	res := Analyze(s.build(t), Options{Project: testProject})
	if res.HasLatency {
		t.Error("HasLatency = true for a recording without latency")
	}
	if len(res.Culprits) != 1 {
		t.Fatalf("culprits = %+v, want one", res.Culprits)
	}
	c := res.Culprits[0]
	if c.Kind != KindCron || c.Name != "cron.d/backup:2" || c.EpisodesExplained != 4 || c.FiringsMatched != 4 ||
		len(c.Processes) != 1 || c.Processes[0].Comm != "backup.sh" {
		t.Errorf("culprit = %+v", c)
	}
}

// Without a projection function, jobs are still tied to episodes through
// their units, with a warning.
func TestAnalyzeWithoutProjection(t *testing.T) {
	res := Analyze(unionCase().build(t), Options{})
	var names []string
	for _, c := range res.Culprits {
		names = append(names, c.Name)
	}
	if d := cmp.Diff([]string{"pmlogger_check.timer", "pmlogger_farm_check.timer"}, names); d != "" {
		t.Errorf("culprits (-want +got):\n%s", d)
	}
	// Their processes, in their units, did nearly all of the I/O of their
	// episodes and nothing much outside them: high without firings.
	for _, c := range res.Culprits {
		if c.ConfidenceLabel() != "high" || c.Proof.FiringsUsed || c.Proof.FiringsUnused != UnusedNotProjected || len(c.Proof.FiringsMatched) > 0 {
			t.Errorf("%s: confidence %.2f, proof %+v; want high, from process evidence only", c.Name, c.Confidence, c.Proof)
		}
	}
	if !slices.Contains(res.Warnings, Warning{Kind: WarnNotProjected}) {
		t.Errorf("warnings = %+v; want not_projected", res.Warnings)
	}
}

// The end-to-end shape: 1 s samples over 5 minutes, a job firing every 20 s
// (at :00, :20, :40) that writes for 4 s, a decoy firing at :10, :30, :50,
// and systemd's default AccuracySec of 1 minute, wider than the period.
func TestAnalyzeFastTimers(t *testing.T) {
	var bs, starts []burst
	for i := range 15 {
		fire := t0.Add(time.Duration(i) * 20 * time.Second)
		bs = append(bs, burst{at: fire.Add(300 * time.Millisecond), dur: 4 * time.Second, comm: "heavy-io", unit: "heavy-io.service",
			pid: 6000 + i, writeBps: 80 * mib, latency: 900 * time.Millisecond})
		starts = append(starts, burst{at: fire.Add(10*time.Second + 200*time.Millisecond), comm: "decoy", unit: "decoy.service", pid: 7000 + i})
	}
	heavy := timerJob("heavy-io.timer", "*:*:00/20", "/usr/local/bin/heavy-io")
	decoy := timerJob("decoy.timer", "*:*:10/20", "/usr/local/bin/decoy")
	s := synth{interval: time.Second, dur: 5 * time.Minute, bursts: bs, starts: starts, jobs: []record.Job{heavy, decoy},
		steady: "webapp", steadyUnit: "webapp.service", steadyBps: 2 * mib}
	res := Analyze(s.build(t), Options{Project: testProject})
	if len(res.Culprits) != 1 {
		t.Fatalf("culprits = %+v, want heavy-io.timer only", res.Culprits)
	}
	c := res.Culprits[0]
	// The burst at 4:40.3 is cut by the end of the recording at 5:00 but
	// still starts an episode: 15 of 15.
	if c.Name != "heavy-io.timer" || c.EpisodesExplained != len(res.Episodes) || len(res.Episodes) != 15 ||
		c.FiringsMatched != 15 || c.ConfidenceLabel() != "high" {
		t.Errorf("culprit %q explains %d of %d episodes, %d of %d firings, confidence %.2f",
			c.Name, c.EpisodesExplained, len(res.Episodes), c.FiringsMatched, c.Firings, c.Confidence)
	}
	// The firings alone explain the episodes: the 1-minute accuracy window
	// is clamped to a quarter of the period, so it does not cover the
	// whole recording.
	if c.Kind != KindTimer || c.FiringsMatched != 15 || c.Firings != 15 || c.Lag != 5*time.Second {
		t.Errorf("%s, %d of %d firings within %s; want a timer, 15 of 15 within 5s", c.Kind, c.FiringsMatched, c.Firings, c.Lag)
	}
	// 20 MiB/s of page cache lost over 1 s intervals is 20 MiB per
	// interval: below LRUDropMin (32 MiB), so no lru_drop; without the
	// minimum it is raised.
	if _, ok := res.Episodes[0].Has(LRUDrop); ok {
		t.Error("lru_drop raised by a 20 MiB drop")
	}
	th := DefaultThresholds()
	th.LRUDropMin = 0
	if _, ok := Analyze(s.build(t), Options{Project: testProject, Thresholds: &th}).Episodes[0].Has(LRUDrop); !ok {
		t.Error("lru_drop not raised with LRUDropMin 0")
	}
	if res.Period == nil || res.Period.Period < 19*time.Second || res.Period.Period > 21*time.Second {
		t.Errorf("period = %+v, want 20s", res.Period)
	}
}

// On a shared host, PSI of the service's cgroup and a minimum number of
// signals keep other people's work out of the episodes.
func TestAnalyzeSharedHost(t *testing.T) {
	s := inProcessCase()
	// Someone's build writes 40 MiB/s for a minute, twice: disk I/O only.
	s.bursts = append(s.bursts,
		burst{at: at("12:40:00"), dur: time.Minute, comm: "go", pid: 8001, writeBps: 40 * mib, diskOnly: true},
		burst{at: at("13:10:00"), dur: time.Minute, comm: "go", pid: 8002, writeBps: 40 * mib, diskOnly: true})
	s.cgroupCalm = true
	rec := s.build(t)

	count := func(o Options) (eps, withPSI int, scope PSIScope) {
		res := Analyze(rec, o)
		for _, e := range res.Episodes {
			if _, ok := e.Has(PSISome); ok {
				withPSI++
			}
		}
		return len(res.Episodes), withPSI, res.PSIScope
	}
	// Defaults: the cgroup's PSI is read, and required: it stayed calm, so
	// there is no episode; postgres' latency spikes are spikes outside
	// episodes, and a note says how many intervals were left out.
	res := Analyze(rec, Options{})
	if len(res.Episodes) != 0 || len(res.LoneSpikes) != 8 || res.PSIScope != PSICgroup || len(res.IOBursts) != 10 {
		t.Errorf("default: %d episodes, %d spikes, scope %q, %d I/O bursts; want 0, 8, cgroup, 10 (the service's 8 and the 2 builds)",
			len(res.Episodes), len(res.LoneSpikes), res.PSIScope, len(res.IOBursts))
	}
	// Without the requirement, the builds are episodes too.
	if eps, psi, _ := count(Options{Require: []Signal{}}); eps != 10 || psi != 0 {
		t.Errorf("no requirement: %d episodes, %d with PSI; want 10, 0", eps, psi)
	}
	// The host's PSI rises with postgres' bursts; the builds stalled
	// nobody: they are I/O bursts, not episodes.
	if eps, psi, _ := count(Options{PSIScope: PSIHost}); eps != 8 || psi != 8 {
		t.Errorf("host PSI: %d episodes, %d with PSI; want 8, 8", eps, psi)
	}
	if eps, psi, _ := count(Options{PSIScope: PSIHost, Require: []Signal{}}); eps != 10 || psi != 8 {
		t.Errorf("host PSI, no requirement: %d episodes, %d with PSI; want 10, 8", eps, psi)
	}
	// Two signals: the disk-only builds are no longer episodes.
	if eps, _, _ := count(Options{PSIScope: PSIHost, MinSignals: 2}); eps != 8 {
		t.Errorf("MinSignals 2: %d episodes, want 8", eps)
	}
	// Requiring the (host) PSI keeps the 8 postgres bursts only; requiring
	// the calm cgroup's PSI leaves nothing.
	if eps, _, _ := count(Options{PSIScope: PSIHost, Require: []Signal{PSISome}}); eps != 8 {
		t.Errorf("Require psi_some (host): %d episodes, want 8", eps)
	}
	if eps, _, _ := count(Options{Require: []Signal{PSISome, PSIFull}}); eps != 0 {
		t.Errorf("Require psi (cgroup): %d episodes, want 0", eps)
	}
}

// A named job ranks before an unknown recurring cause, even one that
// explains more episodes: "unknown" names nothing.
func TestAnalyzeUnknownRanksLast(t *testing.T) {
	var bs []burst
	for i := range 8 {
		bs = append(bs, burst{at: t0.Add(3*time.Minute + time.Duration(i)*15*time.Minute), dur: time.Minute,
			noProc: true, pid: 100 + i, writeBps: 20 * mib})
	}
	for i, hms := range []string{"12:10:20", "12:40:20", "13:10:20", "13:40:20"} {
		bs = append(bs, burst{at: at(hms), dur: time.Minute, comm: "rotate", unit: "rotate.service", pid: 200 + i, writeBps: 20 * mib})
	}
	s := synth{bursts: bs, jobs: []record.Job{timerJob("rotate.timer", "*:10/30", "/usr/local/bin/rotate")}}
	res := Analyze(s.build(t), Options{Project: testProject})
	var got []string
	for _, c := range res.Culprits {
		got = append(got, fmt.Sprintf("%s %s %d", c.Kind, c.Name, c.EpisodesExplained))
	}
	if d := cmp.Diff([]string{"timer rotate.timer 4", "unknown unknown 8"}, got); d != "" {
		t.Errorf("culprits (-want +got):\n%s", d)
	}
}

// The end-to-end shape of a job's process: a wrapper sh, outside any unit,
// moves itself into the job's cgroup and execs the job (two exec events
// from the connector, without start time); /proc sees the job once, early,
// and its exit event carries the I/O it did after that.
func TestAnalyzeWrappedJobProcess(t *testing.T) {
	var bs []burst
	for i := range 10 {
		bs = append(bs, burst{at: t0.Add(time.Duration(i)*20*time.Second + 300*time.Millisecond), dur: 4 * time.Second,
			noProc: true, pid: 6000 + i, writeBps: 80 * mib, latency: 900 * time.Millisecond})
	}
	heavy := timerJob("heavy-io.timer", "*:*:00/20", "/usr/local/bin/heavy-io")
	s := synth{interval: time.Second, dur: 200 * time.Second, bursts: bs, jobs: []record.Job{heavy}}
	rec := s.build(t)
	for i, b := range bs {
		k := int(b.at.Sub(t0)/time.Second) + 1 // the sample after the firing
		pid := 6000 + i
		rec.Samples[k].Events = append(rec.Samples[k].Events,
			record.Event{Kind: process.Exec, Source: "connector", PID: pid, Comm: "sh"},
			record.Event{Kind: process.Exec, Source: "connector", PID: pid, Comm: "heavy-io", Unit: "heavy-io.service"})
		rec.Samples[k].Procs = append(rec.Samples[k].Procs, record.ProcIO{PID: pid, StartTicks: uint64(900 + i), Comm: "heavy-io",
			Unit: "heavy-io.service", WriteBytes: 24 * mib, DeltaWriteBytes: 24 * mib})
		rec.Samples[k+4].Events = append(rec.Samples[k+4].Events,
			record.Event{Kind: process.Exit, Source: "taskstats", PID: pid, Comm: "heavy-io", Unit: "heavy-io.service",
				ReadBytes: 100 * mib, WriteBytes: 320 * mib})
	}
	// Without projected firings, only the unit ties the process to the job.
	res := Analyze(rec, Options{})
	if len(res.Culprits) != 1 || res.Culprits[0].Name != "heavy-io.timer" {
		t.Fatalf("culprits = %+v, want heavy-io.timer", res.Culprits)
	}
	e := res.Episodes[0]
	want := []ProcActivity{{PID: 6000, Comm: "heavy-io", Program: "heavy-io", Unit: "heavy-io.service", ReadBytes: 100 * mib, WriteBytes: 320 * mib,
		Started: true, Exited: true}}
	if d := cmp.Diff(want, e.Processes); d != "" {
		t.Errorf("first episode's processes (-want +got):\n%s", d)
	}
}

// startedAnew: a new process each time is started from outside its
// program (a loop, a script) unless a service runs it with no recorded
// parent, or its parent runs the same program (a service's own workers).
// Trial s7: a shell loop in trial-cron.service starting trial-nightly.sh
// every 20 s was told to "look for a schedule inside trial-nightly.sh".
func TestStartedAnew(t *testing.T) {
	for _, c := range []struct {
		rep  ProcActivity
		want bool
	}{
		{ProcActivity{Comm: "cat", Program: "cat"}, true},
		{ProcActivity{Comm: "cat", Program: "cat", Unit: "session-3.scope"}, true},
		{ProcActivity{Comm: "postgres", Program: "postgres", Unit: "postgresql.service"}, false},
		{ProcActivity{Comm: "postgres", Program: "postgres", Unit: "postgresql.service", StartedBy: []string{"postgres 555"}}, false},
		{ProcActivity{Comm: "trial-nightly.s", Program: "trial-nightly.sh", Unit: "trial-cron.service", StartedBy: []string{"trial-cron.sh 19114"}}, true},
		{ProcActivity{Comm: "md5sum", Program: "md5sum", Unit: "x.service", StartedBy: []string{"? 12"}}, false},
	} {
		if got := startedAnew(c.rep); got != c.want {
			t.Errorf("startedAnew(%+v) = %v, want %v", c.rep, got, c.want)
		}
	}
}
