package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

func TestLiveUnitsAlign(t *testing.T) {
	// Header names, units and a row's numbers end in the same columns.
	ends := func(line string) []int {
		r := []rune(line)
		var e []int
		for i := range r {
			if r[i] != ' ' && (i+1 == len(r) || r[i+1] == ' ') {
				e = append(e, i)
			}
		}
		return e
	}
	iv := record.Interval{MemSome: 0.5, MemFull: 0.25, IOSome: 0.125, FileLRUBytes: 100 << 20, FileLRUDeltaBytes: -(3 << 20),
		DirectReclaimPerSec: 7, LimitReclaimPerSec: 6, KswapdReclaimPerSec: 8, RefaultFilePerSec: 9, RefaultAnonPerSec: 1,
		SwapOutBytesPerSec: 1 << 20, DiskReadBytesPerSec: 1 << 20, DiskWriteBytesPerSec: 1 << 20, DiskBusy: 0.5, Dt: time.Second}
	row := liveRow(iv, nil, false) // ends with "  -" for no process
	ce, ue, re := ends(liveHeader), ends(liveUnits), ends(row)
	// 14 columns; TIME has no unit; TOP-IO starts (not ends) at a fixed place.
	if len(ce) != 14 || len(ue) != 13 || len(re) != 14 {
		t.Fatalf("fields: %d names, %d units, %d values\n%s\n%s\n%s", len(ce), len(ue), len(re), liveHeader, liveUnits, row)
	}
	for i := 1; i < 13; i++ {
		if ce[i] != ue[i-1] || ce[i] != re[i] {
			t.Errorf("column %d ends at %d (name), %d (unit), %d (value):\n%s\n%s\n%s", i, ce[i], ue[i-1], re[i], liveHeader, liveUnits, row)
		}
	}
	// One unit family: binary sizes and rates only.
	if strings.Contains(liveUnits, "MB") || !strings.Contains(liveUnits, "MiB/s") {
		t.Errorf("units %q: want MiB and MiB/s only", liveUnits)
	}
	// DISK: 1 MiB/s read + 1 MiB/s written.
	if f := strings.Fields(row); f[11] != "2.0" {
		t.Errorf("DISK %q, want 2.0 (MiB/s)", f[11])
	}
}

func TestLiveRowHugeValuesStayApart(t *testing.T) {
	// Values a new user saw live: ΔLRU 1 MiB next to 10,040,844 pages/s of
	// reclaim ran together as "110040844".
	iv := record.Interval{MemSome: 0.5, MemFull: 0.25, IOSome: 0.125, FileLRUBytes: 3039 << 20, FileLRUDeltaBytes: 1 << 20,
		DirectReclaimPerSec: 10040844, RefaultFilePerSec: 181235, Dt: time.Second}
	row := liveRow(iv, nil, false)
	f := strings.Fields(row)
	if len(f) != 14 || f[5] != "1" || f[6] != "10.0M" || f[9] != "181k" {
		t.Errorf("fields %q of row %q; want ΔLRU 1, DIRECT 10.0M, RFLT 181k apart", f, row)
	}
	if fitNum(-16654930, 8, 0) != "  -16.7M" || fitNum(12.34, 8, 1) != "    12.3" || fitNum(181235, 6, 0) != "  181k" {
		t.Errorf("fitNum: %q %q %q", fitNum(-16654930, 8, 0), fitNum(12.34, 8, 1), fitNum(181235, 6, 0))
	}
}

