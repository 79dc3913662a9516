package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// The reference case recorded for real (issue 27): systemd, PID 1 of a
// systemd-nspawn container on the host's kernel (which has PSI), fires
// pcp's pmlogger_check.timer and pmlogger_farm_check.timer by itself
// through pcp's real units and activation chain, and each firing's
// service does a heavy read that evicts a web service's cache in the
// same memory limit; memdiag watch records in the container, and analyze
// must name both timers with their combined period.
//
// What the test adds to pcp's units, all drop-ins: each timer's
// OnCalendar= is emptied (dropping pcp's OnBootSec=1min too) and set to
// every 20 s, the farm check 10 s after the check (a combined period of
// 10 s), as pcp's own are 10 s apart and the reference case's 10 minutes, with
// AccuracySec=1s; and each service gets two ExecStartPost= that hold
// nspAnonMB of memory for nspHold, then read a cold file for nspReadFor
// (the heavy part of the reference case's jobs, which pcp's checks do
// not do on an idle host). pmlogger_check's own
// ExecStart= runs first, as pcp ships it (User=pcp), and the read runs in
// the service's cgroup, as its user.
const (
	nspReadFor = "2s"
	nspColdMB  = 384
	// nspAnonMB is the memory each job first takes and holds for
	// nspHold, before its read: reads alone recycle mostly their own
	// pages, and beside a CPU-heavy test (the UML guest) 3 of 7 firings
	// made no episode; memory it holds is taken from the web service's
	// cache whatever the CPU does. nspHold is 1 s, and that is one
	// known way this test fails (1 of 16 runs, d2): in the container
	// memdiag polls /proc each second (the process-events connector
	// reports only to the initial PID namespace), and a holder that
	// lived about a second fell between two samples; the first of the
	// job's processes seen was its reader, which began after the stall
	// had, and no job was credited with that episode (effect before
	// cause). Holding for 2 s (ed7fa5e) failed 1 of 7 runs another way
	// (r5, docs/ci.md): the longer pressure merged the check's and the
	// farm check's stalls into one 17 s episode, credited to both, which
	// the per-firing check below refuses. So memdiag watch samples
	// every 500 ms in the container (twice as often as the holder
	// lasts): three runs in a row passed with it (docs/ci.md).
	nspAnonMB = 80
	nspHold   = "1s"
	// nspRecord is the recording: 7 firings of the two timers, 3 or 4
	// of each.
	nspRecord = 72 * time.Second
	// nspLimit is the container's memory limit: the web service's 96
	// MiB of data and 48 MiB of anonymous memory, systemd, journald,
	// D-Bus, pmcd, pmlogger and memdiag watch fit; a read of nspColdMB
	// MiB does not.
	nspLimit = 240 << 20
	// nspPairs and nspBlock are each confirm run's experiment: blocks of
	// 10 s, the two timers' combined period, so every A block holds one
	// firing; six pairs, one more than the fewest that can confirm, so
	// that one pair upset by the host (a B block slowed by other tests)
	// can still leave p ≤ 0.05 (2 or 3 of the 64 sign assignments, when
	// its difference is among the smallest). nspConfirm bounds one run (its
	// blocks, the waits for a firing started before a hold, the start).
	nspPairs   = 6
	nspBlock   = 10 * time.Second
	nspConfirm = 2*nspPairs*nspBlock + time.Minute
	// nspMinEffect is the smallest effect that matters, in percent of A's
	// p99: a block's p99 swings by more than 10 % (the default) from one
	// firing to the next, so five pairs could never refute the decoy at
	// 10 %; the jobs' effect is about 70 %.
	nspMinEffect = 25
)

// nspTimers are the two timers, each with its service, its drop-in
// calendar, its cold file and the program that reads it: one of its
// own per service, as two jobs run different programs (memdiag ties a
// process to every job that runs its program, whatever its unit).
var nspTimers = []struct{ timer, service, calendar, file, reader string }{
	{"pmlogger_check.timer", "pmlogger_check.service", "*:*:00/20", "check.dat", "checkread"},
	{"pmlogger_farm_check.timer", "pmlogger_farm_check.service", "*:*:10/20", "farm.dat", "farmread"},
}

// nspDelayed are timers whose firings systemd delays, started after the
// recording (they run /bin/true during the experiments, in both arms):
// a random delay (RandomizedDelaySec=, drawn anew for each elapse) and
// two whose wide AccuracySec= lets systemd coalesce their wake-ups. Each
// start of their services by systemd must fall in a firing's window as
// memdiag projects it (planned to planned + AccuracySec= +
// RandomizedDelaySec=), and every window that closed before the end must
// hold a start.
var nspDelayed = []struct{ timer, calendar, delay string }{
	{"memdiag-random.timer", "*:*:02/15", "AccuracySec=1s\nRandomizedDelaySec=6s\n"},
	{"memdiag-coalesce-a.timer", "*:*:00/30", "AccuracySec=12s\n"},
	{"memdiag-coalesce-b.timer", "*:*:04/30", "AccuracySec=12s\n"},
}

