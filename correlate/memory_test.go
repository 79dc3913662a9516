package correlate

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/record"
)

// TestMemoryFindings: a process whose anon RSS grows 1 MiB every 10 s
// (360 MiB/h) is reported, a flat one is not; an oom_kill rise is an OOM
// kill with the process that exited in that interval.
func TestMemoryFindings(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rec := &record.Recording{Header: record.Header{Host: "h", Interval: 10 * time.Second, PageSize: 4096}}
	for i := 0; i < 7; i++ {
		oom := uint64(0)
		if i >= 5 {
			oom = 1
		}
		s := record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * 10 * time.Second), VMStat: &lru.VMStat{OOMKill: &oom},
			RSS: []diskio.ProcRSS{
				{PID: 1, StartTicks: 10, Comm: "leaky", AnonBytes: uint64(100+i) << 20},
				{PID: 2, StartTicks: 20, Comm: "steady", AnonBytes: 50 << 20},
			}}
		if i == 5 {
			s.Events = []diskio.ProcEvent{{Kind: "exit", PID: 3, Comm: "victim"}}
		}
		rec.Samples = append(rec.Samples, s)
	}
	// 60 s of samples: reported with the window lowered to 20 s, not with
	// the default 10 min.
	if res := Analyze(rec, Options{}); len(res.Growth) != 0 {
		t.Errorf("default window: Growth = %+v; want none over 60 s", res.Growth)
	}
	res := Analyze(rec, Options{GrowthMinWindow: 20 * time.Second})
	if len(res.Growth) != 1 || res.Growth[0].Comm != "leaky" || math.Abs(res.Growth[0].AnonSlope-360) > 1e-6 {
		t.Fatalf("Growth = %+v; want leaky at 360 MiB/h only", res.Growth)
	}
	if len(res.OOMKills) != 1 || !res.OOMKills[0].Time.Equal(t0.Add(50*time.Second)) || res.OOMKills[0].Count != 1 ||
		len(res.OOMKills[0].Exited) != 1 || res.OOMKills[0].Exited[0] != "victim 3" {
		t.Errorf("OOMKills = %+v", res.OOMKills)
	}
}