// liveInterval is a busy interval: direct reclaim and cgroup-limit
// reclaim at different rates, a long process name with its unit.
func liveInterval() (record.Interval, *record.Sample) {
	iv := record.Interval{End: time.Date(2026, 11, 29, 12, 0, 1, 0, time.UTC), Dt: time.Second,
		MemSome: 0.234, MemFull: 0.061, CgMemSome: 0.412, CgMemFull: 0.2, IOSome: 0.3,
		FileLRUBytes: 23456 << 20, FileLRUDeltaBytes: -(812 << 20),
		DirectReclaimPerSec: 1234, LimitReclaimPerSec: 56789, KswapdReclaimPerSec: 99999,
		RefaultFilePerSec: 4000, SwapOutBytesPerSec: 3 << 20,
		DiskReadBytesPerSec: 300 << 20, DiskWriteBytesPerSec: 12 << 20, DiskBusy: 0.97}
	s := &record.Sample{
		Latency: &record.Latency{Count: 400, Errors: 7, P99: 2345 * time.Millisecond},
		Procs: []record.ProcIO{{PID: 4242, Comm: "pmlogger_farm_c", Unit: "pmlogger_farm_check.service",
			DeltaReadBytes: 300 << 20, DeltaWriteBytes: 10 << 20}},
	}
	return iv, s
}

// TestLiveViewFits: at 80 columns, whatever the sources, every line of
// the live view fits, the columns that matter most are there (latency
// and errors with a latency source, the cgroup's PSI with --cgroup,
// direct and cgroup-limit reclaim apart), and what was left out is named.
func TestLiveViewFits(t *testing.T) {
	iv, s := liveInterval()
	for _, tt := range []struct {
		o        LiveOptions
		want     []string // header names that must be there
		wantCell map[string]string
	}{
		{LiveOptions{Width: 80}, []string{"SOME", "FULL", "DIRECT", "LIMIT", "ΔLRU", "DISK", "TOP-IO"},
			map[string]string{"SOME": "23.4", "DIRECT": "1234", "LIMIT": "56789", "ΔLRU": "-812", "DISK": "312.0"}},
		{LiveOptions{Width: 80, Latency: true}, []string{"P99", "ERR", "SOME", "DIRECT", "LIMIT", "TOP-IO"},
			map[string]string{"P99": "2345", "ERR": "7"}},
		{LiveOptions{Width: 80, Cgroup: true}, []string{"SOME", "CG-S", "DIRECT", "LIMIT", "TOP-IO"},
			map[string]string{"CG-S": "41.2"}},
		{LiveOptions{Width: 80, Latency: true, Cgroup: true}, []string{"P99", "ERR", "SOME", "CG-S", "DIRECT", "LIMIT", "DISK", "TOP-IO"},
			map[string]string{"P99": "2345", "ERR": "7", "CG-S": "41.2", "DIRECT": "1234", "LIMIT": "56789"}},
		{LiveOptions{Width: 0, Latency: true, Cgroup: true}, []string{"P99", "ERR", "SOME", "FULL", "CG-S", "CG-F", "IO", "LRU", "KSWAPD", "RFLT", "SWOUT", "BUSY"},
			map[string]string{"KSWAPD": "99999", "BUSY": "97"}},
	} {
		v := NewLiveView(tt.o)
		hdr := v.Header()
		row := v.Row(iv, s)
		names := strings.Fields(strings.Split(hdr, "\n")[0])
		cells := strings.Fields(row)
		for _, l := range append(strings.Split(hdr, "\n"), row) {
			if w := runewidth.StringWidth(l); tt.o.Width > 0 && w > tt.o.Width {
				t.Errorf("%+v: line %d columns wide:\n%s", tt.o, w, l)
			}
		}
		for _, n := range tt.want {
			if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+n+" ") {
				t.Errorf("%+v: no %s column in %q (hidden: %v)", tt.o, n, names, v.hiddenNames())
			}
		}
		for name, want := range tt.wantCell {
			for i, n := range names {
				if n == name && (i >= len(cells) || cells[i] != want) {
					t.Errorf("%+v: %s = %q, want %q\n%s\n%s", tt.o, name, cells[min(i, len(cells)-1)], want, hdr, row)
				}
			}
		}
		if tt.o.Width > 0 && len(v.hiddenNames()) == 0 {
			t.Errorf("%+v: nothing hidden at %d columns", tt.o, tt.o.Width)
		}
		if leg := v.Legend(); tt.o.Width > 0 && !strings.Contains(leg, "Not shown at 80 columns") {
			t.Errorf("legend does not name the hidden columns: %s", leg)
		}
		if !strings.Contains(row, "pmlogger") {
			t.Errorf("%+v: no busiest process in %q", tt.o, row)
		}
	}
}