// nspScript runs as memdiag-e2e.service in the container: it waits until
// systemd is up and the host has started the load (the file go), records
// with memdiag watch (the victim found from --probe, the README's way),
// then saves what systemd says of the timers and powers off.
const nspScript = `set -u
d=%[1]s
bin=/usr/local/lib/memdiag-e2e
systemctl is-system-running --wait > $d/is-system-running 2>&1
cat /proc/1/comm > $d/pid1
until [ -s $d/web.addr ] && [ -e $d/go ]; do sleep 0.2; done
url=http://$(head -n1 $d/web.addr)/
$bin/memdiag watch --out $d/watch.jsonl --interval 500ms --duration %[2]s --quiet --keep-cmdline --probe "$url" --probe-interval 100ms > $d/watch.log 2>&1
echo $? > $d/watch.rc
# The experiment (issue 27): the jobs the recording's verdict names held
# off together in B blocks, then a decoy timer that does nothing heavy.
confirm() {
  $bin/memdiag confirm --pairs %[3]d --block %[4]s --probe "$url" --probe-interval 20ms --min-effect %[5]d --yes -f json "$@" -- sleep 3600
}
# Timers whose firing systemd delays (RandomizedDelaySec=, AccuracySec=),
# started now and checked afterwards against memdiag's projection of them.
date -u +%%Y-%%m-%%dT%%H:%%M:%%S.%%NZ > $d/extra.from
systemctl start %[6]s
confirm --recording $d/watch.jsonl > $d/confirm-culprit.json 2> $d/confirm-culprit.log
echo $? > $d/confirm-culprit.rc
systemctl start memdiag-decoy.timer
confirm --job memdiag-decoy.timer > $d/confirm-decoy.json 2> $d/confirm-decoy.log
echo $? > $d/confirm-decoy.rc
systemctl show -p ActiveState --value pmlogger_check.timer pmlogger_farm_check.timer memdiag-decoy.timer > $d/after-confirm.txt
to=$(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ)
$bin/memdiag timers --from "$(cat $d/extra.from)" --to "$to" -f json > $d/extra-timers.json 2> $d/extra-timers.log
echo "$to" > $d/extra.to
props() {
  p=$(busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager GetUnit s $1 | cut -d'"' -f2)
  busctl get-property org.freedesktop.systemd1 "$p" org.freedesktop.systemd1.Timer LastTriggerUSec
}
for u in pmlogger_check.timer pmlogger_farm_check.timer; do echo $u $(props $u); done > $d/raw.txt
systemctl list-timers --all --no-pager > $d/list-timers.txt 2>&1
journalctl -o json --no-pager _PID=1 > $d/journal-pid1.json
journalctl -o short-iso-precise --no-pager -u pmlogger_check.service -u pmlogger_farm_check.service > $d/journal-pcp.txt
cat /proc/self/cgroup > $d/cgroup
echo done > $d/done
systemctl poweroff
`

