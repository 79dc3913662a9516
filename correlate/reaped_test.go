package correlate

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// backupFirings is a recording of backup.timer (*:*:00/20) firing 10
// times at 1 s samples, each firing a 4 s burst of 16 MiB/s writes with
// no process recorded (the tests add sh 7000+i and its children), and
// those bursts.
func backupFirings(t *testing.T) (*record.Recording, []burst) {
	t.Helper()
	var bs []burst
	for i := range 10 {
		bs = append(bs, burst{at: t0.Add(time.Duration(i)*20*time.Second + 300*time.Millisecond), dur: 4 * time.Second,
			noProc: true, pid: 7000 + i, writeBps: 16 * mib})
	}
	backup := timerJob("backup.timer", "*:*:00/20", "/usr/local/bin/backup.sh")
	s := synth{interval: time.Second, dur: 200 * time.Second, bursts: bs, jobs: []record.Job{backup}, noLatency: true}
	return s.build(t), bs
}

// TestAnalyzeJobShellNotCreditedWithItsChildren: a timer's script (sh,
// backup.service) runs dd, which writes 64 MiB, and exits. The samples
// are what the diskio scanner records when polling (as in its
// TestScanReapedSplitByThread): dd seen once with 24 MiB, its exit with
// those last seen totals; when sh reaps dd, sh's counters grow by dd's
// 64 MiB, which the scanner splits off: sh's row has its own 1 MiB (a log) and,
// in DeltaReaped*, dd's 40 MiB written after the last look; sh's exit
// carries its own totals. The episode must credit sh with its own 1 MiB,
// not dd's writes again (before the scanner split them off, sh's
// delta and its exit both held dd's 64 MiB), and the reaped bytes, which
// no process is known to have written, go to no process.
func TestAnalyzeJobShellNotCreditedWithItsChildren(t *testing.T) {
	rec, bs := backupFirings(t)
	for i, b := range bs {
		k := int(b.at.Sub(t0)/time.Second) + 1 // the sample after the firing
		sh, dd := 7000+i, 7500+i
		unit := "backup.service"
		rec.Samples[k].Events = append(rec.Samples[k].Events,
			record.Event{Kind: process.Exec, Source: "poll", PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh", Unit: unit},
			record.Event{Kind: process.Exec, Source: "poll", PID: dd, PPID: sh, StartTicks: uint64(dd), Comm: "dd", Unit: unit})
		rec.Samples[k].Procs = append(rec.Samples[k].Procs, record.ProcIO{PID: dd, PPID: sh, StartTicks: uint64(dd), Comm: "dd",
			Unit: unit, WriteBytes: 24 * mib, DeltaWriteBytes: 24 * mib})
		rec.Samples[k+1].Events = append(rec.Samples[k+1].Events,
			record.Event{Kind: process.Exit, Source: "poll", PID: dd, PPID: sh, StartTicks: uint64(dd), Comm: "dd", Unit: unit, WriteBytes: 24 * mib})
		rec.Samples[k+1].Procs = append(rec.Samples[k+1].Procs, record.ProcIO{PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh",
			Unit: unit, WriteBytes: mib, DeltaWriteBytes: mib, DeltaReapedWriteBytes: 40 * mib})
		rec.Samples[k+2].Events = append(rec.Samples[k+2].Events,
			record.Event{Kind: process.Exit, Source: "poll", PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh", Unit: unit, WriteBytes: mib})
	}
	res := Analyze(rec, Options{})
	if len(res.Episodes) == 0 {
		t.Fatal("no episode")
	}
	e := res.Episodes[0]
	var got []ProcActivity
	for _, p := range e.Processes {
		if p.Comm == "sh" || p.Comm == "dd" {
			got = append(got, ProcActivity{PID: p.PID, Comm: p.Comm, WriteBytes: p.WriteBytes})
		}
	}
	want := []ProcActivity{{PID: 7500, Comm: "dd", WriteBytes: 24 * mib}, {PID: 7000, Comm: "sh", WriteBytes: mib}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("first episode's sh and dd (-want +got):\n%s", d)
	}
}

// TestAnalyzeJobCreditedWithReapedChildren: polling (no process-events
// connector), backup.timer's sh (backup.service) runs two dd that write
// 32 MiB each and exit between two scans: no scan sees them. The scanner
// finds sh's counters grown by 64 MiB it did not do and reports them in
// sh's DeltaReapedWriteBytes; sh itself writes 1 MiB. In the first
// episode a login shell (session-3.scope, no job's) also reaps 2 MiB of
// unseen children. The job must be credited with its children's 64 MiB
// (a "children of sh" row, in its unit), the episode's total must hold
// 1+64+2 MiB once, and the login shell's 2 MiB, tied to no job, must be
// the episode's UnattributedReapedBytes.
// reapedChildrenRec builds TestAnalyzeJobCreditedWithReapedChildren's
// recording; old: as recorded before the scanner split reaped children's
// I/O off (no DeltaReaped*: sh's delta holds its children's 64 MiB).
func reapedChildrenRec(t *testing.T, old bool) *record.Recording {
	rec, bs := backupFirings(t)
	const unit = "backup.service"
	for i, b := range bs {
		k := int(b.at.Sub(t0)/time.Second) + 1 // the sample after the firing
		sh := 7000 + i
		rec.Samples[k].Events = append(rec.Samples[k].Events,
			record.Event{Kind: process.Exec, Source: "poll", PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh", Unit: unit})
		rec.Samples[k].Procs = append(rec.Samples[k].Procs, record.ProcIO{PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh",
			Unit: unit})
		row := record.ProcIO{PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh",
			Unit: unit, WriteBytes: mib, DeltaWriteBytes: mib, DeltaReapedWriteBytes: 64 * mib}
		if old {
			row.WriteBytes, row.DeltaWriteBytes, row.DeltaReapedWriteBytes = 65*mib, 65*mib, 0
		}
		rec.Samples[k+1].Procs = append(rec.Samples[k+1].Procs, row)
		rec.Samples[k+2].Events = append(rec.Samples[k+2].Events,
			record.Event{Kind: process.Exit, Source: "poll", PID: sh, PPID: 1, StartTicks: uint64(sh), Comm: "sh", Unit: unit, WriteBytes: row.WriteBytes})
		if i == 0 && !old {
			rec.Samples[k+1].Procs = append(rec.Samples[k+1].Procs, record.ProcIO{PID: 9000, PPID: 1, StartTicks: 9000, Comm: "bash",
				Unit: "session-3.scope", DeltaReapedWriteBytes: 2 * mib})
		}
	}
	return rec
}

func TestAnalyzeJobCreditedWithReapedChildren(t *testing.T) {
	res := Analyze(reapedChildrenRec(t, false), Options{})
	if len(res.Episodes) != 10 {
		t.Fatalf("%d episodes, want 10 (one per firing)", len(res.Episodes))
	}
	e := res.Episodes[0]
	var rows []ProcActivity
	for _, p := range e.Processes {
		rows = append(rows, ProcActivity{PID: p.PID, PPID: p.PPID, Comm: p.Comm, Unit: p.Unit, WriteBytes: p.WriteBytes, Reaped: p.Reaped})
	}
	want := []ProcActivity{
		{PPID: 7000, Comm: "exited threads or children of sh", Unit: "backup.service", WriteBytes: 64 * mib, Reaped: true},
		{PPID: 9000, Comm: "exited threads or children of bash", Unit: "session-3.scope", WriteBytes: 2 * mib, Reaped: true},
		{PID: 7000, PPID: 1, Comm: "sh", Unit: "backup.service", WriteBytes: mib},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("first episode's processes (-want +got):\n%s", d)
	}
	if e.IOBytes != 67*mib || e.ReapedBytes != 66*mib || e.UnattributedReapedBytes != 2*mib {
		t.Errorf("first episode: IOBytes %d, ReapedBytes %d, UnattributedReapedBytes %d; want %d, %d, %d",
			e.IOBytes, e.ReapedBytes, e.UnattributedReapedBytes, 67*mib, 66*mib, 2*mib)
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "backup.timer" {
		t.Fatalf("culprits %+v, want backup.timer first", res.Culprits)
	}
	c := res.Culprits[0]
	if c.EpisodesExplained != 10 {
		t.Errorf("backup.timer explains %d episodes, want 10", c.EpisodesExplained)
	}
	cr := c.Proof.Credits[0]
	if cr.Bytes != 65*mib || cr.AllBytes != 67*mib || cr.Share != 0.97 {
		t.Errorf("backup.timer's first credit: %d of %d bytes, share %v; want %d of %d, 0.97", cr.Bytes, cr.AllBytes, cr.Share, 65*mib, 67*mib)
	}
	var progs []string
	for _, p := range c.Processes {
		progs = append(progs, p.Program+" "+strconv.FormatUint(p.WriteBytes/mib, 10))
	}
	if d := cmp.Diff([]string{"exited threads or children of sh 640", "sh 10"}, progs); d != "" {
		t.Errorf("backup.timer's processes, MiB written over its episodes (-want +got):\n%s", d)
	}
}

// TestAnalyzeJobOldShapeReapedInParent: the same job recorded before the
// scanner split reaped children off: sh's own delta holds its
// children's 64 MiB. The job is still credited with 65 MiB per episode,
// as sh's, with no "children of" row and nothing reaped.
func TestAnalyzeJobOldShapeReapedInParent(t *testing.T) {
	res := Analyze(reapedChildrenRec(t, true), Options{})
	if len(res.Episodes) != 10 {
		t.Fatalf("%d episodes, want 10 (one per firing)", len(res.Episodes))
	}
	e := res.Episodes[0]
	if len(e.Processes) != 1 || e.Processes[0].Comm != "sh" || e.Processes[0].WriteBytes != 65*mib || e.IOBytes != 65*mib || e.ReapedBytes != 0 {
		t.Errorf("first episode: processes %+v, IOBytes %d, ReapedBytes %d; want sh alone with %d", e.Processes, e.IOBytes, e.ReapedBytes, 65*mib)
	}
	if len(res.Culprits) == 0 || res.Culprits[0].Name != "backup.timer" || res.Culprits[0].EpisodesExplained != 10 {
		t.Fatalf("culprits %+v, want backup.timer first, explaining 10", res.Culprits)
	}
	if cr := res.Culprits[0].Proof.Credits[0]; cr.Bytes != 65*mib || cr.Share != 1 {
		t.Errorf("backup.timer's first credit: %d bytes, share %v; want %d, 1", cr.Bytes, cr.Share, 65*mib)
	}
}

// tieRec is trial s6's runG loop, as the scanner before
// record.ProcIOAccountingDepth recorded it: s6cron.sh 15829 (started
// before the recording) runs a fresh s6nightly.sh every 20 s, which at
// once runs cat of 400 MiB; script and cat start within one clock tick.
// cat is seen by two scans (its rows), both exit before the third, and
// the loop's row there has cat's whole 390 MiB in DeltaReapedReadBytes,
// as runG's sample 112 does (the scanner credited the script before
// cat). With threaded, cat is instead a multi-threaded reader whose
// taskstats exit holds 12 KiB, started 80 ms after the script (the old
// scanner credited it first), and the reaped delta holds all but those
// 12 KiB: the 300 MiB its rows show and 90 MiB no scan saw.
func tieRec(t *testing.T, accounting int, threaded bool) *record.Recording {
	var bs []burst
	for i := range 6 {
		bs = append(bs, burst{at: t0.Add(time.Duration(i)*20*time.Second + 300*time.Millisecond), dur: 3 * time.Second,
			noProc: true, pid: 31000 + i, writeBps: 130 * mib})
	}
	s := synth{interval: time.Second, dur: 130 * time.Second, bursts: bs, noLatency: true}
	rec := s.build(t)
	rec.Header.ProcIOAccounting = accounting
	const loop = 15829
	for i, b := range bs {
		k := int(b.at.Sub(t0)/time.Second) + 1
		sh, cat := 31100+10*i, 31101+10*i
		at := rec.Samples[k-1].Time.Add(200 * time.Millisecond)
		lag := 5 * time.Millisecond // within one tick
		if threaded {
			lag = 80 * time.Millisecond // the old order was right
		}
		rec.Samples[k].Events = append(rec.Samples[k].Events,
			record.Event{Kind: process.Exec, Source: "connector", Time: at, PID: sh, PPID: loop, Comm: "s6nightly.sh",
				Cmdline: "/bin/sh /var/tmp/s6/s6nightly.sh", ParentComm: "s6cron.sh", ParentCmdline: "/bin/sh /var/tmp/s6/s6cron.sh"},
			record.Event{Kind: process.Exec, Source: "connector", Time: at.Add(lag), PID: cat, PPID: sh, Comm: "cat",
				Cmdline: "cat /var/tmp/s6/job.dat"})
		rec.Samples[k].Procs = append(rec.Samples[k].Procs, record.ProcIO{PID: cat, PPID: sh, StartTicks: uint64(cat), Comm: "cat",
			Cmdline: "cat /var/tmp/s6/job.dat", ReadBytes: 100 * mib, DeltaReadBytes: 100 * mib})
		rec.Samples[k+1].Procs = append(rec.Samples[k+1].Procs, record.ProcIO{PID: cat, PPID: sh, StartTicks: uint64(cat), Comm: "cat",
			Cmdline: "cat /var/tmp/s6/job.dat", ReadBytes: 300 * mib, DeltaReadBytes: 200 * mib})
		exit := uint64(390 * mib)
		if threaded {
			exit = 12288
		}
		rec.Samples[k+2].Events = append(rec.Samples[k+2].Events,
			record.Event{Kind: process.Exit, Source: "taskstats", Time: rec.Samples[k+2].Time.Add(-700 * time.Millisecond), PID: cat, PPID: sh, Comm: "cat", ReadBytes: exit},
			record.Event{Kind: process.Exit, Source: "taskstats", Time: rec.Samples[k+2].Time.Add(-690 * time.Millisecond), PID: sh, PPID: loop, Comm: "s6nightly.sh"})
		reaped := uint64(390 * mib)
		if threaded {
			// The old scanner took the exit's 12 KiB off; the rest
			// beyond what the scans saw (90 MiB) is truly unseen.
			reaped = 390*mib - 12288
		}
		rec.Samples[k+2].Procs = append(rec.Samples[k+2].Procs, record.ProcIO{PID: loop, PPID: 15827, StartTicks: 3498110, Comm: "s6cron.sh",
			Cmdline: "/bin/sh /var/tmp/s6/s6cron.sh", WriteBytes: 20480, DeltaReapedReadBytes: reaped})
	}
	return rec
}

// TestAnalyzeGrandchildReapedOnce: cat's 390 MiB count once in each
// episode, as cat's; the loop's reaped delta of a recording made before
// record.ProcIOAccountingDepth held them a second time ("children of
// s6cron.sh" 390 MiB beside cat 390 MiB), which halved the loop's share.
// A recording of today's scanner is taken as it is.
func TestAnalyzeGrandchildReapedOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		accounting int
		threaded   bool
		wantCat    uint64
		wantReaped uint64
	}{
		{"old scanner, same tick", 0, false, 390 * mib, 0},
		{"old scanner, threaded cat", 0, true, 300 * mib, 90 * mib},
		{"today's scanner", record.ProcIOAccountingDepth, false, 390 * mib, 390 * mib},
	} {
		res := Analyze(tieRec(t, tc.accounting, tc.threaded), Options{})
		if len(res.Episodes) != 6 {
			t.Fatalf("%s: %d episodes, want 6", tc.name, len(res.Episodes))
		}
		for i, e := range res.Episodes {
			var cat uint64
			for _, p := range e.Processes {
				if p.Comm == "cat" {
					cat = p.Bytes()
				}
			}
			if cat != tc.wantCat || e.ReapedBytes != tc.wantReaped || e.UnattributedReapedBytes != tc.wantReaped {
				t.Errorf("%s: episode %d: cat %d B, reaped %d B (unattributed %d); want cat %d, reaped %d",
					tc.name, i, cat, e.ReapedBytes, e.UnattributedReapedBytes, tc.wantCat, tc.wantReaped)
			}
		}
	}
}