// TestSummaryByTotalIO: the end summary lists processes by read +
// written, so a process that only read 30 GiB is there, and the
// culprit's processes come first, marked.
func TestSummaryByTotalIO(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sm := record.NewSummary(&record.Header{PageSize: 4096})
	sm.Add(&record.Sample{Time: t0})
	sm.Add(&record.Sample{Time: t0.Add(time.Second), Procs: []record.ProcIO{
		{PID: 10, StartTicks: 1, Comm: "postgres", Unit: "postgresql.service", DeltaWriteBytes: 900 << 20},
		{PID: 11, StartTicks: 1, Comm: "tar", Unit: "backup.service", DeltaReadBytes: 30 << 30, DeltaWriteBytes: 1 << 20},
		{PID: 12, StartTicks: 1, Comm: "logrotate", Unit: "logrotate.service", DeltaWriteBytes: 2 << 30},
	}})
	var b bytes.Buffer
	WriteSummaryWith(&b, sm, "run.jsonl", SummaryOptions{TopN: 5})
	out := b.String()
	tar, logr, pg := strings.Index(out, "tar "), strings.Index(out, "logrotate"), strings.Index(out, "postgres ")
	if tar < 0 || logr < tar || pg < logr {
		t.Errorf("want tar (30 GiB read), logrotate (2 GiB), postgres (900 MiB) in that order:\n%s", out)
	}
	if !strings.Contains(out, "30.0 GiB") {
		t.Errorf("tar's 30 GiB read is missing:\n%s", out)
	}

	b.Reset()
	WriteSummaryWith(&b, sm, "run.jsonl", SummaryOptions{TopN: 2, Culprit: "logrotate.timer", CulpritProcs: []correlate.ProcID{{PID: 12, StartTicks: 1}}})
	out = b.String()
	lines := strings.Split(out, "\n")
	var procs []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && (f[0] == "tar" || f[0] == "logrotate" || f[0] == "postgres") {
			procs = append(procs, f[0]+map[bool]string{true: "*", false: ""}[strings.HasSuffix(l, " *")])
		}
		if w := runewidth.StringWidth(l); w > 80 {
			t.Errorf("summary line %d columns wide: %s", w, l)
		}
	}
	if got := strings.Join(procs, " "); got != "logrotate* tar" {
		t.Errorf("processes %q, want the culprit's first, marked, then by I/O: logrotate* tar\n%s", got, out)
	}
	if !strings.Contains(out, "* the culprit's, logrotate.timer") {
		t.Errorf("the mark is not explained:\n%s", out)
	}
}

// TestLiveFinalRowStampedApart: the last, partial interval after Ctrl-C
// ends in the same second as the tick before it; its row is stamped with
// its length ("+0.4s") instead of repeating 22:40:47, in the same 8
// columns, and its values are those Row shows.
func TestLiveFinalRowStampedApart(t *testing.T) {
	v := NewLiveView(LiveOptions{})
	tick := time.Date(2026, 12, 1, 22, 40, 47, 500_000_000, time.UTC)
	last := record.Interval{End: tick, Dt: time.Second, MemSome: 0.5, DiskReadBytesPerSec: 1 << 20}
	part := record.Interval{End: tick.Add(400 * time.Millisecond), Dt: 400 * time.Millisecond, MemSome: 0.5, DiskReadBytesPerSec: 1 << 20}
	row, final := v.Row(last, nil), v.FinalRow(part, nil)
	if !strings.HasPrefix(row, "22:40:47 ") {
		t.Errorf("row %q, want it stamped 22:40:47", row)
	}
	if !strings.HasPrefix(final, "   +0.4s ") {
		t.Errorf("final row %q, want it stamped \"   +0.4s\"", final)
	}
	if final[8:] != v.Row(part, nil)[8:] {
		t.Errorf("final row's values %q differ from Row's %q", final[8:], v.Row(part, nil)[8:])
	}
}

