package correlate

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// TestMemoryFindings: a process whose anon RSS grows 1 MiB every 10 s
// (360 MiB/h) is reported, a flat one is not, and the growth finding
// carries the allocator evidence recorded for it (not the one of a
// process that reused its PID); an oom_kill rise is an OOM kill with the
// process that exited in that interval.
func TestMemoryFindings(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rec := &record.Recording{Header: record.Header{Host: "h", Interval: 10 * time.Second, PageSize: 4096}}
	for i := 0; i < 7; i++ {
		oom := uint64(0)
		if i >= 5 {
			oom = 1
		}
		s := record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * 10 * time.Second), VMStat: &record.VMStat{OOMKill: &oom},
			RSS: []record.ProcRSS{
				{PID: 1, StartTicks: 10, Comm: "leaky", AnonBytes: uint64(100+i) << 20},
				{PID: 2, StartTicks: 20, Comm: "steady", AnonBytes: 50 << 20},
			}}
		if i == 2 {
			s.Retention = []record.ProcRetention{
				{PID: 1, StartTicks: 9, Comm: "earlier", Retention: record.Retention{Allocators: []string{"jemalloc"}, Threads: 3, CPUsOnline: 2}},
				{PID: 1, StartTicks: 10, Comm: "leaky", Retention: record.Retention{Allocators: []string{"glibc"}, Threads: 9, CPUsOnline: 2, Reading: "as recorded"}},
			}
		}
		if i == 5 {
			s.Events = []record.Event{{Kind: "exit", PID: 3, Comm: "victim"}}
		}
		if i == 3 || i == 4 {
			s.RSSLeftOut = 6 + i // more growers than watch records
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
	g := res.Growth[0]
	// Its own evidence (not the earlier process's of the same PID), its
	// arenas derived again; the words are the report's (report/mem).
	if g.Retention == nil || g.Retention.ArenasMax != 16 || g.Retention.Threads != 9 || g.ThreadsAtGrowth != 9 ||
		g.Retention.Allocators[0] != "glibc" || g.Retention.Reading != "" || g.Evidence != nil || g.Note != "" {
		t.Errorf("leaky's evidence: %+v, %q, %q", g.Retention, g.Evidence, g.Note)
	}
	var left []Warning
	for _, w := range res.Warnings {
		if w.Kind == WarnGrowthLeftOut {
			left = append(left, w)
		}
	}
	if len(left) != 1 || left[0].Samples != 2 || left[0].Processes != 10 {
		t.Errorf("growth left out: %+v; want 2 samples, up to 10 processes", left)
	}
	if len(res.OOMKills) != 1 || !res.OOMKills[0].Time.Equal(t0.Add(50*time.Second)) || res.OOMKills[0].Count != 1 ||
		len(res.OOMKills[0].Exited) != 1 || res.OOMKills[0].Exited[0] != "victim 3" {
		t.Errorf("OOMKills = %+v", res.OOMKills)
	}
}
