package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// The periodic job and the decoy, as real systemd units. PID 1 is not
// systemd here, so the test fires them itself at the times
// `systemd-analyze calendar` gives for their OnCalendar=, each inside a
// cgroup named after its .service, as systemd would.
const (
	jobTimer = `[Unit]
Description=memdiag e2e: heavy periodic job

[Timer]
OnCalendar=*:*:0/20
AccuracySec=1s

[Install]
WantedBy=timers.target
`
	jobService = `[Unit]
Description=memdiag e2e: heavy periodic job

[Service]
Type=oneshot
ExecStart=%s -write 402653184 -file /var/tmp/memdiag-e2e-job.dat -read-passes 2
`
	decoyTimer = `[Unit]
Description=memdiag e2e: light decoy job

[Timer]
OnCalendar=*:*:10/20
AccuracySec=1s

[Install]
WantedBy=timers.target
`
	decoyService = `[Unit]
Description=memdiag e2e: light decoy job

[Service]
Type=oneshot
ExecStart=/bin/sleep 0.2
`
)

const (
	unitDir       = "/etc/systemd/system"
	harnessLength = 105 * time.Second
)

// installUnits writes the timer and service units and enables the timers
// the way `systemctl enable` does (a link in timers.target.wants/).
func installUnits(t *testing.T, hog string, withJob bool) {
	t.Helper()
	files := map[string]string{
		"memdiag-e2e-decoy.timer":   decoyTimer,
		"memdiag-e2e-decoy.service": decoyService,
	}
	if withJob {
		files["memdiag-e2e-job.timer"] = jobTimer
		files["memdiag-e2e-job.service"] = fmt.Sprintf(jobService, hog)
	}
	writeUnits(t, files)
}

// firings asks systemd-analyze (the oracle, independent of memdiag's own
// calendar code) for the next n elapses of expr after base.
func firings(t *testing.T, expr string, base time.Time, n int) []time.Time {
	t.Helper()
	out, err := exec.Command("systemd-analyze", "calendar", "--iterations="+fmt.Sprint(n),
		"--base-time=@"+fmt.Sprint(base.Unix()), expr).Output()
	if err != nil {
		testenv.Unmet(t, "systemd-analyze calendar: "+err.Error())
	}
	var ts []time.Time
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, ":")
		if !ok || !(strings.HasPrefix(k, "Next elapse") || strings.HasPrefix(k, "Iter.")) {
			continue
		}
		v = strings.TrimSpace(v)
		// "Sun 2026-11-29 22:10:20 UTC"
		f := strings.Fields(v)
		if len(f) < 4 {
			continue
		}
		tm, err := time.ParseInLocation("2006-01-02 15:04:05", f[1]+" "+f[2], time.Local)
		if err != nil {
			t.Fatalf("systemd-analyze output %q: %v", line, err)
		}
		ts = append(ts, tm)
	}
	return ts
}

type harness struct {
	t       *testing.T
	memdiag string
	hog     string
	dir     string
}

