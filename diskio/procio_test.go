package diskio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/testutil"
	"github.com/memdiag/memdiag/process"
)

var t0 = time.Date(2026, 11, 29, 21, 45, 30, 0, time.UTC)

// procLink is a proc root that tests can point at one snapshot after
// another: <dir>/proc is a symlink.
type procLink struct {
	t    *testing.T
	root string
}

func newProcLink(t *testing.T, target string) *procLink {
	p := &procLink{t: t, root: filepath.Join(t.TempDir(), "proc")}
	p.set(target)
	return p
}

func (p *procLink) set(target string) {
	p.t.Helper()
	abs, err := filepath.Abs(target)
	if err != nil {
		p.t.Fatal(err)
	}
	os.Remove(p.root)
	if err := os.Symlink(abs, p.root); err != nil {
		p.t.Fatal(err)
	}
}

// failing wraps the real reader and returns err for paths ending in suffix.
func failing(err error, suffixes ...string) func(dirfd int, path, buf []byte) (int, error) {
	return func(dirfd int, path, buf []byte) (int, error) {
		p := "/" + string(bytes.TrimRight(path, "\x00"))
		for _, s := range suffixes {
			if strings.HasSuffix(p, s) {
				return 0, err
			}
		}
		return readFileRaw(dirfd, path, buf)
	}
}

