package correlate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/timers"
)

// The new-user trial's loop cases (notes trial-s5, F1–F4): a loop
// started before the recording runs cat of a 400 MiB file every 26 s
// while an unrelated shell harness execs tiny cats several times a
// second. Processes are pooled into one recurring pattern by program and
// lineage, never by program name alone.

// decoyCats are the harness's zero-byte cats: binary_backend 12536 runs
// sh 12537, which execs "cat /tmp/bash_jobs.0/…/stdout" every 0.7 s. The
// harness was started before the recording and does no I/O, so only its
// children's exec and exit events are recorded.
func decoyCats(dur time.Duration) []sproc {
	var ps []sproc
	for k := 0; time.Duration(k)*700*time.Millisecond+sec(0.35) < dur; k++ {
		a := time.Duration(k)*700*time.Millisecond + sec(0.35)
		ps = append(ps, sproc{pid: 40000 + k, ppid: 12537, comm: "cat",
			cmdline: fmt.Sprintf("cat /tmp/bash_jobs.0/%04x/stdout", k), from: a, to: a + 20*time.Millisecond})
	}
	return ps
}

// harness is the shell harness behind the decoy cats, and the login
// shell behind the loops, all started before the recording.
var harness = []sproc{
	{pid: 12536, ppid: 1, comm: "binary_backend", cmdline: "/usr/local/bin/binary_backend"},
	{pid: 12537, ppid: 12536, comm: "sh", cmdline: "/bin/sh"},
	{pid: 900, ppid: 1, comm: "bash", cmdline: "-bash"},
}

// loopDecoyScenario: s5job.sh 2100 (`while true; do sleep 20; cat
// /var/tmp/s5big.dat >/dev/null; done`, started before the recording,
// no I/O of its own) runs cat every 26 s; each cat reads 400 MiB in 3 s
// and stalls the host. The decoy cats run beside it.
func loopDecoyScenario(dur time.Duration) (scenario, []time.Duration) {
	ats := offs(26*time.Second, int(dur/(26*time.Second))+1, 12*time.Second)
	for len(ats) > 0 && ats[len(ats)-1]+4*time.Second > dur {
		ats = ats[:len(ats)-1]
	}
	ps := append(decoyCats(dur), harness...)
	ps = append(ps, sproc{pid: 2100, ppid: 900, comm: "s5job.sh", cmdline: "/bin/bash /var/tmp/s5/s5job.sh"})
	for k, a := range ats {
		ps = append(ps, sproc{pid: 3000 + k, ppid: 2100, comm: "cat", cmdline: "cat /var/tmp/s5big.dat",
			from: a - sec(0.2), to: a + sec(3.1), bps: every(400*mib/3, 3*time.Second, a)})
	}
	return scenario{dur: dur, hostSome: burstPSI(0.3, 3*time.Second, ats...), procs: ps}, ats
}

// F2: with 6 runs the loop's cat is named, but the old model pooled every
// "cat" and took the command line and ancestry of whichever came first
// (a zero-byte decoy), and counted the decoys' PIDs.
func TestScenarioLoopDecoyRepresentative(t *testing.T) {
	s, ats := loopDecoyScenario(150 * time.Second)
	res := Analyze(s.build(), Options{Project: timers.Project})
	if len(res.Culprits) == 0 {
		t.Fatalf("no culprit; %d episodes, period %+v", len(res.Episodes), res.Period)
	}
	c := res.Culprits[0]
	if c.Name != "cat" || c.Kind != KindProcess {
		t.Fatalf("top culprit %s (%s); want cat (process)", c.Name, c.Kind)
	}
	checkLoopCat(t, c, len(ats))
}