// run sets up the service under load and records it; it returns the
// analyze JSON and the times the job fired.
func (h *harness) run(withJob bool) (map[string]any, []time.Time) {
	t := h.t
	// The unit files are shared host state: hold the e2e lock before
	// installing them, so another run's cleanup cannot remove them.
	testenv.Exclusive(t)
	installUnits(t, h.hog, withJob)
	parent := testenv.NewCgroup(t, "memdiag-e2e.slice", 224<<20)
	web := testenv.NewCgroup(t, "memdiag-e2e.slice/memdiag-e2e-web.service", 0)
	job := testenv.NewCgroup(t, "memdiag-e2e.slice/memdiag-e2e-job.service", 0)
	decoy := testenv.NewCgroup(t, "memdiag-e2e.slice/memdiag-e2e-decoy.service", 0)
	testenv.SwapFile(t, "e2e-analyze", 1<<30)
	t.Cleanup(func() { os.Remove("/var/tmp/memdiag-e2e-job.dat") })

	websvc := testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/websvc", "websvc")
	data := filepath.Join(h.dir, "web.dat")
	url := startWebsvc(t, web.Command(websvc, "-data", data, "-data-size", fmt.Sprint(96<<20), "-anon", fmt.Sprint(48<<20)))

	// Warm the cache, then record with the probe while a load loop runs.
	for i := 0; i < 200; i++ {
		if r, err := http.Get(url); err == nil {
			r.Body.Close()
		}
	}
	rec := filepath.Join(h.dir, fmt.Sprintf("run-job-%v.jsonl", withJob))
	ctx, cancel := context.WithTimeout(context.Background(), harnessLength+time.Minute)
	defer cancel()
	watch := exec.CommandContext(ctx, h.memdiag, "watch", "--interval", "1s", "--duration", harnessLength.String(),
		"--out", rec, "--quiet", "--probe", url, "--probe-interval", "100ms", "--cgroup", parent.V2Dir)
	watchLog, _ := os.Create(rec + ".log")
	watch.Stdout, watch.Stderr = watchLog, watchLog
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	loadCtx, stopLoad := context.WithDeadline(ctx, start.Add(harnessLength))
	defer stopLoad()
	for w := 0; w < 4; w++ { // bounded loopback load: 4 clients, until the recording ends
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{Timeout: 10 * time.Second}
			for loadCtx.Err() == nil {
				req, _ := http.NewRequestWithContext(loadCtx, "GET", url, nil)
				if r, err := cl.Do(req); err == nil {
					r.Body.Close()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	// Fire the timers at their calendar times until the recording ends.
	type fire struct {
		at   time.Time
		unit string
		cg   *testenv.Cgroup
		cmd  []string
	}
	var plan []fire
	if withJob {
		for _, at := range firings(t, "*:*:0/20", start.Add(2*time.Second), 8) {
			plan = append(plan, fire{at, "job", job, []string{h.hog, "-write", fmt.Sprint(384 << 20), "-file", "/var/tmp/memdiag-e2e-job.dat", "-read-passes", "2"}})
		}
	}
	for _, at := range firings(t, "*:*:10/20", start.Add(2*time.Second), 8) {
		plan = append(plan, fire{at, "decoy", decoy, []string{"/bin/sleep", "0.2"}})
	}
	var fired []time.Time
	end := start.Add(harnessLength - 8*time.Second)
	for {
		next := -1
		for i, f := range plan {
			if f.at.Before(end) && (next < 0 || f.at.Before(plan[next].at)) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		f := plan[next]
		plan = append(plan[:next], plan[next+1:]...)
		time.Sleep(time.Until(f.at))
		c := f.cg.Command(f.cmd[0], f.cmd[1:]...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", f.unit, err, out)
		}
		if f.unit == "job" {
			fired = append(fired, f.at)
		}
	}
	if err := watch.Wait(); err != nil {
		b, _ := os.ReadFile(rec + ".log")
		t.Fatalf("watch: %v\n%s", err, b)
	}
	stopLoad()
	wg.Wait()

	out, err := exec.Command(h.memdiag, "analyze", rec, "--format", "json").Output()
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if table, err := exec.Command(h.memdiag, "analyze", rec, "--no-color").CombinedOutput(); err == nil {
		t.Logf("memdiag analyze (job=%v):\n%s", withJob, table)
	}
	if keep := os.Getenv("MEMDIAG_E2E_KEEP"); keep != "" {
		// Keep the recording and the verdict for a closer look.
		b, _ := os.ReadFile(rec)
		_ = os.WriteFile(filepath.Join(keep, filepath.Base(rec)), b, 0o644)
		_ = os.WriteFile(filepath.Join(keep, filepath.Base(rec)+".analyze.json"), out, 0o644)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("analyze JSON: %v\n%s", err, out)
	}
	return res, fired
}

func culprits(res map[string]any) []map[string]any {
	var cs []map[string]any
	if l, ok := res["culprits"].([]any); ok {
		for _, c := range l {
			if m, ok := c.(map[string]any); ok {
				cs = append(cs, m)
			}
		}
	}
	return cs
}

// TestAnalyzeNamesTimerJob is analyze's end-to-end check: a job started
// on a real .timer's schedule evicts a loaded web service's page cache in a
// shared memory-limited cgroup; memdiag watch + analyze must rank it first,
// explain at least 80 % of the episodes with it, and not name the decoy.
// The same harness without the job must yield no culprit.
func TestAnalyzeNamesTimerJob(t *testing.T) {
	testenv.RequireRoot(t, "cgroups, a swap file, timer units in /etc/systemd/system")
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		testenv.Unmet(t, "systemd-analyze (Debian package systemd) is the schedule oracle")
	}
	h := &harness{t: t, memdiag: testenv.BuildMemdiag(t), hog: testenv.BuildHog(t), dir: t.TempDir()}

	t.Run("with-job", func(t *testing.T) {
		h := *h
		h.t = t
		res, fired := h.run(true)
		cs := culprits(res)
		if len(cs) == 0 {
			t.Fatalf("no culprit named; job fired %d times at %v", len(fired), fired)
		}
		top := cs[0]
		name, _ := top["name"].(string)
		if !strings.HasPrefix(name, "memdiag-e2e-job.") {
			t.Errorf("top culprit = %q, want memdiag-e2e-job.timer", name)
		}
		if share := explainedShare(top); share < 0.8 {
			t.Errorf("top culprit explains %.0f%% of the episodes, want >= 80%%: %v", share*100, top)
		}
		for _, c := range cs {
			if n, _ := c["name"].(string); strings.Contains(n, "decoy") {
				t.Errorf("decoy named as a culprit: %v", c)
			}
		}
	})
	t.Run("without-job", func(t *testing.T) {
		h := *h
		h.t = t
		res, _ := h.run(false)
		if cs := culprits(res); len(cs) != 0 {
			t.Errorf("culprits without the job: %v", cs)
		}
	})
}

// explainedShare is the share of all episodes the culprit explains:
// episodes_explained / episodes_total of analyze's JSON.
func explainedShare(c map[string]any) float64 {
	n, _ := c["episodes_explained"].(float64)
	of, _ := c["episodes_total"].(float64)
	if of <= 0 {
		return -1
	}
	return n / of
}
