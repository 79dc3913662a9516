package correlate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The reference case's trace: one row per interval (2 h at 30 s), the
// values the episodes were detected on, and the process that did an
// interval's I/O.
func TestTraceUnion(t *testing.T) {
	rec := unionCase().build(t)
	sr := NewSeries(rec.Header)
	for i := range rec.Samples {
		sr.Add(&rec.Samples[i])
	}
	o := Options{Project: testProject}
	res := sr.Analyze(o)
	tr := sr.Trace(&res, o)
	if tr.Len() != res.Intervals || tr.Len() != 240 {
		t.Fatalf("trace of %d intervals, result %d; want 240", tr.Len(), res.Intervals)
	}
	// (12:05:30, 12:06:00] lies inside pmlogger_check's burst from
	// 12:05:10 for 90 s: 60 MiB/s written, requests at 2.5 s.
	i := -1
	for j, e := range tr.End {
		if e.Equal(at("12:06:00")) {
			i = j
		}
	}
	if i < 0 {
		t.Fatal("no interval ends at 12:06:00")
	}
	if tr.Latency[i] != 2500*time.Millisecond || tr.Latency[0] >= time.Second {
		t.Errorf("latency %v in the burst, %v before it", tr.Latency[i], tr.Latency[0])
	}
	if w := tr.Columns[TraceDiskWrite][i]; w < 60*mib || w > 62*mib {
		t.Errorf("disk write %.0f B/s, want 60 MiB/s and the baseline", w)
	}
	if !tr.Known(TraceMemSome) || tr.Known(TraceCgMemSome) {
		t.Error("host PSI should be known and cgroup PSI not (no --cgroup)")
	}
	top := tr.Top(i, i+1, 2)
	if len(top) != 2 || top[0].Comm != "pmlogger_check" || top[0].WriteBytes != 30*60*mib || top[1].Comm != "webapp" {
		t.Errorf("top = %+v, want pmlogger_check with 1800 MiB written, then webapp", top)
	}
}

// The trace's top processes count what the episodes count: the I/O of
// the children a process reaped unseen is a "children of sh" row with
// the parent's PID, as in the episode (reapedChildrenRec: sh 7000 writes
// 1 MiB itself and reaps 64 MiB of children in the interval ending at
// 00:00:02; a login bash 9000 reaps 2 MiB of its own).
func TestTraceTopReaped(t *testing.T) {
	rec := reapedChildrenRec(t, false)
	sr := NewSeries(rec.Header)
	for i := range rec.Samples {
		sr.Add(&rec.Samples[i])
	}
	res := sr.Analyze(Options{})
	tr := sr.Trace(&res, Options{})
	i := -1
	for j, e := range tr.End {
		if e.Equal(t0.Add(2 * time.Second)) {
			i = j
		}
	}
	if i < 0 {
		t.Fatal("no interval ends at 00:00:02")
	}
	top := tr.Top(i, i+1, 5)
	want := []ProcActivity{
		{PPID: 7000, Comm: "exited threads or children of sh", Unit: "backup.service", WriteBytes: 64 * mib, Reaped: true},
		{PPID: 9000, Comm: "exited threads or children of bash", Unit: "session-3.scope", WriteBytes: 2 * mib, Reaped: true},
	}
	var got []ProcActivity
	var sh uint64
	for _, p := range top {
		if p.Reaped {
			got = append(got, ProcActivity{PPID: p.PPID, Comm: p.Comm, Unit: p.Unit, WriteBytes: p.WriteBytes, Reaped: true})
		} else if p.PID == 7000 {
			sh = p.WriteBytes
		}
	}
	if d := cmp.Diff(want, got); d != "" || sh < mib {
		t.Errorf("top %+v: reaped rows (-want +got):\n%s\nsh's own %d bytes; want 1 MiB", top, d, sh)
	}
}
