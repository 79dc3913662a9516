package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

// The verdict scenarios: real runs, as root, of the situations in which a
// diagnostics tool is tempted to name the wrong culprit. Each records a
// loaded web service in a memory-limited slice with memdiag watch while
// the scenario's jobs run (timers fired by hand at the times
// systemd-analyze gives for their OnCalendar=, in a cgroup named after
// their .service, because PID 1 is not systemd here; in-app schedules as
// long-running processes), then reads `memdiag analyze --format json` and
// checks the culprit list: negative controls name nothing, positives rank
// the right job first, and no scenario names anything else.
//
// Every run appends one JSON line to $MEMDIAG_ACCURACY_OUT when it is set
// (bench/accuracy.sh reads them). Names and paths start with
// memdiag-e2e-v, -w or -x (the lane), so leftovers of a killed run are
// easy to find.
//
// Scenarios run up to three at a time (as many as go test's -parallel
// allows: .ci/run gives 5, a slot for TestConfirmCronLine beside them),
// each in a lane of its own: its own slice
// with its own memory limit, swap file, unit names, files and web
// service. Each is thereby also recorded on a shared host, beside another
// tenant's pressure, disk I/O and timers firing at the same moments —
// the case issue 25 is about, where a recording is only as good as the
// victim's scope — and the suite takes a third of the time (docs/ci.md).
// MEMDIAG_E2E_LANES=1 runs them one after another, alone on the host.
var vLanes = func() chan string {
	names := []string{"memdiag-e2e-v", "memdiag-e2e-w", "memdiag-e2e-x"}
	if os.Getenv("MEMDIAG_E2E_LANES") == "1" {
		names = names[:1]
	}
	c := make(chan string, len(names))
	for _, n := range names {
		c <- n
	}
	return c
}()

const (
	// vLength is a scenario's recording: 5 firings of a 10-second timer,
	// the first vWarm after the start, and 6 s after the last. Fewer
	// episodes cannot rule out chance: with ~6 s episodes (the web
	// service refaulting its cache after each job) and ~20 s outside
	// them, a job present in 3 of 3 episodes has a chance probability of
	// about 0.014 however quiet it is outside them (the null model of
	// correlate.Proof), above the 0.01 a culprit needs. Scenarios that expect
	// no recurring culprit record vShort.
	vLength = 50 * time.Second
	vShort  = 32 * time.Second
	// vLimit is the slice's memory limit: the web service's 96 MiB of
	// data and 48 MiB of anonymous memory fit; a job writing and reading
	// vHeavyMB more does not.
	vLimit = 224 << 20
	// vNode is the node group's limit in newcomer-nolimit, the host's
	// memory in the node model: the web service (about 195 MiB charged
	// once its data file is written and read) and a full vNeighbour fit
	// with ~29 MiB to spare, so the neighbour alone never reaches it; a
	// job without a limit of its own reading a cold file does.
	// vNodeSlice is the web service's slice's own limit there, above
	// what the service uses: its own limit never reclaims.
	vNode      = 256 << 20
	vNodeSlice = 256 << 20
	vNeighbour = 32 << 20
	// vEvery is the schedule of the scenarios' timers and in-app jobs.
	vEvery   = "*:*:0/10"
	vPeriod  = 10 * time.Second
	vWarm    = 4 * time.Second // the first firing is at start+vWarm
	vQuiet   = 5 * time.Second // none after end-vQuiet
	vHeavyMB = 256             // MiB a heavy job writes (then fsyncs)
	// vReadPasses is how often a heavy job reads its file back: reading
	// a file that does not fit evicts the service's cache but the job's
	// own clean pages are cheap to reclaim, so reads stall little and
	// draw the job's I/O out past the stall.
	vReadPasses = 0
	// vReadFor is how long the chain scenarios' jobs read their cold
	// file over and over (its first pass cold, dropped from the cache;
	// the rest thrash the slice): long enough that the web service's
	// working set is evicted while it serves, at every firing.
	vReadFor = "2s"
)

// vBins are the binaries the scenarios run, built once by TestVerdict.
var vBins struct{ memdiag, hog, websvc string }

// vBuild builds memdiag, the hog and the web service into t's temp dir.
func vBuild(t *testing.T) {
	t.Helper()
	vBins.memdiag = testenv.BuildMemdiag(t)
	vBins.hog = testenv.BuildHog(t)
	vBins.websvc = testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/websvc", "websvc")
}

// vRun is one scenario's run: what it installs and starts, and when.
type vRun struct {
	t *testing.T
	// p is the lane's prefix of every name (units, slice, groups);
	// vdir holds its scripts and data, named in unit files; sliceName
	// is its memory-limited slice.
	p, vdir, sliceName string
	dir                string // the run's temp dir (recording, web data)
	slice              *testenv.Cgroup
	// node is the lane's node group when the slice is nested in one
	// (newVRunNode), nil else.
	node   *testenv.Cgroup
	groups map[string]*testenv.Cgroup // by unit name, under the slice
	length time.Duration              // of the recording; vLength if 0
	bg     []vProc                    // started before the recording
	timers []vTimer                   // fired by hand
	once   []vOnce                    // started once at an offset
	// readme: record the README's way, without --cgroup (the victim is
	// found from --probe); watchArgs are added to watch's.
	readme    bool
	watchArgs []string
	// began is when the run had the e2e lock; cleaning when its cleanups
	// began: the run logs where its time went.
	began, made, cleaning time.Time
}

type vProc struct {
	group string // unit under the slice; "" = outside the slice
	argv  []string
}

type vTimer struct {
	unit     string
	calendar string
	argv     []string
}

type vOnce struct {
	after time.Duration
	vProc
}

// newVRun takes the e2e lock and makes the slice, a swap file and r.vdir.
func newVRun(t *testing.T) *vRun {
	t.Helper()
	return newVRunIn(t, 0, vLimit)
}

// newVRunNode is newVRun with the slice (its own limit vNodeSlice)
// nested in a node group, LANE-node.slice, whose limit vNode stands for
// the host's memory: the node model of Kubernetes' kubepods or a systemd
// machine.slice with MemoryMax=. Groups made beside the slice in r.node
// are outside any limit of their own but share the node's.
func newVRunNode(t *testing.T) *vRun {
	t.Helper()
	return newVRunIn(t, vNode, vNodeSlice)
}

