package signal_test

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// checkRecording runs the check over a recording's host and cgroup.
func checkRecording(t *testing.T, path string) (host, cg []signal.PSISuspect) {
	t.Helper()
	rec, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := signal.NewPSICheck(signal.PSICheckOptions{})
	c := signal.NewPSICheck(signal.PSICheckOptions{})
	for i := range rec.Samples {
		s := &rec.Samples[i]
		h.Add(s.Time, s.PSI.Snapshot(), s.VMStat.LRU())
		c.Add(s.Time, s.CgroupPSI.Snapshot(), s.VMStat.LRU(), s.CgroupVMStat.LRU())
	}
	return h.Findings(), c.Findings()
}

// Real recordings, calm and under pressure (the oom-v1 trial reaches
// 75 % memory stall on the host), are not suspect.
func TestPSICheckRealRecordingsNotSuspect(t *testing.T) {
	for _, f := range []string{
		"../correlate/testdata/real/trial-s8-tenant.jsonl.gz", // calm: ≤ 3 % stall
		"../correlate/testdata/real/trial-s7-oom-v1.jsonl.gz", // pressure: up to 75 % stall, OOM kills
		"../correlate/testdata/real/trial-s7-nobody.jsonl.gz", // up to 39 %
		"../correlate/testdata/real/busy-host-loop.jsonl.gz",  // a loaded host
		"../correlate/testdata/real/host-shadowed-loop.jsonl.gz",
		"../correlate/testdata/real/trial-s7-mem-job.jsonl.gz",
	} {
		h, c := checkRecording(t, f)
		if len(h)+len(c) != 0 {
			t.Errorf("%s: false alarm: host %+v, cgroup %+v", f, h, c)
		}
	}
}

func TestPSICheckAveragesVsTotal(t *testing.T) {
	h, c := checkRecording(t, "../testdata/psi-suspect/avg99-total-frozen.jsonl.gz")
	if len(h) == 0 || len(c) == 0 {
		t.Fatalf("not found: host %+v, cgroup %+v", h, c)
	}
	x := h[0]
	if x.Kind != signal.PSIAveragesVsTotal || x.Resource != "memory" || x.Line != "some" || x.Avg != 10 {
		t.Fatalf("first finding %+v, want memory some avg10", x)
	}
	// avg10 read 99 over a 21 s span in which total did not move: at
	// most 99·e^(−18.5/10) + 100·(1 − e^(−2.5/10)) = 15.6 + 22.1 = 37.7.
	if x.Reported != 99 || x.TotalShare != 0 || math.Abs(x.Bound-37.69) > 0.01 || x.SinceBoot {
		t.Errorf("finding %+v: want 99 against at most 37.69 with total flat", x)
	}
	if x.Contradicts < 100 {
		t.Errorf("only %d of %d spans contradicted", x.Contradicts, x.Checked)
	}
	for _, f := range append(h, c...) {
		if f.Kind != signal.PSIAveragesVsTotal || f.Resource != "memory" {
			t.Errorf("unexpected %+v", f)
		}
	}
}

func TestPSICheckStallWithoutActivity(t *testing.T) {
	h, c := checkRecording(t, "../testdata/psi-suspect/stall96-counters-frozen.jsonl.gz")
	for _, got := range [][]signal.PSISuspect{h, c} {
		if len(got) != 1 {
			t.Fatalf("want one finding, got %+v", got)
		}
		x := got[0]
		if x.Kind != signal.PSIStallWithoutActivity || x.Resource != "memory" || math.Abs(x.TotalShare-96) > 0.01 {
			t.Errorf("finding %+v, want a 96 %% memory stall without activity", x)
		}
		if d := x.To.Sub(x.From); d < 149*time.Second || d > 151*time.Second {
			t.Errorf("span %s, want the whole 150 s recording", d)
		}
		if len(x.Counters) != 16 {
			t.Errorf("counters %v, want the 16 recorded", x.Counters)
		}
	}
}

// kernelPSI simulates kernel/sched/psi.c: the stall is folded into the
// averages every 2 s (EWMA over that period), total is exact at any
// read. It stands for a kernel without accounting bugs.
type kernelPSI struct {
	now, lastAvg    time.Duration
	total, avgTotal time.Duration
	avg10, avg60    float64
}

func (k *kernelPSI) advance(d time.Duration, share float64) {
	for step := 10 * time.Millisecond; d > 0; d -= step {
		k.now += step
		k.total += time.Duration(share * float64(step))
		if k.now-k.lastAvg >= 2*time.Second {
			period := k.now - k.lastAvg
			pct := 100 * float64(k.total-k.avgTotal) / float64(period)
			k.avg10 = k.avg10*math.Exp(-period.Seconds()/10) + pct*(1-math.Exp(-period.Seconds()/10))
			k.avg60 = k.avg60*math.Exp(-period.Seconds()/60) + pct*(1-math.Exp(-period.Seconds()/60))
			k.avgTotal, k.lastAvg = k.total, k.now
		}
	}
}

func (k *kernelPSI) read() *psi.Snapshot {
	l := psi.Line{Avg10: math.Round(k.avg10*100) / 100, Avg60: math.Round(k.avg60*100) / 100, Total: k.total.Truncate(time.Microsecond)}
	return &psi.Snapshot{Memory: &psi.Resource{Some: l}}
}

// A kernel that accounts right is never suspect, whatever the stall
// does: bursts, steps, sawtooth, read every second or every 15 s.
func TestPSICheckConsistentKernelNotSuspect(t *testing.T) {
	patterns := map[string]func(sec int) float64{
		"steps":    func(s int) float64 { return float64((s/37)%2) * 0.97 },
		"bursts":   func(s int) float64 { return map[bool]float64{true: 1, false: 0}[s%23 < 3] },
		"sawtooth": func(s int) float64 { return float64(s%50) / 50 },
		"constant": func(int) float64 { return 0.6 },
	}
	for name, share := range patterns {
		for _, every := range []int{1, 3, 15} {
			k := &kernelPSI{}
			c := signal.NewPSICheck(signal.PSICheckOptions{})
			base := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
			var pg uint64
			for s := 0; s < 600; s++ {
				k.advance(time.Second, share(s))
				pg += 100 // reclaim moves all along
				if s%every == 0 {
					v := pg
					c.Add(base.Add(k.now), k.read(), &lru.VMStat{PgscanDirect: &v})
				}
			}
			if f := c.Findings(); len(f) != 0 {
				t.Errorf("%s every %ds: false alarm %+v", name, every, f)
			}
		}
	}
}
