package correlate

import (
	"math"
	"testing"
	"time"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/signal"
)

// TestPackProc: a packed process reads back as it was, at the fields'
// extremes too.
func TestPackProc(t *testing.T) {
	ps := []procIO{
		{pid: 1, name: 0, start: 0},
		{pid: 4194304, name: 70000, start: 317931, readBytes: 96638833302, writeBytes: 75164678585, dReadBytes: 147456, dWriteByte: 0},
		{pid: math.MaxInt32, name: math.MaxUint32, start: math.MaxUint64, readBytes: math.MaxUint64, writeBytes: 1, dReadBytes: math.MaxUint64, dWriteByte: math.MaxUint64},
	}
	var b []byte
	for _, p := range ps {
		b = packProc(b, p)
	}
	sr := &Series{}
	sr.procs.add(b)
	got := sr.procsOf(0, nil)
	if len(got) != len(ps) {
		t.Fatalf("got %d processes, want %d", len(got), len(ps))
	}
	for i := range ps {
		if got[i] != ps[i] {
			t.Errorf("process %d: got %+v, want %+v", i, got[i], ps[i])
		}
	}
}

// TestAttachOnsets: an episode gets the earliest stall onset recorded from
// one interval before its start to its end, whichever sample holds it.
func TestAttachOnsets(t *testing.T) {
	rec := unionCase().build(t)
	res := Analyze(rec, Options{Project: testProject})
	if len(res.Episodes) == 0 {
		t.Fatal("the union case has no episode")
	}
	e := res.Episodes[0]
	iv := res.Interval
	onset := func(at time.Time, comm string) record.StallOnset {
		return record.StallOnset{Time: at, Scope: "host", Resource: "memory", Kind: "some", Mode: "poll",
			Procs: []record.ProcIO{{PID: 7, Comm: comm}}}
	}
	last := len(rec.Samples) - 1
	rec.Samples[last].Onsets = append(rec.Samples[last].Onsets, onset(e.Start.Add(iv/2), "later"))
	rec.Samples[0].Onsets = append(rec.Samples[0].Onsets, onset(e.Start.Add(-2*iv), "too-early"), onset(e.Start.Add(-iv/2), "first"))
	res = Analyze(rec, Options{Project: testProject})
	got := res.Episodes[0].Onset
	if got == nil || !got.Time.Equal(e.Start.Add(-iv/2)) || len(got.Procs) != 1 || got.Procs[0].Comm != "first" {
		t.Errorf("episode 0 (%s) onset = %+v, want the one at %s", e.Start, got, e.Start.Add(-iv/2))
	}
}

func TestLimitReclaimIsNotDirectReclaim(t *testing.T) {
	// A job pushing a service's cgroup past its limit: pgscan_direct stays
	// 0 (mm/vmscan.c counts cgroup reclaim only in pgscan_anon/_file), as
	// a new user saw live. analyze names it limit reclaim, as gate and mem
	// do, and direct reclaim stays 0.
	u := func(v uint64) *uint64 { return &v }
	h := record.Header{}
	prev := record.Sample{Time: time.Unix(0, 0), VMStat: &record.VMStat{PgscanDirect: u(0), PgscanKswapd: u(10), PgscanAnon: u(100), PgscanFile: u(1000)}}
	cur := record.Sample{Time: time.Unix(2, 0), VMStat: &record.VMStat{PgscanDirect: u(0), PgscanKswapd: u(10), PgscanAnon: u(300), PgscanFile: u(20800)}}
	iv := record.Between(&h, &prev, &cur)
	l := ival{ivalVals: lean(&iv)}
	if got := signalValue(LimitReclaim, &l, ""); got != 10000 {
		t.Errorf("limit_reclaim = %v pages/s, want (200+19800)/2 = 10000", got)
	}
	if got := signalValue(DirectReclaim, &l, ""); got != 0 {
		t.Errorf("direct_reclaim = %v pages/s, want 0 (pgscan_direct did not move)", got)
	}
	if string(DirectReclaim) != signal.DirectReclaim.Name || string(LimitReclaim) != signal.LimitReclaim.Name ||
		DirectReclaim.Unit() != signal.DirectReclaim.RateUnit() || LimitReclaim.Unit() != signal.LimitReclaim.RateUnit() {
		t.Errorf("analyze's reclaim signals are not the catalogue's names and units")
	}
}

// TestRSSHoldersAreTheTop: a recording made with --top 2 holds in each
// sample's RSS the two largest processes and then the growth candidates
// (here a small grower that is recorded only from its third sample on).
// Only the two are the sample's largest holders (one with --top 1; a
// header without top_n, as in recordings built by hand, keeps the first
// five as before): a candidate counted
// among them would have its whole RSS taken for growth in an episode
// (absent from the sample before, present at the peak).
func TestRSSHoldersAreTheTop(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ top, want int }{{2, 2}, {1, 1}, {10, 3}} {
		sr := NewSeries(record.Header{Host: "h", Interval: time.Second, TopN: tc.top})
		for i := range 4 {
			s := record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second), RSS: []record.ProcRSS{
				{PID: 1, StartTicks: 1, Comm: "big", AnonBytes: 900 << 20},
				{PID: 2, StartTicks: 2, Comm: "large", AnonBytes: 800 << 20},
			}}
			if i >= 2 {
				s.RSS = append(s.RSS, record.ProcRSS{PID: 3, StartTicks: 3, Comm: "grower", AnonBytes: uint64(40+i) << 20})
			}
			sr.Add(&s)
		}
		for i := range 4 {
			want := min(tc.want, 2)
			if i >= 2 {
				want = tc.want
			}
			if got := len(sr.rssOf(i)); got != want {
				t.Errorf("--top %d, sample %d: %d holders %+v, want %d", tc.top, i, got, sr.rssOf(i), want)
			}
		}
	}
}

// A process event kept as a row gives back every field the analysis
// reads; a time int64 nanoseconds cannot hold is none.
func TestEventRowRoundTrip(t *testing.T) {
	sr := NewSeries(record.Header{})
	in := process.Event{Kind: process.Exit, Time: time.Date(2026, 12, 6, 14, 0, 0, 123456789, time.UTC), Source: "taskstats",
		PID: 4194303, PPID: 77, StartTicks: 1 << 40, Comm: "sh", Exe: "/bin/sh", Cmdline: "sh -c x", Cgroup: "/a.slice/b.service",
		Unit: "b.service", ReadBytes: 1 << 50, WriteBytes: 3, BlkioDelay: time.Second, ParentComm: "cron", ParentCmdline: "/usr/sbin/cron -f", ParentPPID: 1}
	r := sr.eventRow(&in)
	want := in
	want.Source, want.Exe, want.BlkioDelay = "", "", 0
	if got := sr.event(&r); got != want {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	r2 := sr.eventRow(&process.Event{Kind: process.Exec, PID: 5, Comm: "sh", Time: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if got := sr.event(&r2); !got.Time.IsZero() || got.Comm != "sh" || r2.comm != r.comm || len(sr.strs) != 9 {
		t.Errorf("year 3000: %+v (want no time, comm interned: %d strings, want 9: the empty one, the 7 of the first event, exec)", got, len(sr.strs))
	}
}