// newVRunIn makes the lane's slice with sliceLimit, under a node group
// limited to node when node > 0.
func newVRunIn(t *testing.T, node, sliceLimit int64) *vRun {
	t.Helper()
	testenv.RequireRoot(t, "cgroups, a swap file, timer units in /etc/systemd/system")
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		testenv.Unmet(t, "systemd-analyze (Debian package systemd) is the schedule oracle")
	}
	if cap(vLanes) > 1 {
		t.Parallel()
	}
	testenv.Exclusive(t)
	lane := <-vLanes
	t.Cleanup(func() { vLanes <- lane }) // runs last: the lane's slice, units and files are gone
	// Lanes are handed out within this process; a second test binary on
	// the host (bench/accuracy.sh beside a go test) would use the same
	// slice, swap file, units and files: the lane's file lock keeps them
	// one at a time.
	testenv.HoldFileLock(t, "/var/tmp/"+lane+".lock", "another process's run in lane "+lane)
	r := &vRun{t: t, dir: t.TempDir(), groups: map[string]*testenv.Cgroup{}, began: time.Now(),
		p: lane, vdir: "/var/tmp/" + lane, sliceName: lane + ".slice"}
	t.Logf("lane %s", lane)
	t.Cleanup(func() {
		if !r.cleaning.IsZero() {
			t.Logf("timing: cleanup %s", time.Since(r.cleaning).Round(100*time.Millisecond))
		}
	})
	os.RemoveAll(r.vdir)
	if err := os.MkdirAll(r.vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(r.vdir) })
	if node > 0 {
		r.node = testenv.NewCgroup(t, lane+"-node.slice", node)
		r.sliceName = r.node.Name + "/" + r.sliceName
	}
	r.slice = testenv.NewCgroup(t, r.sliceName, sliceLimit)
	testenv.SwapFile(t, "e2e-verdict-"+lane, 1<<30)
	r.made = time.Now()
	return r
}

// group returns the cgroup of unit under the slice, making it once.
func (r *vRun) group(unit string) *testenv.Cgroup {
	if g, ok := r.groups[unit]; ok {
		return g
	}
	g := testenv.NewCgroup(r.t, r.sliceName+"/"+unit, 0)
	r.groups[unit] = g
	return g
}