// TestTopIOChargesTheChildNotTheShell: a shell loop around dd. In one
// interval the shell's own I/O is 4 KiB, while 64 MiB its unseen
// children wrote came into its counters when it reaped them (the diskio
// scanner splits that off); the TOP-IO cell names "exited threads or
// children of bash",
// not bash. With taskstats, the dd that started and ended in the
// interval is named by its exit record. The end summary lists the
// unseen children's I/O under their parent, not as the parent's.
func TestTopIOChargesTheChildNotTheShell(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 30, 0, 0, time.UTC)
	iv := record.Interval{Dt: time.Second}
	polled := &record.Sample{Time: t0.Add(time.Second), Procs: []record.ProcIO{
		{PID: 300, StartTicks: 9, Comm: "bash", DeltaWriteBytes: 4096, DeltaReapedWriteBytes: 64 << 20},
		{PID: 12, StartTicks: 1, Comm: "postgres", DeltaWriteBytes: 8 << 20},
	}}
	if got := liveRow(iv, polled, false); !strings.HasSuffix(got, "children of bash 64.0") {
		t.Errorf("polled row ends %q, want \"children of bash 64.0\"", got[max(0, len(got)-30):])
	}
	exact := &record.Sample{Time: t0.Add(2 * time.Second), Procs: []record.ProcIO{
		{PID: 12, StartTicks: 1, Comm: "postgres", DeltaWriteBytes: 8 << 20},
	}, Events: []record.Event{
		{Kind: process.Exec, Source: "connector", PID: 301, PPID: 300, Comm: "dd"},
		{Kind: process.Exit, Source: "taskstats", PID: 301, PPID: 300, Comm: "dd", WriteBytes: 64 << 20},
		// Exec'd in an earlier interval: its life total is not this interval's.
		{Kind: process.Exit, Source: "taskstats", PID: 250, PPID: 1, Comm: "old", WriteBytes: 1 << 30},
	}}
	if got := liveRow(iv, exact, false); !strings.HasSuffix(got, " dd 64.0") {
		t.Errorf("exact row ends %q, want \"dd 64.0\"", got[max(0, len(got)-30):])
	}

	sm := record.NewSummary(&record.Header{PageSize: 4096})
	sm.Add(&record.Sample{Time: t0})
	sm.Add(polled)
	var b bytes.Buffer
	WriteSummaryWith(&b, sm, "run.jsonl", SummaryOptions{TopN: 5})
	out := b.String()
	var bashRow, kidsRow string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "bash":
			bashRow = l
		case len(f) > 3 && f[0] == "threads/children" && f[2] == "bash":
			kidsRow = l
		}
		if w := runewidth.StringWidth(l); w > 80 {
			t.Errorf("summary line %d columns wide: %s", w, l)
		}
	}
	if bashRow != "" {
		t.Errorf("bash listed with I/O it did not do (4 KiB own is noise):\n%s", out)
	}
	if !strings.Contains(kidsRow, "300") || !strings.Contains(kidsRow, "64.0 MiB written") {
		t.Errorf("no line \"threads/children of bash 300 … 64.0 MiB written\":\n%s", out)
	}
}