func mustScanner(t *testing.T, root string, opts ProcScanOptions) *ProcScanner {
	t.Helper()
	s, err := NewProcScanner(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func scan(t *testing.T, s *ProcScanner, now time.Time) ([]ProcIO, []process.Event, ScanStats) {
	t.Helper()
	top, ev, st, err := s.Scan(now)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return top, ev, st
}

func TestScanPollFixture(t *testing.T) {
	link := newProcLink(t, fixture("poll", "t0", "proc"))
	s := mustScanner(t, link.root, ProcScanOptions{})
	// /proc/1/io is EACCES even for root on the host the fixture is from.
	s.readFile = failing(syscall.EACCES, "/1/io")

	top, ev, st := scan(t, s, t0)
	if top != nil || ev != nil {
		t.Errorf("baseline scan: top %v, events %v; want none", top, ev)
	}
	if diff := cmp.Diff(ScanStats{Processes: 4, Denied: 1}, st); diff != "" {
		t.Errorf("baseline stats (-want +got):\n%s", diff)
	}

	link.set(fixture("poll", "t1", "proc"))
	t1 := t0.Add(time.Second)
	top, ev, st = scan(t, s, t1)
	if diff := cmp.Diff(ScanStats{Processes: 4, Denied: 1}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	// Values from testdata/diskio/poll/SOURCE: the writer read and wrote
	// 10 x 256 KiB each between the snapshots; bash and the sleeps did no I/O.
	wantTop := []ProcIO{{
		PID: 15706, PPID: 15700, StartTicks: 60704, Comm: "python3",
		Cmdline: "/root/.pyenv/versions/3.11.7/bin/python3 /var/tmp/memdiag-diskio-cap/writer.py --token=*** --password ***",
		Cgroup:  "/memdiag-diskio-fixture.service", Unit: "memdiag-diskio-fixture.service",
		ReadBytes: 7909376, WriteBytes: 7602176,
		DeltaReadBytes: 7909376 - 5287936, DeltaWriteBytes: 7602176 - 4980736,
	}}
	if diff := cmp.Diff(wantTop, top); diff != "" {
		t.Errorf("top (-want +got):\n%s", diff)
	}
	wantEv := []process.Event{
		{Kind: process.Exit, Time: t1, Source: "poll", PID: 15749, PPID: 15700, StartTicks: 60904,
			Comm: "sleep", Cmdline: "sleep 0.6", Cgroup: "/"},
		{Kind: process.Exec, Time: t1, Source: "poll", PID: 15776, PPID: 15700, StartTicks: 60940,
			Comm: "sleep", Cmdline: "sleep 30", Cgroup: "/"},
	}
	if diff := cmp.Diff(wantEv, ev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The same snapshot again: nothing moved, nothing started or ended.
	top, ev, _ = scan(t, s, t1.Add(time.Second))
	if len(top) != 0 || len(ev) != 0 {
		t.Errorf("unchanged snapshot: top %v events %v, want none", top, ev)
	}
}

func TestScanKeepCmdline(t *testing.T) {
	link := newProcLink(t, fixture("poll", "t0", "proc"))
	s := mustScanner(t, link.root, ProcScanOptions{KeepCmdline: true})
	s.readFile = failing(syscall.EACCES, "/1/io")
	scan(t, s, t0)
	link.set(fixture("poll", "t1", "proc"))
	top, _, _ := scan(t, s, t0.Add(time.Second))
	want := "/root/.pyenv/versions/3.11.7/bin/python3 /var/tmp/memdiag-diskio-cap/writer.py --token=abc123 --password hunter2"
	if len(top) != 1 || top[0].Cmdline != want {
		t.Errorf("top = %+v, want one process with cmdline %q", top, want)
	}
}

// copyProc copies the real files of one fixture process into dir/<pid>,
// taking each named file from the given source directory.
func copyProc(t *testing.T, dir string, pid int, from map[string]string) {
	t.Helper()
	d := filepath.Join(dir, fmt.Sprint(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range from {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func all(src string) map[string]string {
	return map[string]string{"stat": src, "io": src, "cgroup": src, "cmdline": src}
}

func TestScanPIDReuse(t *testing.T) {
	// PID 15706 at t0 is the python writer (start 60704). At t1 the same
	// PID belongs to a different process: the writer's t1 io counters with
	// the stat of the sleep that started later (start 60940). Without
	// start-time identity the delta would be 7909376-5287936; as a new
	// process all of its I/O counts.
	py0, py1, sl := fixture("poll", "t0", "proc", "15706"), fixture("poll", "t1", "proc", "15706"), fixture("poll", "t1", "proc", "15776")
	a, b := t.TempDir(), t.TempDir()
	copyProc(t, a, 15706, all(py0))
	copyProc(t, b, 15706, map[string]string{"stat": sl, "cmdline": sl, "cgroup": sl, "io": py1})
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	t1 := t0.Add(time.Second)
	top, ev, _ := scan(t, s, t1)
	wantEv := []process.Event{
		{Kind: process.Exit, Time: t1, Source: "poll", PID: 15706, PPID: 15700, StartTicks: 60704, Comm: "python3",
			Cmdline: "/root/.pyenv/versions/3.11.7/bin/python3 /var/tmp/memdiag-diskio-cap/writer.py --token=*** --password ***",
			Cgroup:  "/memdiag-diskio-fixture.service", Unit: "memdiag-diskio-fixture.service",
			ReadBytes: 5287936, WriteBytes: 4980736},
		{Kind: process.Exec, Time: t1, Source: "poll", PID: 15706, PPID: 15700, StartTicks: 60940, Comm: "sleep",
			Cmdline: "sleep 30", Cgroup: "/", ReadBytes: 7909376, WriteBytes: 7602176},
	}
	if diff := cmp.Diff(wantEv, ev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(top) != 1 || top[0].StartTicks != 60940 || top[0].DeltaReadBytes != 7909376 || top[0].DeltaWriteBytes != 7602176 {
		t.Errorf("top = %+v; want the new process with all its I/O as delta", top)
	}
}

func TestScanVanished(t *testing.T) {
	py0, bash := fixture("poll", "t0", "proc", "15706"), fixture("poll", "t0", "proc", "9225")
	sl := fixture("poll", "t0", "proc", "15749")
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		copyProc(t, dir, 15706, all(py0))
		copyProc(t, dir, 9225, all(bash))
		copyProc(t, dir, 15749, all(sl))
	}
	// At b, 15706's directory is still listed but its files are gone
	// (exited between getdents and open), and 9225's io vanished between
	// reading stat and io. 15749 vanishes with ESRCH, as a read of an
	// already open file of a dead task returns.
	os.RemoveAll(filepath.Join(b, "15706"))
	os.Mkdir(filepath.Join(b, "15706"), 0o755)
	os.Remove(filepath.Join(b, "9225", "io"))
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	s.readFile = failing(syscall.ESRCH, "/15749/stat")
	top, ev, st := scan(t, s, t0.Add(time.Second))
	if diff := cmp.Diff(ScanStats{Processes: 3, Vanished: 3}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if len(top) != 0 {
		t.Errorf("top = %+v, want none", top)
	}
	var exits []int
	for _, e := range ev {
		if e.Kind != process.Exit {
			t.Errorf("unexpected event %+v", e)
		}
		exits = append(exits, e.PID)
	}
	if diff := cmp.Diff([]int{9225, 15706, 15749}, exits); diff != "" {
		t.Errorf("exited PIDs (-want +got):\n%s", diff)
	}
}

func TestScanDenied(t *testing.T) {
	py0, py1 := fixture("poll", "t0", "proc", "15706"), fixture("poll", "t1", "proc", "15706")
	sl := fixture("poll", "t1", "proc", "15776")
	a, b := t.TempDir(), t.TempDir()
	copyProc(t, a, 15706, all(py0))
	copyProc(t, b, 15706, all(py1))
	copyProc(t, b, 15776, all(sl))
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	// As a non-root user: another user's /proc/PID/io is EACCES at open
	// (mode 0400), or EPERM where a security module refuses ptrace access.
	s.readFile = failing(syscall.EACCES, "/15706/io")
	_, _, st := scan(t, s, t0)
	if st.Denied != 1 {
		t.Errorf("baseline Denied = %d, want 1", st.Denied)
	}
	link.set(b)
	s.readFile = failing(syscall.EPERM, "/15706/io", "/15776/io")
	t1 := t0.Add(time.Second)
	top, ev, st := scan(t, s, t1)
	if diff := cmp.Diff(ScanStats{Processes: 2, Denied: 2}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if len(top) != 0 {
		t.Errorf("top = %+v; denied processes have no known I/O", top)
	}
	// A new process whose I/O is unreadable is still an exec event.
	want := []process.Event{{Kind: process.Exec, Time: t1, Source: "poll", PID: 15776, PPID: 15700, StartTicks: 60940,
		Comm: "sleep", Cmdline: "sleep 30", Cgroup: "/"}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// writeProc writes a process directory from the real python3 writer's
// files of the fixture, with pid, ppid, start time and I/O counters
// replaced. Used for the selection and accounting tests, where the
// numbers, not the provenance, are under test.
func writeProc(t testing.TB, dir string, pid, ppid int, start uint64, comm string, rd, wr uint64) {
	t.Helper()
	testutil.WriteProc(t, dir, pid, ppid, start, comm, map[string]string{
		"io":      fmt.Sprintf("rchar: %d\nwchar: %d\nsyscr: 10\nsyscw: 10\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: 0\n", rd, wr, rd, wr),
		"cmdline": comm + "\x00",
		"cgroup":  "0::/system.slice/" + comm + ".service\n",
	})
}

func TestScanTopN(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	// pid: (t0 read, write) -> (t1 read, write)
	procs := []struct {
		pid            int
		r0, w0, r1, w1 uint64
	}{
		{100, 0, 0, 0, 0},                   // idle
		{101, 1000, 0, 1000, 5000},          // Δ 5000
		{102, 0, 0, 7000, 0},                // Δ 7000
		{103, 50, 50, 2550, 2550},           // Δ 5000, ties with 101: lower PID first
		{104, 1 << 40, 1 << 40, 1 << 40, 1}, // counter went backwards: Δ 0
		{105, 0, 0, 1, 0},                   // Δ 1
	}
	for _, p := range procs {
		writeProc(t, a, p.pid, 1, 1000+uint64(p.pid), fmt.Sprintf("p%d", p.pid), p.r0, p.w0)
		writeProc(t, b, p.pid, 1, 1000+uint64(p.pid), fmt.Sprintf("p%d", p.pid), p.r1, p.w1)
	}
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{TopN: 3})
	scan(t, s, t0)
	link.set(b)
	top, _, _ := scan(t, s, t0.Add(time.Second))
	var got []string
	for _, p := range top {
		got = append(got, fmt.Sprintf("%d %s %s r%d w%d", p.PID, p.Comm, p.Unit, p.DeltaReadBytes, p.DeltaWriteBytes))
	}
	want := []string{"102 p102 p102.service r7000 w0", "101 p101 p101.service r0 w5000", "103 p103 p103.service r2500 w2500"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("top 3 (-want +got):\n%s", diff)
	}
	s.opts.TopN = 10
	// Back to a: every counter goes backwards (Δ 0) except 104's write,
	// which grows by 2^40-1.
	link.set(a)
	top, _, _ = scan(t, s, t0.Add(2*time.Second))
	if len(top) != 1 || top[0].PID != 104 || top[0].DeltaWriteBytes != 1<<40-1 || top[0].DeltaReadBytes != 0 {
		t.Errorf("counters backwards: top = %+v, want only 104 with 2^40-1 written", top)
	}
}

func TestScanReapedChildNotCountedTwice(t *testing.T) {
	// The shell 200 runs dd 201. dd wrote 8 MiB while we watched; when
	// the shell reaps it, the kernel adds dd's totals to the shell's
	// counters. The shell itself wrote 4096 bytes in the interval.
	a, b := t.TempDir(), t.TempDir()
	writeProc(t, a, 200, 1, 5000, "sh", 0, 0)
	writeProc(t, a, 201, 200, 5001, "dd", 0, 8<<20)
	writeProc(t, b, 200, 1, 5000, "sh", 16384, 8<<20+4096+4096)
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	top, ev, _ := scan(t, s, t0.Add(time.Second))
	// dd's last seen 8 MiB is subtracted; 4096 written by dd after our
	// last look and the shell's own 4096 + 16384 read stay with the shell.
	if len(top) != 1 || top[0].PID != 200 || top[0].DeltaWriteBytes != 8192 || top[0].DeltaReadBytes != 16384 {
		t.Errorf("top = %+v; want the shell with 8192 written, 16384 read", top)
	}
	want := []process.Event{{Kind: process.Exit, Time: t0.Add(time.Second), Source: "poll", PID: 201, PPID: 200, StartTicks: 5001,
		Comm: "dd", Cmdline: "dd", Cgroup: "/system.slice/dd.service", Unit: "dd.service", WriteBytes: 8 << 20}}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestScanNoteExits: with taskstats' exact totals, a reaped child's whole
// I/O comes off the parent — the 4096 bytes dd wrote after our last look,
// and all of a child (202) that lived and was reaped between two scans.
func TestScanNoteExits(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeProc(t, a, 200, 1, 5000, "sh", 0, 0)
	writeProc(t, a, 201, 200, 5001, "dd", 0, 8<<20)
	// The shell's counters grow by its own 4096 written and 16384 read,
	// dd's 8 MiB + 4096, and 1 MiB of the unseen child 202.
	writeProc(t, b, 200, 1, 5000, "sh", 16384, 8<<20+4096+4096+1<<20)
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	s.NoteExits([]process.Event{
		{Kind: process.Exit, Source: "taskstats", PID: 201, PPID: 200, WriteBytes: 8<<20 + 4096},
		{Kind: process.Exit, Source: "taskstats", PID: 202, PPID: 200, WriteBytes: 1 << 20},
		{Kind: process.Exit, Source: "poll", PID: 203, PPID: 200, WriteBytes: 1 << 30}, // not exact: ignored
	})
	top, _, _ := scan(t, s, t0.Add(time.Second))
	if len(top) != 1 || top[0].PID != 200 || top[0].DeltaWriteBytes != 4096 || top[0].DeltaReadBytes != 16384 {
		t.Errorf("top = %+v; want the shell with its own 4096 written and 16384 read", top)
	}
	if len(s.exitIO) != 0 {
		t.Errorf("exit totals kept after the scan: %v", s.exitIO)
	}
}

func TestScanExecSamePID(t *testing.T) {
	// fork then exec between two scans: same PID and start time, new comm.
	a, b := t.TempDir(), t.TempDir()
	writeProc(t, a, 300, 1, 7000, "sh", 0, 0)
	writeProc(t, b, 300, 1, 7000, "pmlogger_check", 4096, 0)
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	top, ev, _ := scan(t, s, t0.Add(time.Second))
	if len(ev) != 1 || ev[0].Kind != process.Exec || ev[0].Comm != "pmlogger_check" || ev[0].Unit != "pmlogger_check.service" {
		t.Errorf("events = %+v; want one exec of pmlogger_check", ev)
	}
	if len(top) != 1 || top[0].DeltaReadBytes != 4096 || top[0].Cmdline != "pmlogger_check" {
		t.Errorf("top = %+v; want pmlogger_check with 4096 read", top)
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line         string
		comm         string
		ppid         int
		start, blkio uint64
		ok           bool
		name         string
	}{
		{name: "fixture python3", line: "15706 (python3) S 15700 15700 9225 0 -1 4194304 3151 6499 2 0 5 2 4 2 20 0 1 0 60704 17555456 3446 18446744073709551615 94816568025088 94816568025429 140723077340128 0 0 0 0 16781318 0 1 0 0 17 1 0 0 0 0 0 94816568036784 94816568037400 94817607196672 140723077347439 140723077347552 140723077347552 140723077349327 0\n",
			comm: "python3", ppid: 15700, start: 60704, ok: true},
		// systemd's user manager helper is really called "(sd-pam)".
		{name: "parens in comm", line: "1290 ((sd-pam)) S 1289 1289 1289 0 -1 1077936448 49 0 0 0 0 0 0 0 20 0 1 0 2531 105312256 1092 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 0 0 0 7 0 0 0 0 0 0 0 0 0 0\n",
			comm: "(sd-pam)", ppid: 1289, start: 2531, blkio: 7, ok: true},
		{name: "space and paren", line: "42 (a) b) R 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 3\n",
			comm: "a) b", ppid: 1, start: 99, blkio: 3, ok: true},
		{name: "old kernel, no field 42", line: "7 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12\n", comm: "init", ppid: 0, start: 12, ok: true},
		{name: "truncated", line: "7 (init) S 0 1 1", ok: false},
		{name: "garbage", line: "hello", ok: false},
		{name: "bad ppid", line: "7 (x) S abc 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12\n", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sf, ok := parseStat([]byte(tt.line))
			comm, ppid, start, blkio := sf.comm, sf.ppid, sf.start, sf.blkio
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if string(comm) != tt.comm || ppid != tt.ppid || start != tt.start || blkio != tt.blkio {
				t.Errorf("got (%q, %d, %d, %d), want (%q, %d, %d, %d)", comm, ppid, start, blkio, tt.comm, tt.ppid, tt.start, tt.blkio)
			}
		})
	}
}

func TestParseIO(t *testing.T) {
	b, err := os.ReadFile(fixture("poll", "t0", "proc", "9225", "io"))
	if err != nil {
		t.Fatal(err)
	}
	rd, wr, cw, ok := parseIO(b)
	if !ok || rd != 2437120 || wr != 9383936 || cw != 380928 {
		t.Errorf("parseIO(bash) = %d %d %d %v, want 2437120 9383936 380928 true", rd, wr, cw, ok)
	}
	for _, bad := range []string{"", "read_bytes: 1\nwrite_bytes: 2\n", "read_bytes: x\nwrite_bytes: 2\ncancelled_write_bytes: 0\n"} {
		if _, _, _, ok := parseIO([]byte(bad)); ok {
			t.Errorf("parseIO(%q) ok, want failure", bad)
		}
	}
}

func TestNewProcScannerBadRoot(t *testing.T) {
	if _, err := NewProcScanner(filepath.Join(t.TempDir(), "nope"), ProcScanOptions{}); err == nil {
		t.Error("missing root: no error")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := NewProcScanner(f, ProcScanOptions{}); err == nil {
		t.Error("file as root: no error")
	}
	// A root that disappears after construction is a Scan error, and does
	// not turn every known process into an exit.
	link := newProcLink(t, fixture("poll", "t0", "proc"))
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	os.Remove(link.root)
	if _, _, _, err := s.Scan(t0.Add(time.Second)); err == nil {
		t.Error("Scan of a removed root: no error")
	}
	link.set(fixture("poll", "t0", "proc"))
	if _, ev, _ := scan(t, s, t0.Add(2*time.Second)); len(ev) != 0 {
		t.Errorf("after a failed scan: events %+v, want none", ev)
	}
}

func TestScanLongCmdlineTruncated(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeProc(t, a, 400, 1, 9000, "java", 0, 0)
	writeProc(t, b, 400, 1, 9000, "java", 0, 4096)
	long := "java\x00-cp\x00" + strings.Repeat("/opt/lib/x.jar:", 1000) + "\x00Main\x00"
	for _, d := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(d, "400", "cmdline"), []byte(long), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{MaxCmdline: 100})
	scan(t, s, t0)
	link.set(b)
	top, _, _ := scan(t, s, t0.Add(time.Second))
	want := "java -cp " + strings.Repeat("/opt/lib/x.jar:", 7)[:100-len("java\x00-cp\x00")]
	if len(top) != 1 || top[0].Cmdline != want {
		t.Errorf("top = %+v; want cmdline cut at 100 bytes: %q", top, want)
	}
}

// TestScanNoteExitsGrandchildren is what a new user saw: a loop (300)
// starts a script (301) that runs cat (302); cat's reads are reaped into
// the script, and the script — cat's reads included — into the loop.
// taskstats reports only each task's own I/O, so the loop must not be
// charged with cat's 64 MiB.
func TestScanNoteExitsGrandchildren(t *testing.T) {
	for _, seenScript := range []bool{false, true} {
		a, b := t.TempDir(), t.TempDir()
		writeProc(t, a, 300, 1, 6000, "loop.sh", 0, 0)
		if seenScript {
			writeProc(t, a, 301, 300, 6001, "job.sh", 0, 0)
		}
		// After both are reaped the loop's counters hold cat's 64 MiB,
		// the script's 8192 read and the loop's own 4096.
		writeProc(t, b, 300, 1, 6000, "loop.sh", 64<<20+8192+4096, 0)
		link := newProcLink(t, a)
		s := mustScanner(t, link.root, ProcScanOptions{})
		scan(t, s, t0)
		link.set(b)
		s.NoteExits([]process.Event{
			{Kind: process.Exit, Source: "taskstats", PID: 302, PPID: 301, ReadBytes: 64 << 20},
			{Kind: process.Exit, Source: "taskstats", PID: 301, PPID: 300, ReadBytes: 8192},
		})
		top, _, _ := scan(t, s, t0.Add(time.Second))
		if len(top) != 1 || top[0].PID != 300 || top[0].DeltaReadBytes != 4096 {
			t.Errorf("script seen alive %v: top = %+v; want the loop with its own 4096 read", seenScript, top)
		}
	}
}

// TestScanGrandchildSameStartTick is the new user's loop again, with the
// script and its cat both seen alive and both gone at the next scan: they
// started within one clock tick (same start time), so only their
// ancestry says which was reaped first. cat's 64 MiB reached the loop
// through the script and must come off the loop's reaped delta, with and
// without taskstats' exact totals. The exited processes come from a map,
// so each case runs several times.
func TestScanGrandchildSameStartTick(t *testing.T) {
	const mib = 1 << 20
	a, b := t.TempDir(), t.TempDir()
	writeProcTask(t, a, 300, 1, 6000, "loop.sh", 0, 0, 0, 0)
	writeProcTask(t, a, 301, 300, 6001, "job.sh", 0, 0, 0, 0)
	writeProcTask(t, a, 302, 301, 6001, "cat", 64*mib, 0, 64*mib, 0)
	// Both reaped: the loop's counters hold cat's 64 MiB, the script's
	// 8192 and its own 4096.
	writeProcTask(t, b, 300, 1, 6000, "loop.sh", 64*mib+8192+4096, 0, 4096, 0)
	setReaps(t, b, 300, 1)
	for _, exact := range []bool{false, true} {
		for range 8 {
			link := newProcLink(t, a)
			s := mustScanner(t, link.root, ProcScanOptions{})
			scan(t, s, t0)
			link.set(b)
			// Without taskstats the script's 8192 after our last look is
			// unseen: it stays reaped, attributed to no process.
			var wantReaped uint64 = 8192
			if exact {
				s.NoteExits([]process.Event{
					{Kind: process.Exit, Source: "taskstats", PID: 302, PPID: 301, ReadBytes: 64 * mib},
					{Kind: process.Exit, Source: "taskstats", PID: 301, PPID: 300, ReadBytes: 8192},
				})
				wantReaped = 0
			}
			top, _, st := scan(t, s, t0.Add(time.Second))
			if len(top) != 1 || top[0].PID != 300 || top[0].DeltaReadBytes != 4096 || top[0].DeltaReapedReadBytes != wantReaped {
				t.Fatalf("exact=%v: top = %+v; want the loop with its own 4096 read and %d reaped", exact, top, wantReaped)
			}
			if st.ReapedReadBytes != wantReaped {
				t.Fatalf("exact=%v: stats = %+v; want %d reaped read", exact, st, wantReaped)
			}
		}
	}
}

// TestScanNoteExitsThreadedChild is runG's go test: a multi-threaded test
// binary (e2e.test) read 1.5 GiB on its worker threads, but taskstats'
// exit record of its last task holds 12 KiB. Its parent (go, reaping
// it) and, once go exits, the loop that ran go must not be charged with
// the 1.5 GiB a scan already saw in the binary's own rows.
func TestScanNoteExitsThreadedChild(t *testing.T) {
	const mib = 1 << 20
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	writeProcTask(t, a, 400, 1, 7000, "loop.sh", 0, 0, 0, 0)
	writeProc(t, a, 401, 400, 7001, "go", 4096, 0)
	setThreads(t, a, 401, 8)
	writeProc(t, a, 402, 401, 7002, "e2e.test", 1536*mib, 0)
	setThreads(t, a, 402, 8)
	// go reaped the binary: its counters hold the binary's 1.5 GiB.
	writeProcTask(t, b, 400, 1, 7000, "loop.sh", 0, 0, 0, 0)
	writeProc(t, b, 401, 400, 7001, "go", 4096+1536*mib, 0)
	setThreads(t, b, 401, 8)
	setReaps(t, b, 401, 1)
	// The loop reaped go.
	writeProcTask(t, c, 400, 1, 7000, "loop.sh", 4096+1536*mib, 0, 0, 0)
	setReaps(t, c, 400, 1)
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	s.NoteExits([]process.Event{{Kind: process.Exit, Source: "taskstats", PID: 402, PPID: 401, ReadBytes: 12288}})
	top, _, st := scan(t, s, t0.Add(time.Second))
	if len(top) != 0 || st.ReapedReadBytes != 0 {
		t.Errorf("after go reaped the binary: top = %+v, stats %+v; want nothing", top, st)
	}
	link.set(c)
	s.NoteExits([]process.Event{{Kind: process.Exit, Source: "taskstats", PID: 401, PPID: 400, ReadBytes: 4096}})
	top, _, st = scan(t, s, t0.Add(2*time.Second))
	if len(top) != 0 || st.ReapedReadBytes != 0 {
		t.Errorf("after the loop reaped go: top = %+v, stats %+v; want nothing", top, st)
	}
}

// setThreads sets num_threads (stat field 20) of a process written by
// writeProc.
func setThreads(t *testing.T, dir string, pid, n int) {
	t.Helper()
	editStat(t, dir, pid, func(f []string) { f[19] = fmt.Sprint(n) })
}

// setReaps raises stat field 11 (cminflt) of a process written by
// writeProc by n×1000, as the kernel does when it reaps n children that
// took 1000 minor faults each: every fixture whose parent's counters
// hold a reaped child's I/O needs it, or the gain reads as exited
// threads'.
func setReaps(t *testing.T, dir string, pid, n int) {
	t.Helper()
	editStat(t, dir, pid, func(f []string) {
		v, err := strconv.ParseUint(f[10], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		f[10] = fmt.Sprint(v + uint64(n)*1000)
	})
}

// editStat rewrites dir/PID/stat (written by writeProc) with edit applied
// to its space-separated fields.
func editStat(t *testing.T, dir string, pid int, edit func(f []string)) {
	t.Helper()
	name := filepath.Join(dir, fmt.Sprint(pid), "stat")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	edit(f)
	if err := os.WriteFile(name, []byte(strings.Join(f, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScanExecLineage checks what the recording needs to tie a process to
// the job that ran it: a process that starts between two scans is an
// exec event with its parent PID, its program (/proc/PID/exe, a symlink
// whose target here is what python3 shows on Debian bookworm, where
// /usr/bin/python3 links to python3.11) and the script on its command
// line; in the top list it carries the same.
func TestScanExecLineage(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeProc(t, a, 100, 1, 1100, "sh", 0, 0)
	writeProc(t, b, 100, 1, 1100, "sh", 0, 0)
	writeProc(t, b, 200, 100, 1200, "python3", 4096, 8192)
	if err := os.WriteFile(filepath.Join(b, "200", "cmdline"), []byte("/usr/bin/python3\x00/var/tmp/job/pressure.py\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin/python3.11", filepath.Join(b, "200", "exe")); err != nil {
		t.Fatal(err)
	}
	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{KeepCmdline: true})
	scan(t, s, t0)
	link.set(b)
	t1 := t0.Add(time.Second)
	top, ev, _ := scan(t, s, t1)
	wantEv := []process.Event{{Kind: process.Exec, Time: t1, Source: "poll", PID: 200, PPID: 100, StartTicks: 1200,
		Comm: "python3", Exe: "/usr/bin/python3.11", Cmdline: "/usr/bin/python3 /var/tmp/job/pressure.py",
		Cgroup: "/system.slice/python3.service", Unit: "python3.service", ReadBytes: 4096, WriteBytes: 8192}}
	if diff := cmp.Diff(wantEv, ev); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(top) != 1 || top[0].PID != 200 || top[0].PPID != 100 || top[0].Exe != "/usr/bin/python3.11" {
		t.Errorf("top = %+v; want python3 (200) with parent 100 and exe /usr/bin/python3.11", top)
	}
}

// writeProcTask writes pid's stat and io (rd, wr: the process's counters,
// its reaped children's and exited threads' included) and its main
// thread's task/<pid>/io (taskRd, taskWr: that thread's own).
func writeProcTask(t *testing.T, dir string, pid, ppid int, start uint64, comm string, rd, wr, taskRd, taskWr uint64) {
	t.Helper()
	writeProc(t, dir, pid, ppid, start, comm, rd, wr)
	writeTaskIO(t, dir, pid, taskRd, taskWr)
}

// writeTaskIO writes dir/PID/task/PID/io: the main thread's own counters,
// which the kernel shows without the reaped children's I/O.
func writeTaskIO(t *testing.T, dir string, pid int, rd, wr uint64) {
	t.Helper()
	d := filepath.Join(dir, fmt.Sprint(pid), "task", fmt.Sprint(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	io := fmt.Sprintf("rchar: %d\nwchar: %d\nsyscr: 10\nsyscw: 10\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: 0\n", rd, wr, rd, wr)
	if err := os.WriteFile(filepath.Join(d, "io"), []byte(io), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScanReapedSplitByThread: single-threaded processes, so the scanner
// reads /proc/PID/task/PID/io to tell what a process did from what its
// reaped children brought in. bash 100 runs sh 200, which runs dd 201
// (seen) and 202 (never seen, 1 MiB). The shell's own delta is exactly
// its own I/O; what no known child accounts for (dd's 4096 after our
// last look, 202's 1 MiB) is the shell's DeltaReaped*, attributed to no
// one; exits carry own totals; when bash reaps sh, nothing is left over.
func TestScanReapedSplitByThread(t *testing.T) {
	const mib = 1 << 20
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	writeProcTask(t, a, 100, 1, 4000, "bash", 0, 0, 0, 0)
	writeProcTask(t, a, 200, 100, 5000, "sh", 0, 0, 0, 0)
	writeProcTask(t, a, 201, 200, 5001, "dd", 0, 8*mib, 0, 8*mib)

	writeProcTask(t, b, 100, 1, 4000, "bash", 0, 0, 0, 0)
	// sh: its own 16384 read and 4096 written, dd's 8 MiB + 4096, 202's 1 MiB.
	shWhole := uint64(8*mib + 4096 + 4096 + mib)
	writeProcTask(t, b, 200, 100, 5000, "sh", 16384, shWhole, 16384, 4096)
	setReaps(t, b, 200, 2)

	// bash reaped sh: sh's whole counters are in bash's now.
	writeProcTask(t, c, 100, 1, 4000, "bash", 16384, shWhole, 0, 0)
	setReaps(t, c, 100, 1)

	for _, exact := range []bool{false, true} {
		link := newProcLink(t, a)
		s := mustScanner(t, link.root, ProcScanOptions{})
		scan(t, s, t0)
		link.set(b)
		if exact {
			s.NoteExits([]process.Event{
				{Kind: process.Exit, Source: "taskstats", PID: 201, PPID: 200, WriteBytes: 8*mib + 4096},
				{Kind: process.Exit, Source: "taskstats", PID: 202, PPID: 200, WriteBytes: mib},
			})
		}
		top, ev, st := scan(t, s, t0.Add(time.Second))
		var wantReaped uint64 = 4096 + mib
		if exact {
			wantReaped = 0
		}
		if len(top) != 1 || top[0].PID != 200 || top[0].DeltaReadBytes != 16384 || top[0].DeltaWriteBytes != 4096 ||
			top[0].DeltaReapedWriteBytes != wantReaped || top[0].DeltaReapedReadBytes != 0 ||
			top[0].ReadBytes != 16384 || top[0].WriteBytes != 4096 {
			t.Errorf("exact=%v: top = %+v; want sh alone: 16384 read, 4096 written, both its own, %d written by reaped children", exact, top, wantReaped)
		}
		if st.ReapedWriteBytes != wantReaped || st.ReapedReadBytes != 0 {
			t.Errorf("exact=%v: stats = %+v; want %d reaped written", exact, st, wantReaped)
		}
		if len(ev) != 1 || ev[0].PID != 201 || ev[0].WriteBytes != 8*mib {
			t.Errorf("exact=%v: events = %+v; want dd's exit with its last seen 8 MiB", exact, ev)
		}

		link.set(c)
		top, ev, st = scan(t, s, t0.Add(2*time.Second))
		if len(top) != 0 || st.ReapedWriteBytes != 0 || st.ReapedReadBytes != 0 {
			t.Errorf("exact=%v: after bash reaped sh: top = %+v, stats %+v; want nothing (all of sh's counters are known)", exact, top, st)
		}
		if len(ev) != 1 || ev[0].PID != 200 || ev[0].ReadBytes != 16384 || ev[0].WriteBytes != 4096 {
			t.Errorf("exact=%v: events = %+v; want sh's exit with its own 16384 read, 4096 written", exact, ev)
		}
	}
}

// TestScanExitedThreadsAreOwn: a threaded server (python3's
// ThreadingHTTPServer) is single-threaded between requests, and its
// request threads' I/O is in signal->ioac with reaped children's once
// they exit. When it reaped no child in the interval (stat fields 11, 13,
// 16, 17 unchanged) the gain is its threads': its own I/O, not a reaped
// row; when it reaped one too, the gain is reaped (exited threads or
// children: /proc cannot tell). A process first seen that never reaped
// a child (those fields 0) holds only its threads' there.
func TestScanExitedThreadsAreOwn(t *testing.T) {
	const mib = 1 << 20
	a, b := t.TempDir(), t.TempDir()
	// 500 (the server): main thread 4096 written at t0; at t1 its
	// threads wrote 3 MiB and the main thread 4096 more.
	writeProcTask(t, a, 500, 1, 9000, "python3", 0, 4096, 0, 4096)
	writeProcTask(t, b, 500, 1, 9000, "python3", 0, 3*mib+8192, 0, 8192)
	// 600: the same, but it also reaped a child in the interval.
	writeProcTask(t, a, 600, 1, 9100, "python3", 0, 4096, 0, 4096)
	writeProcTask(t, b, 600, 1, 9100, "python3", 0, 3*mib+8192, 0, 8192)
	setReaps(t, b, 600, 1)
	// 700: first seen at t1, its threads wrote 2 MiB, it never reaped.
	writeProcTask(t, b, 700, 1, 9200, "worker", 0, 2*mib+4096, 0, 4096)
	zeroReaps(t, b, 700)

	link := newProcLink(t, a)
	s := mustScanner(t, link.root, ProcScanOptions{})
	scan(t, s, t0)
	link.set(b)
	top, _, st := scan(t, s, t0.Add(time.Second))
	type row struct {
		PID                            int
		DWrite, DReapedWrite, CumWrite uint64
	}
	var got []row
	for _, p := range top {
		got = append(got, row{p.PID, p.DeltaWriteBytes, p.DeltaReapedWriteBytes, p.WriteBytes})
	}
	want := []row{
		{500, 3*mib + 4096, 0, 3*mib + 8192},
		{600, 4096, 3 * mib, 8192},
		{700, 2*mib + 4096, 0, 2*mib + 4096},
	}
	slices.SortFunc(got, func(x, y row) int { return x.PID - y.PID })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if st.ReapedWriteBytes != 3*mib {
		t.Errorf("stats reaped written = %d; want 3 MiB (600's)", st.ReapedWriteBytes)
	}
}

// zeroReaps sets stat fields 11, 13, 16 and 17 (the reaped children's
// faults and times) of a process written by writeProc to 0: it never
// reaped a child.
func zeroReaps(t *testing.T, dir string, pid int) {
	t.Helper()
	editStat(t, dir, pid, func(f []string) {
		f[10], f[12], f[15], f[16] = "0", "0", "0", "0"
	})
}
