package memstate

import (
	"math"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/memdiag/memdiag/diskio"

	"github.com/memdiag/memdiag/internal/testenv"
)

// series makes samples every step seconds from t0, one process per
// anon-MiB list (PID = index+1, start ticks 100), file 2 MiB each.
func series(step time.Duration, anonMiB ...[]float64) []rssSample {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var out []rssSample
	for i := range anonMiB[0] {
		s := rssSample{Time: t0.Add(time.Duration(i) * step)}
		for p, a := range anonMiB {
			s.Procs = append(s.Procs, ProcRSS{PID: p + 1, StartTicks: 100, Comm: "p" + strconv.Itoa(p+1),
				AnonBytes: uint64(a[i] * (1 << 20)), FileBytes: 2 << 20})
		}
		out = append(out, s)
	}
	return out
}

func TestGrowth(t *testing.T) {
	steady := []float64{10, 20, 30, 40, 50, 60} // 1 MiB/s = 3600 MiB/h, over 50 s
	flat := []float64{30, 30, 30, 30, 30, 30}
	step := []float64{10, 10, 10, 50, 50, 50} // one allocation, not steady growth
	got := growth(series(10*time.Second, steady, flat, step), shortWindow())
	if len(got) != 3 {
		t.Fatalf("got %d processes, want 3: %+v", len(got), got)
	}
	g := got[0]
	if g.PID != 1 || !g.Growing || math.Abs(g.AnonSlope-3600) > 1e-6 || math.Abs(g.AnonR2-1) > 1e-9 ||
		math.Abs(g.RSSSlope-3600) > 1e-6 || g.Observed != 50*time.Second || g.Points != 6 ||
		g.AnonFirstBytes != 10<<20 || g.AnonLastBytes != 60<<20 {
		t.Errorf("steady: %+v", g)
	}
	// The step: slope 1800/1750 MiB/s, R² = 1800²/(1750·2400) = 0.771 < 0.9.
	s := got[1]
	if s.PID != 3 || s.Growing || math.Abs(s.AnonSlope-1800.0/1750*3600) > 1e-6 || math.Abs(s.AnonR2-0.7714285714) > 1e-9 {
		t.Errorf("step: %+v", s)
	}
	f := got[2]
	if f.PID != 2 || f.Growing || f.AnonSlope != 0 || f.AnonR2 != 0 {
		t.Errorf("flat: %+v", f)
	}
}

func TestGrowthTooShortAndPIDReuse(t *testing.T) {
	// 4 samples over 15 s: a straight line, but too short to call.
	got := growth(series(5*time.Second, []float64{1, 2, 3, 4}), shortWindow())
	if len(got) != 1 || got[0].Growing || got[0].Observed != 15*time.Second {
		t.Errorf("short: %+v", got)
	}
	// The same PID with another start time is another process: two series
	// of one point each, which are not fitted at all.
	s := series(time.Second, []float64{1, 50})
	s[1].Procs[0].StartTicks = 999
	if got := growth(s, shortWindow()); len(got) != 0 {
		t.Errorf("PID reuse: %+v", got)
	}
}

// TestGrowthLiveE2E checks RSS growth detection at the level memstate owns: a hog
// growing its anon memory at a known rate and a flat one, sampled with
// diskio's TopRSS every second for ~30 s as `memdiag watch` does; growth must flag
// the first with a slope within 20 % of the true rate and not the second.
// Through the commands (watch, then analyze): e2e's TestAnalyzeFlagsGrowth.
func TestGrowthLiveE2E(t *testing.T) {
	if !testenv.Enabled() {
		// Live hogs and 30 s of sampling: an end-to-end test, out of the
		// fast suite (issue 26), where a loaded runner slowed it.
		t.Skip("end-to-end test skipped: runs live memory hogs for 30 s; set MEMDIAG_E2E=1 to run it")
	}
	hog := testenv.BuildHog(t)
	const rate = 2 << 20 // bytes/s; hog steps 4 MiB every 2 s
	start := func(args ...string) *exec.Cmd {
		c := exec.Command(hog, args...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	flat := start("-anon", strconv.Itoa(32<<20), "-hold", "2m")
	time.Sleep(2 * time.Second) // let it allocate: flat from here on
	// Room for 96 s of growth: on a loaded runner 30 samples took 49 s,
	// and a hog that reached a 64 MiB cap at 32 s made the tail flat.
	grow := start("-anon", strconv.Itoa(192<<20), "-anon-rate", strconv.Itoa(rate), "-hold", "2m")

	c, err := diskio.NewProcScanner("/proc", diskio.ProcScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mine := map[int]bool{flat.Process.Pid: true, grow.Process.Pid: true}
	var samples []rssSample
	for i := 0; i < 30; i++ {
		if _, _, _, err := c.Scan(time.Now()); err != nil {
			t.Fatal(err)
		}
		all := c.TopRSS(1 << 20)
		s := rssSample{Time: time.Now()}
		for _, p := range all {
			if mine[p.PID] {
				s.Procs = append(s.Procs, p)
			}
		}
		samples = append(samples, s)
		time.Sleep(time.Second)
	}
	byPID := map[int]ProcGrowth{}
	for _, g := range growth(samples, shortWindow()) {
		byPID[g.PID] = g
	}
	g, f := byPID[grow.Process.Pid], byPID[flat.Process.Pid]
	t.Logf("growing: %.0f MiB/h R² %.3f over %s; flat: %.1f MiB/h R² %.3f", g.AnonSlope, g.AnonR2, g.Observed, f.AnonSlope, f.AnonR2)
	want := float64(rate) / (1 << 20) * 3600 // 7200 MiB/h
	if !g.Growing || math.Abs(g.AnonSlope-want) > 0.2*want {
		t.Errorf("growing hog: %+v; want flagged at %.0f MiB/h ± 20 %%", g, want)
	}
	if f.Points == 0 || f.Growing {
		t.Errorf("flat hog: %+v; want seen and not flagged", f)
	}
}

// shortWindow is DefaultGrowthOptions with a 20 s minimum window, for the
// arithmetic tests, which use short series.
func shortWindow() GrowthOptions {
	o := DefaultGrowthOptions()
	o.MinObserved = 20 * time.Second
	return o
}

func TestGrowthMinWindow(t *testing.T) {
	// A compiler filling its working set for 20 s (5 samples, 200 MiB on a
	// straight line: "36000 MiB/h") is not reported by default; the same
	// line over 10 minutes is, as an observation.
	line := []float64{100, 150, 200, 250, 300}
	got := growth(series(5*time.Second, line), DefaultGrowthOptions())
	if len(got) != 1 || got[0].Growing || math.Abs(got[0].AnonSlope-36000) > 1e-6 {
		t.Errorf("20 s: %+v", got)
	}
	got = growth(series(150*time.Second, line), DefaultGrowthOptions())
	if len(got) != 1 || !got[0].Growing || got[0].Observed != MinGrowthWindow ||
		math.Abs(got[0].AnonSlope-1200) > 1e-6 || got[0].AnonLastBytes-got[0].AnonFirstBytes != 200<<20 {
		t.Errorf("10 min: %+v", got)
	}
}

// rssSample is the RSS of the recorded processes at one time: a test's
// input to growth.
type rssSample struct {
	Time  time.Time
	Procs []ProcRSS
}

// growth fits samples through a GrowthSeries.
func growth(samples []rssSample, o GrowthOptions) []ProcGrowth {
	var g GrowthSeries
	for i := range samples {
		g.Add(samples[i].Time, samples[i].Procs)
	}
	return g.Fit(o)
}