// checkLoopCat: the culprit's evidence is the loop's cat's: its command
// line, started by the loop, one PID per credited run, every line with
// the same count.
func checkLoopCat(t *testing.T, c Culprit, runs int) {
	t.Helper()
	if c.EpisodesExplained != runs || len(c.Proof.Credits) != runs || c.Runs != runs {
		t.Errorf("explains %d, %d credits, %d PIDs; want %d of each", c.EpisodesExplained, len(c.Proof.Credits), c.Runs, runs)
	}
	if len(c.Processes) != 1 {
		t.Fatalf("processes %+v; want the loop's cat only", c.Processes)
	}
	p := c.Processes[0]
	if p.Cmdline != "cat /var/tmp/s5big.dat" || len(p.StartedBy) == 0 || !strings.HasSuffix(p.StartedBy[0], " 2100") {
		t.Errorf("process %q started by %v; want cat /var/tmp/s5big.dat started by the loop (PID 2100)", p.Cmdline, p.StartedBy)
	}
	if !near400(p.Bytes(), runs) {
		t.Errorf("its I/O %d B; want %d runs × 400 MiB", p.Bytes(), runs)
	}
	if sp := c.Proof.StartsPeriod; sp == nil || len(c.Proof.Starts) != runs || sp.Period < 25*time.Second || sp.Period > 27*time.Second {
		t.Errorf("starts %v, period %+v; want the loop cats' %d starts every 26 s", c.Proof.Starts, sp, runs)
	}
}