// TestNspawnPCPVerdict boots the container, serves and loads the web
// service in it while systemd fires pcp's two timers, and checks that
// analyze of memdiag watch's recording names pmlogger_check.timer and
// pmlogger_farm_check.timer first, with their combined period, each
// credited with episodes that began when systemd started its service
// (the journal's "Starting" of PID 1), not when memdiag projects it.
func TestNspawnPCPVerdict(t *testing.T) {
	testenv.RequireRoot(t, "a systemd-nspawn container, cgroups with a memory limit")
	if os.Getenv("MEMDIAG_E2E_NSPAWN") == "0" {
		// In CI again since the twenty-third session: with memdiag
		// sampling every 500 ms in the container (d2's cause, below)
		// it passed every run, alone and in CI beside the verdict lanes
		// (docs/ci.md). MEMDIAG_E2E_NSPAWN=0 leaves it out.
		t.Skip("MEMDIAG_E2E_NSPAWN=0")
	}
	// Its own memory limit, victim, jobs and container, its verdict from
	// the victim's own PSI: beside the other such tests (testenv.Shared,
	// the UML guest's among them), never beside one that reads the host.
	t.Parallel()
	testenv.Shared(t)
	link := "/etc/systemd/system/multi-user.target.wants/pmlogger.service"
	if _, err := os.Stat(link); err != nil {
		testenv.Unmet(t, fmt.Sprintf("pcp is not installed and enabled (%v): .ci/timers-setup.sh installs it", err))
	}
	began := time.Now()
	memdiag := testenv.BuildMemdiag(t)
	hog := testenv.BuildHog(t)
	websvc := testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/websvc", "websvc")
	c := testenv.NewContainer(t, "memdiag-e2e-nsp", nspLimit)
	built := time.Now()
	d := testenv.ContainerData
	bin := "/usr/local/lib/memdiag-e2e/"
	c.Install(t, memdiag, bin+"memdiag")
	c.Install(t, websvc, bin+"websvc")
	// Timers other tests enable on the host stay off in the container.
	c.Hide(t, "/etc/systemd/system/timers.target.wants")
	for _, pt := range nspTimers {
		out, err := exec.Command(hog, "-direct", "-write", fmt.Sprint(nspColdMB<<20), "-file", filepath.Join(c.Data, pt.file)).CombinedOutput()
		if err != nil {
			t.Fatalf("hog -direct -write: %v\n%s", err, out)
		}
		c.WriteFile(t, "/etc/systemd/system/"+pt.timer+".d/memdiag-e2e.conf",
			"[Timer]\nOnCalendar=\nOnCalendar="+pt.calendar+"\nAccuracySec=1s\n", 0o644)
		c.Install(t, hog, bin+pt.reader)
		c.WriteFile(t, "/etc/systemd/system/"+pt.service+".d/memdiag-e2e.conf",
			fmt.Sprintf("[Service]\nExecStartPost=%[1]s%[2]s -anon %[3]d -hold %[4]s\nExecStartPost=%[1]s%[2]s -file %[5]s/%[6]s -drop -read-for %[7]s\n",
				bin, pt.reader, nspAnonMB<<20, nspHold, d, pt.file, nspReadFor), 0o644)
	}
	c.WriteFile(t, "/etc/systemd/system/memdiag-e2e.target", `[Unit]
Description=memdiag e2e container: basic system, pcp's pmlogger, a web service, the test
Requires=basic.target
After=basic.target
Wants=pmlogger.service memdiag-e2e-web.service memdiag-e2e.service memdiag-persist.timer memdiag-plain.timer
AllowIsolate=yes
`, 0o644)
	c.WriteFile(t, "/etc/systemd/system/memdiag-e2e-web.service", fmt.Sprintf(`[Unit]
Description=memdiag e2e: the web service whose latency is recorded
[Service]
ExecStart=%swebsvc -data %s/web.dat -data-size %d -anon %d
StandardOutput=file:%s/web.addr
# Each request's 256 KiB buffer is garbage after it: unbounded, the Go
# heap doubled the service's 48 MiB to 102 MiB under the confirm runs'
# stalls (requests pile up) and the container's limit OOM-killed it.
Environment=GOMEMLIMIT=64MiB
`, bin, d, 96<<20, 48<<20, d), 0o644)
	// The container ends itself even when the test binary is gone (a
	// timeout's panic runs no cleanup, and a killed nspawn leaves systemd
	// running): the script powers off after recording, and systemd kills
	// it and powers off if it runs longer than RuntimeMaxSec=.
	c.WriteFile(t, "/etc/systemd/system/memdiag-e2e.service", fmt.Sprintf(`[Unit]
Description=memdiag e2e: record while systemd fires pcp's timers, power off
After=basic.target memdiag-e2e-web.service
FailureAction=poweroff-force
[Service]
Type=exec
ExecStart=/bin/sh /etc/memdiag-e2e/run.sh
RuntimeMaxSec=%d
StandardOutput=file:%s/run.log
StandardError=inherit
`, int((nspRecord+2*nspConfirm+3*time.Minute).Seconds()), d), 0o644)
	// The decoy: a timer that fires every 10 s and does nothing heavy,
	// started only for its experiment (after the recording).
	c.WriteFile(t, "/etc/systemd/system/memdiag-decoy.timer", "[Timer]\nOnCalendar=*:*:05/10\nAccuracySec=1s\n", 0o644)
	c.WriteFile(t, "/etc/systemd/system/memdiag-decoy.service", "[Service]\nType=oneshot\nExecStart=/bin/true\n", 0o644)
	var extra []string
	for _, x := range nspDelayed {
		c.WriteFile(t, "/etc/systemd/system/"+x.timer, "[Timer]\nOnCalendar="+x.calendar+"\n"+x.delay, 0o644)
		c.WriteFile(t, "/etc/systemd/system/"+strings.TrimSuffix(x.timer, ".timer")+".service", "[Service]\nType=oneshot\nExecStart=/bin/true\n", 0o644)
		extra = append(extra, x.timer)
	}
	c.WriteFile(t, "/etc/memdiag-e2e/run.sh", fmt.Sprintf(nspScript, d, nspRecord, nspPairs, nspBlock, nspMinEffect, strings.Join(extra, " ")), 0o755)

	persist := writeNspPersistent(t, c, memdiag)

	booted := time.Now()
	wait := c.Boot(t, "memdiag-e2e.target", nspRecord+2*nspConfirm+2*time.Minute)
	exited := make(chan error, 1)
	go func() { exited <- wait() }()
	file := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(c.Data, name))
		return strings.TrimSpace(string(b))
	}
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf(format+"\nrun.log:\n%s\nconsole (last 3000 bytes):\n%s", append(a, file("run.log"), tail(c.ConsoleLog(), 3000))...)
	}
	var addr string
	for addr == "" {
		select {
		case err := <-exited:
			fail("the container ended before its web service listened: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if a, _, ok := strings.Cut(file("web.addr"), "\n"); ok || a != "" {
			addr = a
		}
		if time.Since(booted) > 90*time.Second {
			fail("the container's web service did not listen within 90 s")
		}
	}
	up := time.Now()
	url := "http://" + addr + "/"
	for range 200 { // warm the web service's cache
		if r, err := http.Get(url); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	}
	ctx, stopLoad := context.WithCancel(context.Background())
	var load sync.WaitGroup
	for range 4 { // bounded loopback load: 4 clients
		load.Go(func() {
			cl := &http.Client{Timeout: 10 * time.Second}
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				if r, err := cl.Do(req); err == nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	t.Logf("the container's memory before the recording: %s", memUse(c.Group))
	if err := os.WriteFile(filepath.Join(c.Data, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	stopLoad()
	load.Wait()
	ran := time.Since(booted)
	t.Logf("the container's memory after: %s", memUse(c.Group))
	if file("done") != "done" {
		fail("the container's test unit did not finish (nspawn: %v)", err)
	}
	if err != nil {
		t.Logf("systemd-nspawn: %v", err)
	}
	if pid1 := file("pid1"); pid1 != "systemd" {
		t.Fatalf("PID 1 of the container is %q, want systemd", pid1)
	}
	if rc := file("watch.rc"); rc != "0" {
		fail("memdiag watch in the container exited %s:\n%s", rc, file("watch.log"))
	}
	t.Logf("is-system-running: %s; the container's test unit in %s", file("is-system-running"), file("cgroup"))
	t.Logf("systemctl list-timers --all in the container:\n%s", file("list-timers.txt"))

	rec := filepath.Join(c.Data, "watch.jsonl")
	out, err := exec.Command(memdiag, "analyze", rec, "--format", "json").Output()
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if table, err := exec.Command(memdiag, "analyze", rec, "--no-color").CombinedOutput(); err == nil {
		t.Logf("memdiag analyze:\n%s", table)
	}
	if keep := os.Getenv("MEMDIAG_E2E_KEEP"); keep != "" {
		if err := os.CopyFS(filepath.Join(keep, t.Name()), os.DirFS(c.Data)); err != nil {
			t.Logf("MEMDIAG_E2E_KEEP: %v", err)
		}
	}
	ms := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	t.Logf("timing: build and container %s, boot to the web service %s, recorded and powered off %s (container %s in all)",
		ms(built.Sub(began)), ms(up.Sub(booted)), ms(time.Since(up)), ms(ran))
	res := &vResult{}
	if err := json.Unmarshal(out, res); err != nil {
		t.Fatalf("analyze JSON: %v\n%s", err, out)
	}
	checkNspVerdict(t, res, pid1Starting(t, filepath.Join(c.Data, "journal-pid1.json")), lastTriggers(t, file("raw.txt")))
	checkNspConfirm(t, file, pid1Starting(t, filepath.Join(c.Data, "journal-pid1.json")))
	checkNspDelayed(t, file, pid1Starting(t, filepath.Join(c.Data, "journal-pid1.json")))
	persist.check(t, booted, pid1Starting(t, filepath.Join(c.Data, "journal-pid1.json")))
	if t.Failed() {
		t.Logf("journal of pcp's services:\n%s", file("journal-pcp.txt"))
	}
}

// nspPersistent is what the Persistent= check (issue 27) saw before the
// container booted: memdiag timers --root of its root, the elapse the
// persistent timer missed since its stamp and that stamp.
type nspPersistent struct {
	missed, stamp time.Time
	jobs          map[string]nspTimerJob
}

// nspTimerJob is the part of a job of memdiag timers' JSON the check reads.
type nspTimerJob struct {
	Name        string     `json:"name"`
	LastTrigger *time.Time `json:"last_trigger"`
	CatchUp     *struct {
		Missed      time.Time `json:"missed"`
		LastTrigger time.Time `json:"last_trigger"`
	} `json:"catch_up"`
}

// writeNspPersistent puts two timers into the container, pulled in at
// boot by its target: memdiag-persist.timer (Persistent=true) and
// memdiag-plain.timer (no Persistent=), both daily at a time about 12 h
// from now (no elapse falls in the run), each with a stamp file in
// /var/lib/systemd/timers from 30 h ago, before the last elapse. systemd
// runs the persistent one at boot, for the elapse it missed since its
// stamp, and not the other (systemd.timer(5), Persistent=). Before the
// boot, memdiag timers --root reads the container's root as a mounted
// image and must say so: the run owed, with the elapse missed and the
// stamp, for the first; nothing for the second.
func writeNspPersistent(t *testing.T, c *testenv.Container, memdiag string) *nspPersistent {
	t.Helper()
	now := time.Now().UTC()
	at := now.Add(12 * time.Hour).Truncate(time.Minute)
	p := &nspPersistent{missed: at.Add(-24 * time.Hour), stamp: now.Add(-30 * time.Hour).Truncate(time.Second)}
	for _, x := range []struct {
		name       string
		persistent bool
	}{{"memdiag-persist", true}, {"memdiag-plain", false}} {
		c.WriteFile(t, "/etc/systemd/system/"+x.name+".timer",
			fmt.Sprintf("[Timer]\nOnCalendar=*-*-* %02d:%02d:00 UTC\nAccuracySec=1s\nPersistent=%t\n", at.Hour(), at.Minute(), x.persistent), 0o644)
		c.WriteFile(t, "/etc/systemd/system/"+x.name+".service", "[Service]\nType=oneshot\nExecStart=/bin/true\n", 0o644)
		stamp := "/var/lib/systemd/timers/stamp-" + x.name + ".timer"
		c.WriteFile(t, stamp, "", 0o644)
		if err := os.Chtimes(filepath.Join(c.Seed, stamp), p.stamp, p.stamp); err != nil {
			t.Fatal(err)
		}
	}
	// --all: the container's boot target (memdiag-e2e.target, given on
	// nspawn's command line) is not the root's default.target, so memdiag
	// does not count the two timers as pulled in at boot.
	out, err := exec.Command(memdiag, "timers", "--root", c.Root, "--all", "--format", "json").Output()
	if err != nil {
		t.Fatalf("memdiag timers --root %s: %v", c.Root, err)
	}
	var list struct {
		Jobs []nspTimerJob `json:"jobs"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("memdiag timers --root: %v\n%s", err, out)
	}
	p.jobs = map[string]nspTimerJob{}
	for _, j := range list.Jobs {
		p.jobs[j.Name] = j
	}
	return p
}

// check compares what memdiag said before the boot with what systemd
// did (PID 1's "Starting" in the journal): memdiag-persist.service
// started once, during the boot, memdiag-plain.service never.
func (p *nspPersistent) check(t *testing.T, booted time.Time, starting map[string][]time.Time) {
	t.Helper()
	per, plain := p.jobs["memdiag-persist.timer"], p.jobs["memdiag-plain.timer"]
	if per.LastTrigger == nil || !per.LastTrigger.Equal(p.stamp) || per.CatchUp == nil ||
		!per.CatchUp.Missed.Equal(p.missed) || !per.CatchUp.LastTrigger.Equal(p.stamp) {
		t.Errorf("memdiag timers before the boot: memdiag-persist.timer last trigger %v, catch_up %+v; want the stamp %s and the run owed for %s",
			per.LastTrigger, per.CatchUp, p.stamp.Format(time.RFC3339), p.missed.Format(time.RFC3339))
	}
	if plain.CatchUp != nil || plain.LastTrigger != nil {
		t.Errorf("memdiag timers before the boot: memdiag-plain.timer (no Persistent=) last trigger %v, catch_up %+v; want neither", plain.LastTrigger, plain.CatchUp)
	}
	ps := starting["memdiag-persist.service"]
	if len(ps) != 1 || ps[0].Before(booted) || ps[0].After(booted.Add(90*time.Second)) {
		t.Errorf("systemd started memdiag-persist.service at %v; want once, within 90 s of the boot at %s (Persistent=: the elapse of %s was missed)",
			ps, booted.Format("15:04:05.000"), p.missed.Format(time.RFC3339))
	} else {
		t.Logf("Persistent=: memdiag said memdiag-persist.timer owed the run of %s; systemd started its service %s after the boot",
			p.missed.Format(time.RFC3339), ps[0].Sub(booted).Round(10*time.Millisecond))
	}
	if s := starting["memdiag-plain.service"]; len(s) > 0 {
		t.Errorf("systemd started memdiag-plain.service (no Persistent=) at %v; want never", s)
	}
}

// checkNspConfirm checks the two experiments run after the recording:
// holding off the jobs the verdict names (both pcp timers, together)
// took the web service's spikes away — confirmed; holding off a decoy
// timer that runs /bin/true changed nothing — refuted (or inconclusive,
// never confirmed); and after each,
// systemd says the timers are active again. In the culprit's experiment
// systemd started neither service inside a B block (the journal's
// "Starting"), and every A block that a hold's end began waited for the
// run systemd starts at once when a timer is started again (confirm's
// Experiment.Run): before, the timers were started and stopped between
// the two B blocks of a pair boundary, and A blocks held that run too.
func checkNspConfirm(t *testing.T, file func(string) string, starting map[string][]time.Time) {
	t.Helper()
	type report struct {
		Blocks []struct {
			Block     int       `json:"block"`
			Arm       string    `json:"arm"`
			Start     time.Time `json:"start"`
			WallNS    int64     `json:"wall_ns"`
			SettledNS int64     `json:"settled_ns"`
		} `json:"blocks"`
		Jobs   []string `json:"jobs"`
		Result struct {
			Metric  string  `json:"metric"`
			Verdict string  `json:"verdict"`
			A       float64 `json:"a"`
			B       float64 `json:"b"`
			P       float64 `json:"p"`
		} `json:"result"`
	}
	// The decoy should be refuted, and was in 4 of 5 runs on 2026-12-07;
	// in the fifth one A block's p99 was 21.5 ms against 7.6–8.6 (the
	// host busy with other tests), and five pairs could not rule out an
	// effect: inconclusive, which memdiag rightly said. So the decoy must
	// never be confirmed, and refuted or inconclusive is its verdict.
	for _, run := range []struct {
		name string
		want []string
		jobs []string
	}{
		{"culprit", []string{"confirmed"}, []string{nspTimers[0].timer, nspTimers[1].timer}},
		{"decoy", []string{"refuted", "inconclusive"}, []string{"memdiag-decoy.timer"}},
	} {
		out := file("confirm-" + run.name + ".json")
		t.Logf("confirm (%s): exit %s\n%s\n%s", run.name, file("confirm-"+run.name+".rc"), file("confirm-"+run.name+".log"), out)
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Errorf("confirm (%s): %v", run.name, err)
			continue
		}
		got := slices.Clone(r.Jobs)
		slices.Sort(got)
		if !slices.Equal(got, run.jobs) || r.Result.Metric != "p99_latency_seconds" || !slices.Contains(run.want, r.Result.Verdict) {
			t.Errorf("confirm (%s): held off %v, %s %s; want %v held off, %s", run.name, r.Jobs, r.Result.Metric, r.Result.Verdict, run.jobs, strings.Join(run.want, " or "))
		}
		if run.name != "culprit" {
			continue
		}
		for i, b := range r.Blocks {
			end := b.Start.Add(time.Duration(b.WallNS))
			for _, pt := range nspTimers {
				for _, s := range starting[pt.service] {
					if b.Arm == "B" && !s.Before(b.Start) && !s.After(end) {
						t.Errorf("confirm (culprit): systemd started %s at %s, inside B block %d (%s – %s)", pt.service,
							s.Format("15:04:05.000"), b.Block, b.Start.Format("15:04:05.000"), end.Format("15:04:05.000"))
					}
				}
			}
			if b.Arm == "A" && i > 0 && r.Blocks[i-1].Arm == "B" && b.SettledNS <= 0 {
				t.Errorf("confirm (culprit): A block %d, after a hold, did not wait for the run systemd starts when the timers are started again", b.Block)
			}
		}
	}
	if got := strings.Fields(file("after-confirm.txt")); !slices.Equal(got, []string{"active", "active", "active"}) {
		t.Errorf("after the experiments systemd says the timers are %v; want all active", got)
	}
}

// checkNspDelayed checks memdiag's projection of nspDelayed's firings
// (memdiag timers --from --to, in the container) against when systemd
// started each one's service (PID 1's "Starting" in the journal).
func checkNspDelayed(t *testing.T, file func(string) string, starting map[string][]time.Time) {
	t.Helper()
	var proj struct {
		Firings []struct {
			Job                       string
			Planned, Earliest, Latest time.Time
		}
	}
	if err := json.Unmarshal([]byte(file("extra-timers.json")), &proj); err != nil {
		t.Fatalf("memdiag timers in the container: %v\n%s", err, file("extra-timers.log"))
	}
	from, err1 := time.Parse(time.RFC3339Nano, file("extra.from"))
	to, err2 := time.Parse(time.RFC3339, file("extra.to"))
	if err1 != nil || err2 != nil {
		t.Fatalf("the window: %v %v", err1, err2)
	}
	for _, x := range nspDelayed {
		service := strings.TrimSuffix(x.timer, ".timer") + ".service"
		var starts []time.Time
		for _, s := range starting[service] {
			if !s.Before(from) {
				starts = append(starts, s)
			}
		}
		var windows, held int
		var delays []string
		used := map[int]bool{}
		for _, f := range proj.Firings {
			if f.Job != x.timer {
				continue
			}
			i := slices.IndexFunc(starts, func(s time.Time) bool {
				return !s.Before(f.Earliest.Add(-500*time.Millisecond)) && !s.After(f.Latest.Add(time.Second))
			})
			if i >= 0 {
				used[i] = true
			}
			// A window still open at the end may not hold its start yet.
			if f.Latest.Add(time.Second).After(to) {
				continue
			}
			windows++
			if i < 0 {
				t.Errorf("%s: memdiag projects a firing at %s (window to %s); systemd started %s at none of %v", x.timer,
					f.Planned.Format("15:04:05"), f.Latest.Format("15:04:05"), service, starts)
				continue
			}
			held++
			delays = append(delays, fmt.Sprintf("+%.1fs", starts[i].Sub(f.Planned).Seconds()))
		}
		for i, s := range starts {
			if !used[i] && s.Before(to.Add(-time.Second)) {
				t.Errorf("%s: systemd started %s at %s, in no firing window memdiag projects", x.timer, service, s.Format("15:04:05.000"))
			}
		}
		if windows < 3 {
			t.Errorf("%s: %d firings projected between %s and %s; want at least 3", x.timer, windows, from.Format("15:04:05"), to.Format("15:04:05"))
		}
		t.Logf("%s (%s%s): %d of %d projected firings started by systemd, after the planned time by %s",
			x.timer, x.calendar, strings.ReplaceAll(" "+x.delay, "\n", " "), held, windows, strings.Join(delays, " "))
	}
}

// checkNspVerdict checks analyze's verdict against systemd: both timers
// ranked first and nothing else named; each credited only with episodes
// that began from 1.5 s before to 4 s after systemd started its service
// (starting), or during which systemd started it (one job's stall
// outlasting the 10 s to the other's start), in at least 2 episodes; the period within 10 % of the median gap
// between systemd's starts of the two services, merged; and each timer's
// last start, per the journal, at its LastTriggerUSec to within 1 s.
func checkNspVerdict(t *testing.T, res *vResult, starting map[string][]time.Time, lastTrigger map[string]time.Time) {
	t.Helper()
	want := []string{nspTimers[0].timer, nspTimers[1].timer}
	var names []string
	for _, c := range res.Culprits {
		names = append(names, c.Name)
	}
	if len(names) < 2 || !slices.Contains(want, names[0]) || !slices.Contains(want, names[1]) || names[0] == names[1] {
		t.Errorf("culprits %v; want %v first, in either order (verdict %q)", names, want, res.Verdict)
	}
	if len(names) > 2 {
		t.Errorf("culprits %v: more than the two timers named", names)
	}
	var merged []time.Time
	for _, pt := range nspTimers {
		starts := starting[pt.service]
		merged = append(merged, starts...)
		last := lastTrigger[pt.timer]
		if len(starts) == 0 || last.IsZero() {
			t.Errorf("%s: systemd started %s at %v, LastTriggerUSec %s: want both", pt.timer, pt.service, starts, last)
			continue
		}
		if d := starts[len(starts)-1].Sub(last); d < 0 || d > time.Second {
			t.Errorf("%s: systemd's last start of %s at %s is %s from its LastTriggerUSec %s", pt.timer, pt.service, starts[len(starts)-1], d, last)
		}
		i := slices.IndexFunc(res.Culprits, func(c vCulprit) bool { return c.Name == pt.timer })
		if i < 0 || res.Culprits[i].Proof == nil {
			continue
		}
		cp := res.Culprits[i]
		var credited []string
		for _, cr := range cp.Proof.Credits {
			k := -1
			for i := range res.Episodes {
				if res.Episodes[i].Index == cr.Episode {
					k = i
				}
			}
			if k < 0 {
				t.Errorf("%s: credit for episode %d, which analyze does not list", pt.timer, cr.Episode)
				continue
			}
			ep := res.Episodes[k]
			// An episode starts with its first interval (1 s), which may
			// begin up to a second before the read that raised its stall.
			j := slices.IndexFunc(starts, func(s time.Time) bool { d := ep.Start.Sub(s); return d >= -1500*time.Millisecond && d <= 4*time.Second })
			if j < 0 {
				// Or systemd started the service while the episode went
				// on: the other job's stall outlasted its 10 s (R46: the
				// farm check's, begun 3.1 s late on a loaded host, was
				// still going when the check started), and each job's
				// processes took memory in it. Never one it did not run in.
				if j = slices.IndexFunc(starts, func(s time.Time) bool { return !s.Before(ep.Start) && !s.After(ep.End) }); j >= 0 {
					credited = append(credited, fmt.Sprintf("#%d at %s – %s, which systemd's start at %s fell in", cr.Episode,
						ep.Start.Format("15:04:05"), ep.End.Format("15:04:05"), starts[j].Format("15:04:05.0")))
					continue
				}
				t.Errorf("%s: credited with episode %d (%s – %s), which began neither within 1.5 s before nor 4 s after a start of %s by systemd, nor held one (%v)",
					pt.timer, cr.Episode, ep.Start.Format(time.RFC3339Nano), ep.End.Format(time.RFC3339Nano), pt.service, starts)
				continue
			}
			credited = append(credited, fmt.Sprintf("#%d at %s, %.1f s after systemd's start", cr.Episode, ep.Start.Format("15:04:05"), ep.Start.Sub(starts[j]).Seconds()))
		}
		if len(credited) < 2 {
			t.Errorf("%s credited with %d episodes, want at least 2: %+v", pt.timer, len(credited), cp.Proof.Credits)
		}
		t.Logf("%s: %s, %d of %d episodes: %s", pt.timer, cp.ConfidenceLabel, cp.EpisodesExplained, cp.EpisodesTotal, strings.Join(credited, "; "))
	}
	sort.Slice(merged, func(i, j int) bool { return merged[i].Before(merged[j]) })
	var gaps []float64
	for i := 1; i < len(merged); i++ {
		gaps = append(gaps, merged[i].Sub(merged[i-1]).Seconds())
	}
	if len(gaps) == 0 {
		t.Fatalf("systemd started the services %d times", len(merged))
	}
	sort.Float64s(gaps)
	med := gaps[len(gaps)/2]
	if res.Period == nil {
		t.Errorf("no period found; systemd started the two services every %.1f s (median gap)", med)
	} else if math.Abs(res.Period.PeriodS-med) > 0.1*med {
		t.Errorf("period %.1f s; systemd started the two services every %.1f s (median gap of %d)", res.Period.PeriodS, med, len(gaps))
	} else {
		t.Logf("period %.1f s; systemd started the two services every %.1f s (median gap of %d)", res.Period.PeriodS, med, len(gaps))
	}
}

// pid1Starting reads `journalctl -o json _PID=1` and returns, per unit,
// when PID 1 began a start job for it ("Starting …": systemd's catalog
// message 7d4958e842da4a758f6c1cdc7b36dcc5, a unit starting): for a
// Type=exec service with an ExecStartPost=, the job is done ("Started")
// only after that command has run.
func pid1Starting(t *testing.T, path string) map[string][]time.Time {
	t.Helper()
	return testenv.PID1Journal(t, path, func(e map[string]any) bool { return e["MESSAGE_ID"] == "7d4958e842da4a758f6c1cdc7b36dcc5" })
}

// lastTriggers reads lines "UNIT t µs" (busctl get-property of a timer's
// LastTriggerUSec, µs since the epoch, 0 for never) into unit → time.
func lastTriggers(t *testing.T, s string) map[string]time.Time {
	t.Helper()
	m := map[string]time.Time{}
	for n, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] != "t" {
			t.Fatalf("raw.txt:%d: %q, want UNIT t µs", n+1, line)
		}
		us, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("raw.txt:%d: %q: %v", n+1, line, err)
		}
		if us != 0 {
			m[f[0]] = time.UnixMicro(us).UTC()
		}
	}
	return m
}

// memUse says how much of its memory limit a v1 group uses (anonymous,
// page cache, tmpfs: memory.stat), its peak and how many times it hit
// the limit (memory.usage_in_bytes, memory.max_usage_in_bytes,
// memory.failcnt).
func memUse(g *testenv.Cgroup) string {
	var f []string
	b, _ := os.ReadFile(filepath.Join(g.MemV1Dir, "memory.stat"))
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && (k == "total_rss" || k == "total_cache" || k == "total_shmem") {
			f = append(f, fmt.Sprintf("%s %.0f MiB", strings.TrimPrefix(k, "total_"), float64(n)/(1<<20)))
		}
	}
	for _, n := range []string{"memory.usage_in_bytes", "memory.max_usage_in_bytes", "memory.failcnt"} {
		b, _ := os.ReadFile(filepath.Join(g.MemV1Dir, n))
		v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if n == "memory.failcnt" {
			f = append(f, fmt.Sprintf("failcnt %d", v))
		} else {
			f = append(f, fmt.Sprintf("%s %.0f MiB", strings.TrimPrefix(n, "memory."), float64(v)/(1<<20)))
		}
	}
	return strings.Join(f, ", ") + fmt.Sprintf(" of %d MiB", g.Limit>>20)
}