// file writes a file under r.vdir and returns its path.
func (r *vRun) file(name, body string, mode os.FileMode) string {
	r.t.Helper()
	p := filepath.Join(r.vdir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// program copies the hog under r.vdir as name, so the process has its own
// program name (exe, argv[0], comm), as a real daemon would.
func (r *vRun) program(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(vBins.hog)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.file(name, string(b), 0o755)
}

// timer installs NAME.timer (OnCalendar=vEvery and the extra [Timer]
// lines) and NAME.service (ExecStart=argv) in /etc/systemd/system and
// enables the timer as `systemctl enable` does. With fire the run starts
// argv in NAME.service's cgroup at each time systemd-analyze gives for
// the calendar; without it the timer never fires, as on this host, where
// PID 1 is not systemd (memdiag's header says so).
func (r *vRun) timer(name, extra string, fire bool, argv ...string) {
	r.t.Helper()
	r.timerOn(vEvery, name, extra, fire, argv...)
}

// timerOn is timer with another OnCalendar= than vEvery.
func (r *vRun) timerOn(calendar, name, extra string, fire bool, argv ...string) {
	t := r.t
	t.Helper()
	files := map[string]string{
		name + ".timer": fmt.Sprintf("[Unit]\nDescription=memdiag e2e verdict: %s\n\n[Timer]\nOnCalendar=%s\nAccuracySec=1s\n%s\n[Install]\nWantedBy=timers.target\n",
			name, calendar, extra),
		name + ".service": fmt.Sprintf("[Unit]\nDescription=memdiag e2e verdict: %s\n\n[Service]\nType=oneshot\nExecStart=%s\n",
			name, strings.Join(argv, " ")),
	}
	writeUnits(t, files)
	if fire {
		r.group(name + ".service")
		r.timers = append(r.timers, vTimer{name + ".service", calendar, argv})
	}
}

// background starts argv in unit's cgroup under the slice before the
// recording starts; it is killed when the recording has ended. An
// argument "@FIRST@" becomes the time from the process's start to the
// first firing of vEvery in the recording, so an in-app schedule runs in
// step with the scenario's timers.
func (r *vRun) background(unit string, argv ...string) {
	r.group(unit)
	r.bg = append(r.bg, vProc{unit, argv})
}

// at starts argv once, after the recording has run for after, in unit's
// cgroup under the slice ("" = outside the slice).
func (r *vRun) at(after time.Duration, unit string, argv ...string) {
	if unit != "" {
		r.group(unit)
	}
	r.once = append(r.once, vOnce{after, vProc{unit, argv}})
}

// scheduled says whether anything in the run follows vEvery: a timer,
// or a background process told its first firing (@FIRST@).
func (r *vRun) scheduled() bool {
	if len(r.timers) > 0 {
		return true
	}
	for _, p := range r.bg {
		if slices.Contains(p.argv, "@FIRST@") {
			return true
		}
	}
	return false
}

// command runs p in its group. The process is killed when the test
// binary dies (a timeout's panic runs no cleanup), so no scenario leaves
// a loop running on the host.
func (r *vRun) command(p vProc) *exec.Cmd {
	var c *exec.Cmd
	if p.group == "" {
		c = exec.Command(p.argv[0], p.argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	} else {
		c = r.groups[p.group].Command(p.argv[0], p.argv[1:]...)
	}
	c.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return c
}

// vResult is the part of analyze's JSON the scenarios check.
// vProcRow is a process row of an episode in analyze's JSON.
type vProcRow struct {
	Comm string `json:"comm"`
}

type vResult struct {
	Episodes []struct {
		Index     int        `json:"index"`
		Start     time.Time  `json:"start"`
		End       time.Time  `json:"end"`
		DurationS float64    `json:"duration_s"`
		Processes []vProcRow `json:"processes"`
	} `json:"episodes"`
	Period *struct {
		PeriodS float64 `json:"period_s"`
	} `json:"period"`
	Culprits []vCulprit `json:"culprits"`
	// Undecided are the jobs fired together that correlation could not
	// tell apart (docs/analyze.md, "Undecided"): none is named.
	Undecided []vCulprit `json:"undecided"`
	Verdict   string     `json:"verdict"`
	Totals    struct {
		MemStallS       float64 `json:"mem_stall_s"`
		CgroupMemStallS float64 `json:"cgroup_mem_stall_s"`
	} `json:"totals"`
	// Sustained is pressure lasting most of the recording.
	Sustained *struct {
		Above     int     `json:"intervals_above"`
		Intervals int     `json:"intervals"`
		MeanShare float64 `json:"mean_share"`
		IO        []struct {
			Comm    string `json:"comm"`
			Program string `json:"program"`
			Unit    string `json:"unit"`
		} `json:"io"`
		Memory []map[string]any `json:"memory"`
	} `json:"sustained"`
	NotRun []struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Reason string `json:"reason"`
	} `json:"not_run"`
	ChainTraced    bool     `json:"chain_traced"`
	RecordingLacks []string `json:"recording_lacks"`
}

type vCulprit struct {
	Rank            int     `json:"rank"`
	Name            string  `json:"name"`
	Kind            string  `json:"kind"`
	Unit            string  `json:"unit"`
	Command         string  `json:"command"`
	Confidence      float64 `json:"confidence"`
	ConfidenceLabel string  `json:"confidence_label"`
	BytesPerEpisode uint64  `json:"bytes_per_episode"`
	// EpisodesExplained of EpisodesTotal: the episodes credited to it.
	EpisodesExplained int `json:"episodes_explained"`
	EpisodesTotal     int `json:"episodes_total"`
	Processes         []struct {
		Comm      string   `json:"comm"`
		Program   string   `json:"program"`
		Cmdline   string   `json:"cmdline"`
		Unit      string   `json:"unit"`
		StartedBy []string `json:"started_by"`
	} `json:"processes"`
	Proof *struct {
		Ran       bool     `json:"ran"`
		FiresWith []string `json:"fires_with"`
		Credits   []struct {
			Episode int     `json:"episode"`
			Bytes   uint64  `json:"bytes"`
			Share   float64 `json:"share"`
		} `json:"credits"`
	} `json:"proof"`
}

// is reports whether the culprit is one of names: its name or its unit.
func (c vCulprit) is(names ...string) bool {
	return slices.Contains(names, c.Name) || (c.Unit != "" && slices.Contains(names, c.Unit))
}

func (c vCulprit) String() string {
	return fmt.Sprintf("%s (%s, %s %.2f, unit %q, command %q)", c.Name, c.Kind, c.ConfidenceLabel, c.Confidence, c.Unit, c.Command)
}

// record runs the scenario: the web service under load in the slice,
// the background processes, memdiag watch for r.length with the slice as
// --cgroup, the timers' firings and the one-off starts; then memdiag
// analyze --format json.
func (r *vRun) record() *vResult {
	t := r.t
	t.Helper()
	t.Cleanup(func() { r.cleaning = time.Now() }) // runs first of the cleanups
	r.group(r.p + "-web.service")
	data := filepath.Join(r.dir, "web.dat")
	url := startWebsvc(t, r.command(vProc{r.p + "-web.service", []string{vBins.websvc, "-data", data, "-data-size", fmt.Sprint(96 << 20), "-anon", fmt.Sprint(48 << 20)}}))
	webUp := time.Now()
	for i := 0; i < 200; i++ { // warm the web service's cache
		if r, err := http.Get(url); err == nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	}

	// The recording starts vWarm before a firing of vEvery (at least
	// 500 ms from now); in-app schedules start before it.
	first := firings(t, vEvery, time.Now().Add(vWarm+500*time.Millisecond), 1)[0]
	start := first.Add(-vWarm)
	if !r.scheduled() {
		// Nothing runs on vEvery: no need to wait for its next firing
		// (5 s on average, a minute over the scenarios).
		start = time.Now().Add(500 * time.Millisecond)
		first = start.Add(vWarm)
	}
	length := r.length
	if length == 0 {
		length = vLength
	}
	for _, p := range r.bg {
		argv := slices.Clone(p.argv)
		for i, a := range argv {
			if a == "@FIRST@" {
				argv[i] = time.Until(first).Round(time.Millisecond).String()
			}
		}
		c := r.command(vProc{p.group, argv})
		c.Stdout, c.Stderr = io.Discard, os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
	}

	rec := filepath.Join(r.dir, "run.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), length+time.Minute)
	defer cancel()
	args := []string{"watch", "--interval", "1s", "--duration", length.String(),
		"--out", rec, "--quiet", "--keep-cmdline", "--probe", url, "--probe-interval", "100ms"}
	if !r.readme {
		args = append(args, "--cgroup", r.slice.V2Dir)
	}
	if e := os.Getenv("MEMDIAG_E2E_EBPF"); e != "" && !slices.Contains(r.watchArgs, "--ebpf") {
		// bench/accuracy.sh -e: every scenario with or without the chain.
		args = append(args, "--ebpf", e)
	}
	watch := exec.CommandContext(ctx, vBins.memdiag, append(args, r.watchArgs...)...)
	watchLog, err := os.Create(rec + ".log")
	if err != nil {
		t.Fatal(err)
	}
	defer watchLog.Close()
	watch.Stdout, watch.Stderr = watchLog, watchLog
	warmed, lead := time.Now(), time.Until(start)
	time.Sleep(time.Until(start))
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	end := start.Add(length)
	loadCtx, stopLoad := context.WithDeadline(ctx, end)
	defer stopLoad()
	var load sync.WaitGroup
	for w := 0; w < 4; w++ { // bounded loopback load: 4 clients
		load.Add(1)
		go func() {
			defer load.Done()
			cl := &http.Client{Timeout: 10 * time.Second}
			for loadCtx.Err() == nil {
				req, _ := http.NewRequestWithContext(loadCtx, "GET", url, nil)
				if r, err := cl.Do(req); err == nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	// Timers fire at their calendar times, one-offs at their offsets,
	// each in its own goroutine: coalesced timers start together.
	var (
		jobs   sync.WaitGroup
		mu     sync.Mutex
		failed []string
	)
	startAt := func(at time.Time, p vProc) {
		jobs.Add(1)
		go func() {
			defer jobs.Done()
			time.Sleep(time.Until(at))
			if out, err := r.command(p).CombinedOutput(); err != nil {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("%v: %v %s", p.argv, err, out))
				mu.Unlock()
			}
		}()
	}
	var fired []string
	for _, tm := range r.timers {
		for _, at := range firings(t, tm.calendar, start.Add(vWarm-time.Second), 8) {
			if at.Before(end.Add(-vQuiet)) {
				startAt(at, vProc{tm.unit, tm.argv})
				fired = append(fired, tm.unit+"@"+at.Format("15:04:05"))
			}
		}
	}
	for _, o := range r.once {
		startAt(start.Add(o.after), o.vProc)
	}
	werr := watch.Wait()
	stopLoad()
	load.Wait()
	jobs.Wait()
	if werr != nil {
		b, _ := os.ReadFile(rec + ".log")
		t.Fatalf("watch: %v\n%s", werr, b)
	}
	if len(failed) > 0 {
		t.Fatalf("scenario jobs failed:\n%s", strings.Join(failed, "\n"))
	}
	t.Logf("fired: %v", fired)
	recorded := time.Since(start)

	analyzeStart := time.Now()
	out, err := exec.Command(vBins.memdiag, "analyze", rec, "--format", "json").Output()
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if table, err := exec.Command(vBins.memdiag, "analyze", rec, "--no-color").CombinedOutput(); err == nil {
		t.Logf("memdiag analyze:\n%s", table)
	}
	ms := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	t.Logf("timing: slice and swap file %s, the scenario's files and web service %s, its cache %s, %s to the first firing's lead, recorded %s, analyze %s",
		ms(r.made.Sub(r.began)), ms(webUp.Sub(r.made)), ms(warmed.Sub(webUp)), ms(max(lead, 0)), ms(recorded), ms(time.Since(analyzeStart)))
	if keep := os.Getenv("MEMDIAG_E2E_KEEP"); keep != "" {
		// Keep the recording and the verdict for a closer look.
		base := filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "-"))
		b, _ := os.ReadFile(rec)
		_ = os.WriteFile(base+".jsonl", b, 0o644)
		_ = os.WriteFile(base+".analyze.json", out, 0o644)
	}
	res := &vResult{}
	if err := json.Unmarshal(out, res); err != nil {
		t.Fatalf("analyze JSON: %v\n%s", err, out)
	}
	return res
}

// vWant is what a scenario's verdict must be.
type vWant struct {
	// top lists the names (culprit name or unit) the first culprit may
	// have; empty for a negative control, which names nothing.
	top []string
	// noneOK: naming nothing is right too (one burst, or pressure with
	// no recurrence: naming its process is right, and so is silence).
	noneOK bool
	// also lists other names that may be named below the top one without
	// counting as false culprits.
	also []string
	// chainOnly: only the traced chain can tell the top job from another
	// fired with it (an O_DIRECT reader, a neighbour churning its own
	// limit). Recorded without it (MEMDIAG_E2E_EBPF=off), "undecided"
	// with the top job among them and nothing named is right too; the
	// other job named is a false culprit still.
	chainOnly bool
}

// check asserts the culprit list against want and appends the run's
// outcome to $MEMDIAG_ACCURACY_OUT.
func (r *vRun) check(res *vResult, want vWant) {
	t := r.t
	t.Helper()
	var names, falses []string
	for _, c := range res.Culprits {
		names = append(names, c.Name)
		if !c.is(want.top...) && !c.is(want.also...) {
			falses = append(falses, c.Name)
			t.Errorf("false culprit: %v", c)
		}
	}
	top := ""
	if len(res.Culprits) > 0 {
		top = res.Culprits[0].Name
	}
	var undecided []string
	for _, u := range res.Undecided {
		undecided = append(undecided, u.Name)
	}
	rightUndecided := slices.ContainsFunc(res.Undecided, func(u vCulprit) bool { return u.is(want.top...) })
	switch {
	case want.chainOnly && os.Getenv("MEMDIAG_E2E_EBPF") == "off" && len(res.Culprits) == 0:
		if !rightUndecided {
			t.Errorf("without the chain: no culprit, undecided %v; want the top job named or %v among the undecided (verdict %q)", undecided, want.top, res.Verdict)
		}
	case len(want.top) > 0 && len(res.Culprits) == 0 && len(res.Undecided) > 0:
		t.Errorf("no culprit named, undecided between %v; want %v first (verdict %q)", undecided, want.top, res.Verdict)
	case len(want.top) == 0 && len(res.Culprits) > 0 && len(falses) == 0:
		// Only tolerated names; a negative control still names nothing
		// first, so this is reported but counted below as a miss.
		t.Errorf("negative control named %v", names)
	case len(want.top) > 0 && len(res.Culprits) == 0 && !want.noneOK:
		t.Errorf("no culprit named; want %v first (verdict %q)", want.top, res.Verdict)
	case len(want.top) > 0 && len(res.Culprits) > 0 && !res.Culprits[0].is(want.top...):
		t.Errorf("top culprit %v; want one of %v", res.Culprits[0], want.top)
	}
	if p := os.Getenv("MEMDIAG_ACCURACY_OUT"); p != "" {
		line, _ := json.Marshal(map[string]any{
			"scenario": strings.TrimPrefix(t.Name(), "TestVerdict/"),
			"want":     want.top, "none_ok": want.noneOK, "top": top, "culprits": names, "false": falses, "undecided": undecided,
			"passed": !t.Failed(), "time": time.Now().UTC().Format(time.RFC3339), "ebpf": os.Getenv("MEMDIAG_E2E_EBPF"),
		})
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s\n", line)
			f.Close()
		}
	}
}

// heavy is a job that evicts the web service's cache: it writes vHeavyMB
// MiB to its own file and reads it back twice.
func (r *vRun) heavy(prog, file string, mb int) []string {
	return []string{prog, "-write", fmt.Sprint(mb << 20), "-file", filepath.Join(r.vdir, file), "-read-passes", fmt.Sprint(vReadPasses)}
}

// pressurePy writes pressure.py, a Python job that writes vHeavyMB MiB to
// its own file, fsyncs it and reads it back twice, and returns its path.
func (r *vRun) pressurePy() string {
	r.t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.Unmet(r.t, "/usr/bin/python3 missing: apt-get install python3-minimal")
	}
	return r.file("pressure.py", fmt.Sprintf(`import os
path = %q
block = b"x" * (1 << 20)
with open(path, "wb") as f:
    for _ in range(%d):
        f.write(block)
    f.flush()
    os.fsync(f.fileno())
for _ in range(%d):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
`, filepath.Join(r.vdir, "pressure.dat"), vHeavyMB, vReadPasses), 0o644)
}

// TestVerdict runs the verdict scenarios one after another, about a
// minute each (give go test -timeout 30m with the rest of the package;
// run one with -run TestVerdict/NAME).
func TestVerdict(t *testing.T) {
	testenv.RequireRoot(t, "cgroups, a swap file, timer units in /etc/systemd/system")
	// The lanes already run beside each other's pressure, disk I/O and
	// timers, each asserting only on its own slice's recording: so the
	// scenarios hold the e2e lock shared (testenv.Shared), and run beside
	// the other such tests (cmd's UML and cgroup tests, e2e's events,
	// limit and peak tests) instead of before or after them (docs/ci.md).
	t.Parallel()
	testenv.Shared(t)
	vBuild(t)
	// (a) A calm host: the loaded web service and nothing else. No
	// memory pressure, so no culprit.
	t.Run("calm", func(t *testing.T) {
		r := newVRun(t)
		r.length = vShort
		res := r.record()
		r.check(res, vWant{})
	})

	// (b) A heavy timer job and a bystander timer fired at the same
	// moments: the bystander writes 20 KiB and sleeps through each
	// episode; and a decoy timer fired half a period later, between the
	// episodes, that only sleeps 0.2 s. Only the heavy job is named, and
	// it explains at least 80 % of the episodes.
	t.Run("bystander", func(t *testing.T) {
		r := newVRun(t)
		r.timer(r.p+"-heavy", "", true, r.heavy(vBins.hog, "heavy.dat", vHeavyMB)...)
		nap := r.file("nap.sh", "#!/bin/sh\nhead -c 20480 /dev/urandom > "+r.vdir+"/nap.dat\nsync "+r.vdir+"/nap.dat\nsleep 7\n", 0o755)
		r.timer(r.p+"-nap", "", true, nap)
		r.timerOn("*:*:5/10", r.p+"-decoy", "", true, "/bin/sleep", "0.2")
		res := r.record()
		r.check(res, vWant{top: []string{r.p + "-heavy.timer"}})
		if len(res.Culprits) > 0 && res.Culprits[0].EpisodesTotal > 0 {
			if c := res.Culprits[0]; float64(c.EpisodesExplained) < 0.8*float64(c.EpisodesTotal) {
				t.Errorf("top culprit explains %d of %d episodes, want at least 80 %%", c.EpisodesExplained, c.EpisodesTotal)
			}
		}
	})

	// (c) A backup timer whose command line names the database's data
	// directory, and which never fires, while the database server itself
	// does I/O in that directory at the timer's times. The timer is not
	// named: a shared argument ties no process to a job.
	t.Run("datapath", func(t *testing.T) {
		r := newVRun(t)
		db := filepath.Join(r.vdir, "db")
		backup := r.file("backup.sh", "#!/bin/sh\ntar -cf /dev/null \"$1\"\n", 0o755)
		r.timer(r.p+"-backup", "", false, backup, db)
		server := r.program("dbserver")
		r.background(r.p+"-db.service", server, "-write", fmt.Sprint(vHeavyMB<<20), "-file", filepath.Join(db, "base.dat"),
			"-read-passes", fmt.Sprint(vReadPasses), "-repeat", "10", "-every", vPeriod.String(), "-first", "@FIRST@")
		if err := os.MkdirAll(db, 0o755); err != nil {
			t.Fatal(err)
		}
		res := r.record()
		r.check(res, vWant{top: []string{r.p + "-db.service", "dbserver"}})
	})

	// (d) A report timer recorded as not firing (systemd is not running)
	// whose schedule matches every episode, and an in-app schedule: a
	// long-running daemon that vacuums every 10 s. The daemon is named,
	// the timer is not.
	t.Run("notfiring", func(t *testing.T) {
		r := newVRun(t)
		report := r.file("report.sh", "#!/bin/sh\ndu -s /var/log\n", 0o755)
		r.timer(r.p+"-report", "", false, report)
		vacuumd := r.program("vacuumd")
		r.background(r.p+"-app.service", vacuumd, "-write", fmt.Sprint(vHeavyMB<<20), "-file", filepath.Join(r.vdir, "vacuum.dat"),
			"-read-passes", fmt.Sprint(vReadPasses), "-repeat", "10", "-every", vPeriod.String(), "-first", "@FIRST@")
		res := r.record()
		r.check(res, vWant{top: []string{"vacuumd", r.p + "-app.service"}})
	})

	// (e) One long burst (a batch copy reading for 14 s) beside short
	// unrelated processes every 3 s outside the slice, each writing
	// 1.5 MiB. One episode, no period, and no recurring culprit: nothing
	// on a schedule caused it.
	t.Run("longburst", func(t *testing.T) {
		r := newVRun(t)
		r.length = vShort
		batch := r.program("batchcopy")
		r.at(6*time.Second, r.p+"-batch.scope", batch, "-write", fmt.Sprint(vHeavyMB<<20), "-file", filepath.Join(r.vdir, "batch.dat"),
			"-read-for", "14s")
		short := r.file("short.sh", "#!/bin/sh\ndd if=/dev/zero of="+r.vdir+"/short.$$ bs=64k count=24 conv=fsync status=none\nrm -f "+r.vdir+"/short.$$\n", 0o755)
		for o := 2 * time.Second; o < r.length-2*time.Second; o += 3 * time.Second {
			r.at(o, "", short)
		}
		res := r.record()
		r.check(res, vWant{top: []string{"batchcopy", r.p + "-batch.scope"}, noneOK: true})
		// The burst is one episode: batchcopy did I/O in exactly one. The
		// lane's slice can stall again for a second after it, when a
		// shared neighbour's disk reads (the nspawn test's pmlogger_check
		// reading 280 MiB, R49) slow the web service's refaults: another
		// episode, not the burst cut in two, and not batchcopy's.
		var in []int
		for _, e := range res.Episodes {
			if slices.ContainsFunc(e.Processes, func(p vProcRow) bool { return p.Comm == "batchcopy" }) {
				in = append(in, e.Index)
			}
		}
		if len(in) != 1 {
			t.Errorf("batchcopy did I/O in episodes %v, want one (one continuous burst): %+v", in, res.Episodes)
		}
		if res.Period != nil {
			t.Errorf("period %.1f s found in one burst", res.Period.PeriodS)
		}
	})

	// (f) Sustained pressure: a cache service holds memory and reads a
	// file larger than what is left for the whole run. The slice stalls
	// from start to end; analyze says so rather than "no episode".
	t.Run("sustained", func(t *testing.T) {
		r := newVRun(t)
		r.length = vShort
		cache := r.program("cached")
		r.background(r.p+"-cache.service", cache, "-anon", fmt.Sprint(64<<20), "-hold", "10m")
		r.background(r.p+"-cache.service", cache, "-write", fmt.Sprint(160<<20), "-file", filepath.Join(r.vdir, "cache.dat"),
			"-read-for", "10m")
		res := r.record()
		r.check(res, vWant{top: []string{"cached", r.p + "-cache.service"}, noneOK: true})
		if res.Totals.CgroupMemStallS < 0.02*r.length.Seconds() {
			t.Fatalf("the slice stalled %.2f s of %s: the scenario made no sustained pressure", res.Totals.CgroupMemStallS, r.length)
		}
		if strings.HasPrefix(res.Verdict, "no episode") {
			t.Errorf("verdict %q for a slice stalled %.1f s of %s", res.Verdict, res.Totals.CgroupMemStallS, r.length)
		}
		if res.Sustained == nil {
			t.Fatalf("no sustained pressure reported for a slice stalled %.1f s of %s", res.Totals.CgroupMemStallS, r.length)
		}
		if res.Sustained.Above*2 < res.Sustained.Intervals {
			t.Errorf("sustained pressure in %d of %d intervals; the cache service pressed from start to end", res.Sustained.Above, res.Sustained.Intervals)
		}
		var who []string
		for _, p := range res.Sustained.IO {
			who = append(who, p.Comm+"/"+p.Unit)
		}
		if len(res.Sustained.IO) == 0 || res.Sustained.IO[0].Unit != r.p+"-cache.service" {
			t.Errorf("sustained pressure's I/O processes %v; want the cache service's reader first", who)
		}
	})

	// (g) Two timers coalesced into one wake-up (the same OnCalendar=,
	// fired together): the one doing more I/O is ranked first, though its
	// name sorts last, and the other is named too.
	t.Run("coalesced", func(t *testing.T) {
		r := newVRun(t)
		r.timer(r.p+"-zheavy", "AccuracySec=12h", true, r.heavy(vBins.hog, "zheavy.dat", vHeavyMB)...)
		r.timer(r.p+"-alight", "AccuracySec=12h", true, vBins.hog, "-write", fmt.Sprint(48<<20), "-file", filepath.Join(r.vdir, "alight.dat"), "-read-passes", "1")
		res := r.record()
		r.check(res, vWant{top: []string{r.p + "-zheavy.timer"}, also: []string{r.p + "-alight.timer"}})
		if len(res.Culprits) == 0 {
			t.Fatalf("no culprit: %v", res.Verdict)
		}
		if p := res.Culprits[0].Proof; p == nil || !slices.Contains(p.FiresWith, r.p+"-alight.timer") {
			t.Errorf("%s: fires_with does not name %s-alight.timer: %+v", res.Culprits[0].Name, r.p, p)
		}
		if !res.ChainTraced {
			// Without the chain alight, credited only with the wake-up
			// (its own share under 25 %), rode along with zheavy: not
			// named, said why (docs/analyze.md, "Undecided").
			rode := false
			for _, nr := range res.NotRun {
				rode = rode || nr.Name == r.p+"-alight.timer" && nr.Kind == "rode_along"
			}
			if len(res.Culprits) != 1 || !rode {
				t.Errorf("untraced: culprits %v, not run %+v; want zheavy alone, alight rode along", res.Culprits, res.NotRun)
			}
			return
		}
		// Traced, the chain judges each by what it cost the web service:
		// alight's 48 MiB is named second, and names zheavy as firing
		// with it.
		if len(res.Culprits) < 2 || !res.Culprits[1].is(r.p+"-alight.timer") {
			t.Fatalf("want %s-alight.timer second: %v", r.p, res.Culprits)
		}
		if p := res.Culprits[1].Proof; p == nil || !slices.Contains(p.FiresWith, r.p+"-zheavy.timer") {
			t.Errorf("%s: fires_with does not name %s-zheavy.timer: %+v", res.Culprits[1].Name, r.p, p)
		}
	})

	// (h) A timer's service runs a shell script that runs `python3
	// pressure.py`, which does the I/O: the job is named, never
	// "python3".
	t.Run("interpreter", func(t *testing.T) {
		r := newVRun(t)
		py := r.pressurePy()
		periodic := r.file("periodic.sh", "#!/bin/sh\n/usr/bin/python3 "+py+"\n", 0o755)
		r.timer(r.p+"-report", "", true, "/bin/sh", periodic)
		res := r.record()
		r.check(res, vWant{top: []string{r.p + "-report.timer"}})
		for _, c := range res.Culprits {
			if c.Name == "python3" {
				t.Errorf("the interpreter is named: %v", c)
			}
		}
	})

	// (h') The same Python job run by an in-app schedule: a shell loop
	// started in a login session before the recording runs `python3
	// pressure.py` every 10 s. No unit names it; it is named by its
	// script (or the loop's), never "python3".
	t.Run("interpreter-loop", func(t *testing.T) {
		r := newVRun(t)
		py := r.pressurePy()
		loop := r.file("periodic.sh", "#!/bin/sh\nsleep \"$1\"\nwhile :; do\n\t/usr/bin/python3 "+py+" &\n\tsleep 10\n\twait\ndone\n", 0o755)
		r.background(r.p+"-session.scope", "/bin/sh", loop, "@FIRST@")
		res := r.record()
		r.check(res, vWant{top: []string{"pressure.py", "periodic.sh"}})
		for _, c := range res.Culprits {
			if c.Name == "python3" {
				t.Errorf("the interpreter is named: %v", c)
			}
			for _, p := range c.Processes {
				t.Logf("%s: process %s (%s) started by %v", c.Name, p.Program, p.Comm, p.StartedBy)
			}
		}
	})

	// (i) A shell loop started in the slice before the recording reads a
	// big file with cat every ~10 s (its cache dropped first), while a
	// decoy shell outside the slice execs tiny cats several times a
	// second (new-user trial s5, F1/F2). The loop's cat is named (or the
	// loop), with the big file's command line and the loop as its
	// parent, never the decoy's cat.
	t.Run("loop-decoy", func(t *testing.T) {
		r := newVRun(t)
		big := filepath.Join(r.vdir, "big.dat")
		if err := exec.Command("dd", "if=/dev/zero", "of="+big, "bs=1M", fmt.Sprint("count=", vHeavyMB), "status=none").Run(); err != nil {
			t.Fatal(err)
		}
		loop := r.file("loop.sh", "#!/bin/sh\nsleep \"$1\"\nwhile :; do\n\tdd if="+big+" iflag=nocache count=0 status=none\n\tcat "+big+" >/dev/null\n\tsleep 10\ndone\n", 0o755)
		r.background(r.p+"-session.scope", "/bin/sh", loop, "@FIRST@")
		decoy := r.file("decoy.sh", "#!/bin/sh\nwhile :; do cat /etc/hostname >/dev/null; sleep 0.2; done\n", 0o755)
		r.bg = append(r.bg, vProc{"", []string{"/bin/sh", decoy}}) // outside the slice
		res := r.record()
		r.check(res, vWant{top: []string{"cat", "loop.sh"}})
		if len(res.Culprits) == 0 || len(res.Culprits[0].Processes) == 0 {
			return
		}
		p := res.Culprits[0].Processes[0]
		t.Logf("%s: process %q started by %v", res.Culprits[0].Name, p.Cmdline, p.StartedBy)
		if res.Culprits[0].Name == "cat" && (p.Cmdline != "cat "+big || len(p.StartedBy) == 0 || !strings.HasPrefix(p.StartedBy[0], "loop.sh ")) {
			t.Errorf("cat's process %q started by %v; want %q started by loop.sh", p.Cmdline, p.StartedBy, "cat "+big)
		}
	})

	// Issue 25: whom it hurt, and who did it, measured. Each runs the
	// README's way: no --cgroup, the victim found from --probe.

	// (j) Two timers of the service's slice fire at the same moment and
	// each reads a 512 MiB file from disk (written with O_DIRECT before
	// the recording, so it starts cold): one buffered, filling the
	// slice's page cache and evicting the web service's pages at the
	// slice's limit; one with O_DIRECT, touching no cache. Correlation
	// sees two alike; the traced chain names the buffered one only. The
	// O_DIRECT one's name sorts first.
	t.Run("chain-direct", func(t *testing.T) {
		r := newVRun(t)
		r.readme = true
		buffered, direct := r.coldFile("buffered.dat", 512), r.coldFile("direct.dat", 512)
		r.timer(r.p+"-zbuffered", "", true, vBins.hog, "-file", buffered, "-drop", "-read-for", vReadFor)
		r.timer(r.p+"-adirect", "", true, vBins.hog, "-direct", "-file", direct, "-read-for", vReadFor)
		res := r.record()
		r.check(res, vWant{top: []string{r.p + "-zbuffered.timer"}, chainOnly: true})
		r.checkChain(res, os.Getenv("MEMDIAG_E2E_EBPF") != "off")
	})

	// (k) The newcomer's case (issue 25): a neighbour in its own
	// memory-limited group outside the service's slice reads a big file
	// on the same schedule as a job of the slice whose reads evict the
	// web service's cache. Without --cgroup the victim is found from the
	// probe, so only the job is named, at high confidence; the neighbour
	// stalled only itself.
	newcomer := func(t *testing.T, ebpf string) {
		r := newVRun(t)
		r.readme = true
		r.watchArgs = []string{"--ebpf", ebpf}
		// Eight firings: the web service stalls for about half of each
		// 10 s period (the job reads for 2 s, then the service reads its
		// working set back), so five leave chance at p ≈ 0.005, too weak
		// for high confidence; eight rule it out. The recording ends 10 s
		// after the eighth firing, not 6: R18 (2026-12-07, CI's lanes
		// beside it) saw the eighth firing's stall not yet an episode when
		// an 80 s recording ended, and 7 of 8 left chance at p = 0.0035
		// (low, 0.43). The ninth firing would be after end − vQuiet.
		r.length = 84 * time.Second
		nb := testenv.NewCgroup(t, r.p+"-nb.service", 96<<20)
		r.groups[r.p+"-nb.service"] = nb
		nbFile, jobFile := r.coldFile("nb.dat", 384), r.coldFile("job.dat", 384)
		r.timer(r.p+"-nb", "", true, vBins.hog, "-file", nbFile, "-drop", "-read-for", vReadFor)
		r.timer(r.p+"-job", "", true, vBins.hog, "-file", jobFile, "-drop", "-read-for", vReadFor)
		res := r.record()
		r.check(res, vWant{top: []string{r.p + "-job.timer"}})
		// High confidence needs the eight firings to be eight episodes
		// (five leave chance at p ≈ 0.005, above). Beside CI's other
		// lanes, the systemd guest and a fresh clone's build, a firing's
		// reads can run long or its stall merge with the next: R18 had 7
		// of 8 (low 0.43), R20 7 episodes on a blurred 8.1 s period, the
		// job busy in 15 of 42 intervals outside them (low 0.04). The
		// job must be first and alone then too (check, above); high is
		// asked of the clean runs, and a blurred one says what it saw.
		switch {
		case len(res.Culprits) == 0:
		case len(res.Episodes) == 8 && res.Culprits[0].ConfidenceLabel != "high":
			t.Errorf("top culprit %v; want high confidence with the victim's scope (8 firings, 8 episodes)", res.Culprits[0])
		case len(res.Episodes) != 8:
			t.Logf("top culprit %v from %d episodes for 8 firings (a loaded host blurred them): high confidence not asked", res.Culprits[0], len(res.Episodes))
		}
		r.checkChain(res, ebpf != "off")
	}
	t.Run("newcomer", func(t *testing.T) { newcomer(t, "auto") })
	// (l) The same with --ebpf off: today's answer from correlation in
	// the victim's scope, and the recording says it lacks the chain.
	t.Run("newcomer-no-ebpf", func(t *testing.T) { newcomer(t, "off") })

	// (m) Issue 25's case (b), the newcomer's job outside any limit of
	// its own, in the node model that stands for a host short of memory
	// (a shared CI host cannot run its 24 GiB short safely): a node group
	// limited to vNode holds the web service's slice (under its own
	// limit), a neighbour in its own vNeighbour group and the job in a
	// group with no limit. Each reads a cold 384 MiB file for 2 s every
	// 10 s, the neighbour 5 s after the job. The neighbour reclaims only
	// inside its own limit and stalls itself; the job's reads push the
	// node to its limit, whose reclaim takes ~45 MiB of the web service's
	// cache at each firing. (Fired together, each finds the node full
	// that the other filled, and the neighbour's reclaim takes the
	// service's pages too: newcomer-together, below.)
	// The job is named first, the neighbour never; the victim's limits
	// are the slice's and, above it, the node's. Its confidence is
	// logged, not asserted: the service reads its pages back with little
	// stall, so in some runs a firing in three or four is no episode and
	// chance is not ruled out (low 0.13 to high 1.00 over eight runs,
	// docs/accuracy.md; reading for 4 s instead gave 6 of 8 firings and
	// p ≈ 0.15).
	nolimit := func(t *testing.T, nbCalendar string) {
		r := newVRunNode(t)
		r.readme = true
		r.length = 80 * time.Second // eight firings, as newcomer
		nb := testenv.NewCgroup(t, r.node.Name+"/"+r.p+"-nb.service", vNeighbour)
		r.groups[r.p+"-nb.service"] = nb
		job := testenv.NewCgroup(t, r.node.Name+"/"+r.p+"-job.service", 0)
		r.groups[r.p+"-job.service"] = job
		nbFile, jobFile := r.coldFile("nb.dat", 384), r.coldFile("job.dat", 384)
		r.timerOn(nbCalendar, r.p+"-nb", "", true, vBins.hog, "-file", nbFile, "-drop", "-read-for", vReadFor)
		r.timer(r.p+"-job", "", true, vBins.hog, "-file", jobFile, "-drop", "-read-for", vReadFor)
		res := r.record()
		for _, g := range []*testenv.Cgroup{r.node, r.slice, nb, job} {
			for _, f := range []string{"memory.failcnt", "memory.max_usage_in_bytes"} {
				if b, err := os.ReadFile(filepath.Join(g.MemV1Dir, f)); g.MemV1Dir != "" && err == nil {
					t.Logf("%s: %s %s", g.Name, f, strings.TrimSpace(string(b)))
				}
			}
		}
		r.check(res, vWant{top: []string{r.p + "-job.timer"}, chainOnly: nbCalendar == vEvery})
		if len(res.Culprits) > 0 {
			c := res.Culprits[0]
			t.Logf("top culprit %v, %d of %d episodes", c, c.EpisodesExplained, c.EpisodesTotal)
		}
		r.checkChain(res, os.Getenv("MEMDIAG_E2E_EBPF") != "off")
		rec, err := record.ReadFile(filepath.Join(r.dir, "run.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if v := rec.Header.Victim; v == nil || !slices.Equal(v.OuterLimits, []record.MemoryLimit{{Group: "/" + r.node.Name, Bytes: vNode}}) {
			t.Errorf("victim %+v; want the node's limit, /%s %d, above the slice's", v, r.node.Name, vNode)
		}
	}
	t.Run("newcomer-nolimit", func(t *testing.T) { nolimit(t, "*:*:5/10") })
	// (n) The same with the neighbour fired at the same moment as the
	// job: it finds the node full too, and its reclaim takes the web
	// service's pages beside the job's. It re-reads its own file inside
	// its own limit, adding to the cache as much as the job, but it can
	// never hold more than vNeighbour (the recording holds the adders'
	// limits, record.Chain.Limits): the job is named, the neighbour
	// never. Shared by what each added, the neighbour was named too
	// (docs/accuracy.md).
	t.Run("newcomer-together", func(t *testing.T) { nolimit(t, vEvery) })
}

// coldFile writes a file of mb MiB under r.vdir with O_DIRECT, so none of
// it is in the page cache when a job reads it, and returns its path.
func (r *vRun) coldFile(name string, mb int) string {
	r.t.Helper()
	p := filepath.Join(r.vdir, name)
	if out, err := exec.Command(vBins.hog, "-direct", "-write", fmt.Sprint(mb<<20), "-file", p).CombinedOutput(); err != nil {
		r.t.Fatalf("hog -direct -write: %v\n%s", err, out)
	}
	return p
}

// checkChain asserts that the recording says whose latency it explains
// (the web service, found from --probe) and whether it traced the
// page-cache chain.
func (r *vRun) checkChain(res *vResult, traced bool) {
	t := r.t
	t.Helper()
	if res.ChainTraced != traced {
		t.Errorf("chain_traced %v, want %v", res.ChainTraced, traced)
	}
	said := slices.ContainsFunc(res.RecordingLacks, func(l string) bool { return strings.HasPrefix(l, "no page-cache chain (eBPF: ") })
	if said == traced {
		t.Errorf("recording_lacks %q: the missing chain said %v, want %v", res.RecordingLacks, said, !traced)
	}
	rec, err := record.ReadFile(filepath.Join(r.dir, "run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	v := rec.Header.Victim
	if v == nil || v.How != record.VictimFromProbe || !strings.HasSuffix(v.Memcg, r.p+"-web.service") || v.Limit != "/"+r.sliceName {
		t.Errorf("victim %+v; want the web service found from --probe, limited by %s", v, r.sliceName)
	}
	for _, c := range rec.Header.Collectors {
		if c.Name == "ebpf-chain" && c.Available != traced {
			t.Errorf("collector %+v; want available %v", c, traced)
		}
	}
}