// TestSummaryNarrow: on a 60-column terminal the summary's process table
// narrows UNIT (then PROCESS) so that every row, the culprit's mark
// included, fits, as the other tables do.
func TestSummaryNarrow(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sm := record.NewSummary(&record.Header{PageSize: 4096})
	sm.Add(&record.Sample{Time: t0})
	sm.Add(&record.Sample{Time: t0.Add(time.Second), Procs: []record.ProcIO{
		{PID: 1234567, StartTicks: 1, Comm: "postgres-writer", Unit: "postgresql@15-main.service", DeltaWriteBytes: 900 << 20},
		{PID: 12, StartTicks: 1, Comm: "logrotate", Unit: "logrotate.service", DeltaReadBytes: 2 << 30, DeltaWriteBytes: 2 << 30},
	}})
	for _, width := range []int{60, 0} {
		var b bytes.Buffer
		WriteSummaryWith(&b, sm, "run.jsonl", SummaryOptions{TopN: 5, Width: width, Culprit: "logrotate.timer", CulpritProcs: []correlate.ProcID{{PID: 12, StartTicks: 1}}})
		max, rows := 70, 0
		if width > 0 {
			max = width
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if !strings.HasPrefix(l, "    ") {
				continue
			}
			rows++
			if w := runewidth.StringWidth(l); w > max {
				t.Errorf("width %d: row %d columns wide: %q", width, w, l)
			}
		}
		if rows != 3 {
			t.Errorf("width %d: %d table rows, want a header and 2:\n%s", width, rows, b.String())
		}
		if want := map[int]string{60: "postgre…", 0: "postgresql@15-mai…"}[width]; !strings.Contains(b.String(), want) {
			t.Errorf("width %d: unit not cut to %q:\n%s", width, want, b.String())
		}
	}
}

// defaultLive is the view of a host-only recording on a pipe.
var defaultLive = NewLiveView(LiveOptions{})

// liveHeader and liveUnits are the header lines of the default view
// (no latency, no cgroup, every column).
var liveHeader, liveUnits, _ = strings.Cut(defaultLive.Header(), "\n")

// liveRow formats one interval in the default view (every column, no
// latency or cgroup columns); see [LiveView.Row].
func liveRow(iv record.Interval, s *record.Sample, color bool) string {
	v := *defaultLive
	v.o.Color = color
	return v.Row(iv, s)
}

// TestSummaryStarsCulpritByPID is issue 30's item 12 (case C12 in
// testdata/cases): the culprit's own processes are starred by PID. Another
// tenant's dd and a python3 outside the analysed group have the names of
// the culprit's processes and get no star; they are not moved to the top.
func TestSummaryStarsCulpritByPID(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	sm := record.NewSummary(&record.Header{PageSize: 4096})
	sm.Add(&record.Sample{Time: t0})
	sm.Add(&record.Sample{Time: t0.Add(time.Second), Procs: []record.ProcIO{
		{PID: 20, StartTicks: 1, Comm: "dd", Unit: "mdjob.service", DeltaWriteBytes: 300 << 20},
		{PID: 21, StartTicks: 1, Comm: "python3", Unit: "mdjob.service", DeltaReadBytes: 100 << 20},
		{PID: 30, StartTicks: 1, Comm: "dd", Unit: "tenant.service", DeltaWriteBytes: 900 << 20},
		{PID: 41, StartTicks: 1, Comm: "python3", Unit: "other.service", DeltaReadBytes: 500 << 20},
	}})
	var b bytes.Buffer
	WriteSummaryWith(&b, sm, "run.jsonl", SummaryOptions{TopN: 5, Culprit: "mdjob.timer", CulpritProcs: []correlate.ProcID{{PID: 20, StartTicks: 1}, {PID: 21, StartTicks: 1}}})
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && (f[0] == "dd" || f[0] == "python3") {
			rows = append(rows, f[0]+" "+f[1]+map[bool]string{true: "*", false: ""}[strings.HasSuffix(l, " *")])
		}
	}
	if got, want := strings.Join(rows, ", "), "dd 20*, python3 21*, dd 30, python3 41"; got != want {
		t.Errorf("rows %q; want %q:\n%s", got, want, b.String())
	}
}