// F1: with 3 runs of 3 expected the old model said "No culprit: a
// recurrence too weak to attribute": the decoys' starts made "cat"'s
// starts not recur.
func TestScenarioLoopDecoyThreeRuns(t *testing.T) {
	s, ats := loopDecoyScenario(90 * time.Second)
	res := Analyze(s.build(), Options{Project: timers.Project})
	if len(res.Episodes) != len(ats) || len(ats) != 3 {
		t.Fatalf("%d episodes, %d runs; want 3 of each", len(res.Episodes), len(ats))
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "cat" {
		t.Fatalf("culprits %v; want cat, started by the loop", names(res))
	}
	checkLoopCat(t, res.Culprits[0], 3)
}

// cronScriptScenario: s5cron.sh 5420 (`while true; do sleep 20;
// /var/tmp/s5/s5nightly.sh; done`, started before the recording) runs a
// fresh s5nightly.sh each time, which runs python3 (a 4–6 s pyenv shim,
// fadvise) and then cat of 400 MiB. With busy set, another tenant's
// "cached" does 2 GiB in the last run's episode.
func cronScriptScenario(dur time.Duration, busy bool) (scenario, []time.Duration) {
	ats := offs(26*time.Second, int(dur/(26*time.Second))+1, 12*time.Second)
	for len(ats) > 0 && ats[len(ats)-1]+4*time.Second > dur {
		ats = ats[:len(ats)-1]
	}
	ps := append(decoyCats(dur), harness...)
	ps = append(ps, sproc{pid: 5420, ppid: 900, comm: "s5cron.sh", cmdline: "/bin/bash /var/tmp/s5/s5cron.sh"})
	for k, a := range ats {
		sh := 5930 + 10*k
		ps = append(ps,
			sproc{pid: sh, ppid: 5420, comm: "s5nightly.sh", cmdline: "/bin/bash /var/tmp/s5/s5nightly.sh", from: a - 6*time.Second, to: a + sec(3.2)},
			sproc{pid: sh + 1, ppid: sh, comm: "python3", cmdline: "python3 -c import os", from: a - sec(5.9), to: a - sec(0.4)},
			sproc{pid: sh + 2, ppid: sh, comm: "cat", cmdline: "cat /var/tmp/s5big.dat", from: a - sec(0.3), to: a + sec(3.1),
				bps: every(400*mib/3, 3*time.Second, a)})
	}
	if busy {
		a := ats[len(ats)-1]
		ps = append(ps, sproc{pid: 777, ppid: 1, comm: "cached", cmdline: "/usr/bin/cached", unit: "cached.service",
			from: a - sec(0.5), to: a + 4*time.Second, bps: every(2048*mib/3, 3*time.Second, a)})
	}
	return scenario{dur: dur, hostSome: burstPSI(0.3, 3*time.Second, ats...), procs: ps}, ats
}

// F3 and F4: the job is s5nightly.sh, its cat's bytes credited to it
// through ancestry (one pattern, not s5nightly.sh and cat apart), every
// cat started by its s5nightly.sh, and one count of credited episodes
// and runs used everywhere.
func TestScenarioCronScript(t *testing.T) {
	for _, c := range []struct {
		name string
		dur  time.Duration
		busy bool
		runs int // credited
	}{{"F3-90s", 90 * time.Second, false, 3}, {"F4-180s", 180 * time.Second, true, 6}} {
		t.Run(c.name, func(t *testing.T) {
			s, ats := cronScriptScenario(c.dur, c.busy)
			res := Analyze(s.build(), Options{Project: timers.Project})
			for i := range res.Episodes {
				for _, p := range res.Episodes[i].Processes {
					if p.Comm == "cat" && (len(p.StartedBy) == 0 || !strings.HasPrefix(p.StartedBy[0], "s5nightly.sh ")) {
						t.Errorf("episode %d: cat %d started by %v; want its s5nightly.sh first", i, p.PID, p.StartedBy)
					}
				}
			}
			if len(res.Culprits) == 0 {
				t.Fatalf("no culprit; %d episodes, period %+v", len(res.Episodes), res.Period)
			}
			cu := res.Culprits[0]
			if cu.Name != "s5nightly.sh" || cu.Kind != KindProcess {
				t.Fatalf("culprits %v; want s5nightly.sh (process) first", names(res))
			}
			if cu.EpisodesExplained != c.runs || len(cu.Proof.Credits) != c.runs || cu.Runs != c.runs {
				t.Errorf("explains %d, %d credits, %d PIDs; want %d of each", cu.EpisodesExplained, len(cu.Proof.Credits), cu.Runs, c.runs)
			}
			if len(cu.Programs) != 1 || cu.Programs[0].Episodes != c.runs {
				t.Errorf("programs %+v; want s5nightly.sh alone, credited with %d", cu.Programs, c.runs)
			}
			if len(cu.Processes) != 1 || cu.Processes[0].Cmdline != "/bin/bash /var/tmp/s5/s5nightly.sh" ||
				!slices.Equal(cu.Processes[0].StartedBy, []string{"? 5420"}) || !near400(cu.Processes[0].Bytes(), c.runs) {
				t.Errorf("processes %+v; want s5nightly.sh started by 5420 with its cats' %d × 400 MiB", cu.Processes, c.runs)
			}
			if sp := cu.Proof.StartsPeriod; sp == nil || len(cu.Proof.Starts) != len(ats) || sp.Matched != len(ats) {
				t.Errorf("starts %v, period %+v; want all %d s5nightly.sh starts on the schedule", cu.Proof.Starts, sp, len(ats))
			}
			for _, o := range res.Culprits[1:] {
				t.Errorf("also named: %s (%s, %.2f)", o.Name, o.Kind, o.Confidence)
			}
		})
	}
}

// near400 reports whether b is runs × 400 MiB, give or take the
// builder's rounding (a few bytes per run).
func near400(b uint64, runs int) bool {
	want := uint64(runs) * 400 * mib
	return b+1024 >= want && b <= want+1024
}

// When watch records a pre-existing parent's identity at its child's
// exec (process.Event.ParentComm …), started_by names the loop by its
// program, and the pattern is still the loop's runs alone.
func TestScenarioLoopParentDescribed(t *testing.T) {
	s, ats := loopDecoyScenario(150 * time.Second)
	s.describeParents = true
	res := Analyze(s.build(), Options{Project: timers.Project})
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "cat" {
		t.Fatalf("culprits %v; want cat", names(res))
	}
	checkLoopCat(t, res.Culprits[0], len(ats))
	if got := res.Culprits[0].Processes[0].StartedBy; !slices.Equal(got, []string{"s5job.sh 2100"}) {
		t.Errorf("cat started by %v; want [s5job.sh 2100]", got)
	}
	s, _ = cronScriptScenario(180*time.Second, true)
	s.describeParents = true
	res = Analyze(s.build(), Options{Project: timers.Project})
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "s5nightly.sh" || res.Culprits[0].EpisodesExplained != 6 {
		t.Fatalf("culprits %v; want s5nightly.sh explaining 6", names(res))
	}
	if got := res.Culprits[0].Processes[0].StartedBy; !slices.Equal(got, []string{"s5cron.sh 5420"}) {
		t.Errorf("s5nightly.sh started by %v; want [s5cron.sh 5420]", got)
	}
}

// loopShortCatScenario has the shape of the e2e loop-decoy recording
// that named only "unknown" (3a6d895): loop.sh 27550 (started before the
// recording in the group's session scope) runs `cat big.dat` every
// 10.3 s; each cat reads 300 MiB in under half a second, between two
// samples, so its I/O is in its exit event only — except run 2, which
// exec'd 0.1 s before a sample: that sample saw 75 MiB of it, in the
// interval before the group's stall began, and its exit the rest. The
// web service reads beside it; a decoy shell outside the group execs
// zero-byte cats five times a second.
func loopShortCatScenario() (scenario, []time.Duration) {
	const dur = 50 * time.Second
	ats := offs(10300*time.Millisecond, 5, 3300*time.Millisecond)
	ats[2] = 23900 * time.Millisecond
	var stalls []time.Duration
	ps := []sproc{
		{pid: 900, ppid: 1, comm: "bash", cmdline: "-bash", cgroup: "/service/session.scope"},
		{pid: 27550, ppid: 900, comm: "loop.sh", cmdline: "/bin/sh /var/tmp/loop.sh 12.244s", cgroup: "/service/session.scope"},
		{pid: 27540, ppid: 900, comm: "decoy.sh", cmdline: "/bin/sh /var/tmp/decoy.sh", cgroup: "/user.slice/decoy.scope"},
	}
	for k, a := range ats {
		cat := sproc{pid: 27600 + 100*k, ppid: 27550, comm: "cat", cmdline: "cat /var/tmp/big.dat", cgroup: "/service/session.scope",
			from: a, to: a + 400*time.Millisecond, bps: every(300*mib/0.4, 400*time.Millisecond, a), hideAfter: a}
		stall := a.Truncate(time.Second)
		if k == 2 {
			cat.hideAfter = 24 * time.Second // the sample at 24 s saw it
			stall = 24 * time.Second         // the stall began after it
		}
		stalls = append(stalls, stall)
		ps = append(ps,
			sproc{pid: cat.pid - 1, ppid: 27550, comm: "dd", cmdline: "dd if=/var/tmp/big.dat iflag=nocache count=0 status=none", cgroup: "/service/session.scope",
				from: a - 20*time.Millisecond, to: a - 10*time.Millisecond},
			cat)
	}
	web := every(20*mib, 3*time.Second, stalls...)
	ps = append(ps, sproc{pid: 27543, ppid: 1, comm: "websvc", cmdline: "/usr/bin/websvc -data /var/lib/web.dat", unit: "web.service", cgroup: "/service/web.service",
		bps: func(t time.Duration) float64 { return 512<<10 + web(t) }})
	for k := 0; time.Duration(k)*200*time.Millisecond+sec(0.1) < dur; k++ {
		a := time.Duration(k)*200*time.Millisecond + sec(0.1)
		ps = append(ps, sproc{pid: 30000 + k, ppid: 27540, comm: "cat", cmdline: "cat /etc/hostname", cgroup: "/user.slice/decoy.scope",
			from: a, to: a + 5*time.Millisecond})
	}
	psi := burstPSI(0.25, 3*time.Second, stalls...)
	return scenario{dur: dur, hostSome: psi, cgSome: psi, procs: ps, describeParents: true}, ats
}

// The loop's cat is named, though every byte of it was seen between
// samples (its exit) but the 75 MiB of run 2 sampled just before its
// episode: that interval's I/O is the episode's (the cat started in it),
// not evidence that cat is as busy outside the episodes as in them.
func TestScenarioLoopShortCats(t *testing.T) {
	s, ats := loopShortCatScenario()
	res := Analyze(s.build(), Options{Project: timers.Project})
	if len(res.Episodes) != len(ats) {
		t.Fatalf("%d episodes; want %d", len(res.Episodes), len(ats))
	}
	if len(res.Culprits) == 0 {
		t.Fatalf("no culprit; period %+v", res.Period)
	}
	c := res.Culprits[0]
	if c.Name != "cat" || c.Kind != KindProcess || c.EpisodesExplained != len(ats) {
		t.Fatalf("culprits %v (%s, explains %d); want cat (process) explaining %d", names(res), c.Kind, c.EpisodesExplained, len(ats))
	}
	p := c.Processes[0]
	if p.Cmdline != "cat /var/tmp/big.dat" || len(p.StartedBy) == 0 || p.StartedBy[0] != "loop.sh 27550" {
		t.Errorf("process %q started by %v; want cat /var/tmp/big.dat started by loop.sh 27550", p.Cmdline, p.StartedBy)
	}
	if c.Confidence < 0.75 {
		t.Errorf("confidence %.2f (proof %+v); want high: 5 of 5 runs, each most of its episode's I/O, none outside", c.Confidence, c.Proof)
	}
	for _, o := range res.Culprits[1:] {
		t.Errorf("also named: %s (%s, %.2f)", o.Name, o.Kind, o.Confidence)
	}
}

// busyShortCatScenario: the stalls of scenario 12 (every 10 s, from
// something the recording does not see), and a shell loop that runs a
// short cat of 40 MiB every 2 s from start to end, each between two
// samples (its I/O in its exit event only). Each episode holds a cat or
// two, and so does every stretch between them.
func busyShortCatScenario() scenario {
	s := unexplainedScenario(false)
	s.procs = append(s.procs, sproc{pid: 600, ppid: 1, comm: "poller.sh", cmdline: "/bin/sh /usr/local/bin/poller.sh"})
	for k := 0; time.Duration(k)*2*time.Second+sec(1.3) < s.dur; k++ {
		a := time.Duration(k)*2*time.Second + sec(1.3)
		s.procs = append(s.procs, sproc{pid: 700 + k, ppid: 600, comm: "cat", cmdline: "cat /var/lib/poller/state", from: a, to: a + sec(0.3),
			bps: every(40*mib/0.2, sec(0.2), a), hideAfter: a})
	}
	return s
}

// A process whose I/O is seen only at its exit is busy where it exits:
// the loop's cats are as busy between the episodes as in them, so they
// explain nothing. The old model saw their I/O in episodes (the episode
// counts exit totals) and nowhere else, and named cat.
func TestScenarioBusyShortCats(t *testing.T) {
	res := Analyze(busyShortCatScenario().build(), Options{Project: timers.Project})
	if len(res.Culprits) != 1 || res.Culprits[0].Kind != KindUnknown {
		t.Fatalf("culprits %v; want one unknown: the cats are as busy outside the episodes", names(res))
	}
	c := res.Culprits[0]
	if len(c.Programs) != 1 || c.Programs[0].Program != "cat" || c.Programs[0].Unnamed != UnnamedBusy || !slices.Contains(c.Missing, MissingBusy) {
		t.Errorf("programs %+v, missing %v; want cat, busy", c.Programs, c.Missing)
	}
}
