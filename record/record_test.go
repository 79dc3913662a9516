package record

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/signal"
)

// sampleFromRoot reads one Sample from a fixture root with the real
// collectors, at the time stored in the root's TIME file (ns since epoch).
func sampleFromRoot(t testing.TB, name string) Sample {
	t.Helper()
	proc := fixtures.Proc(t, name)
	b, err := os.ReadFile(filepath.Join(fixtures.Root(t, name), "TIME"))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := psi.NewCollector(proc)
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := pc.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lc, err := lru.NewCollector(proc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := lc.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	v, err := lc.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	return Sample{Type: TypeSample, Time: time.Unix(0, ns), PSI: FromPSI(&host), Meminfo: FromMeminfo(m), VMStat: FromVMStat(v)}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestBetweenRealSnapshots derives one interval from two real snapshots
// of this kernel taken 1.151581560 s apart while a hog was swapping in a
// 64 MiB cgroup (testdata/linux-6.18-hog-t0, -t1; values read by hand from
// their files).
func TestBetweenRealSnapshots(t *testing.T) {
	s0, s1 := sampleFromRoot(t, "linux-6.18-hog-t0"), sampleFromRoot(t, "linux-6.18-hog-t1")
	h := &Header{PageSize: 4096}
	iv := Between(h, &s0, &s1)
	const dt = 1151581560.0 // ns
	secs := dt / 1e9
	if iv.Dt != time.Duration(dt) {
		t.Fatalf("Dt = %v", iv.Dt)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		// pressure/memory total 411329 -> 641648 µs (some), 223741 -> 408339 (full)
		{"MemSome", iv.MemSome, (641648 - 411329) * 1e3 / dt},
		{"MemFull", iv.MemFull, (408339 - 223741) * 1e3 / dt},
		{"MemSomeAvg10", iv.MemSomeAvg10, 3.62},
		// pswpout 12154 -> 32945 pages of 4096 bytes
		{"SwapOutBytesPerSec", iv.SwapOutBytesPerSec, (32945 - 12154) * 4096 / secs},
		{"SwapInPagesPerSec", iv.PerSec(signal.SwapIn), 0},
		// pgscan_direct and pgscan_kswapd stay 0: the reclaim was forced by
		// the cgroup limit and shows only in pgscan_anon 71952 -> 182548
		// and pgscan_file 537355 -> 537355.
		{"DirectReclaimPerSec", iv.DirectReclaimPerSec, 0},
		{"AllocReclaimPerSec", iv.PerSec(signal.AllocReclaim), (182548 - 71952) / secs},
		{"LimitReclaimPerSec", iv.PerSec(signal.LimitReclaim), (182548 - 71952) / secs},
		// workingset_refault_file 277394 -> 277398
		{"RefaultFilePerSec", iv.RefaultFilePerSec, 4 / secs},
		{"OOMKills", iv.OOMKills, 1},
		// Active(file)+Inactive(file): 453092+902256 -> 458836+906472 kB
		{"FileLRUBytes", iv.FileLRUBytes, (458836 + 906472) * 1024},
		{"FileLRUDeltaBytes", iv.FileLRUDeltaBytes, ((458836 + 906472) - (453092 + 902256)) * 1024},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if record := iv.DiskBusy; Known(record) {
		t.Errorf("DiskBusy = %v without disks, want NaN", record)
	}
}

// TestBetweenCounterReset: a counter that went backwards (a reset, a
// different host) must give NaN, never a negative or huge rate.
func TestBetweenCounterReset(t *testing.T) {
	s0, s1 := sampleFromRoot(t, "linux-6.18-hog-t1"), sampleFromRoot(t, "linux-6.18-hog-t0")
	s1.Time = s0.Time.Add(time.Second)
	iv := Between(&Header{PageSize: 4096}, &s0, &s1)
	for name, v := range map[string]float64{
		"MemSome": iv.MemSome, "SwapOutBytesPerSec": iv.SwapOutBytesPerSec, "OOMKills": iv.OOMKills,
		"AllocReclaimPerSec": iv.PerSec(signal.AllocReclaim), "RefaultFilePerSec": iv.RefaultFilePerSec,
	} {
		if Known(v) {
			t.Errorf("%s = %v after a reset, want NaN", name, v)
		}
	}
}

func TestWriterReaderRoundTrip(t *testing.T) {
	for _, name := range []string{"run.jsonl", "run.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			w, err := Create(path, false)
			if err != nil {
				t.Fatal(err)
			}
			s0, s1 := sampleFromRoot(t, "linux-6.18-hog-t0"), sampleFromRoot(t, "linux-6.18-hog-t1")
			if err := w.WriteHeader(&Header{Host: "h", Interval: time.Second, PageSize: 4096}); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*Sample{&s0, &s1} {
				if err := w.WriteSample(s); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close("duration"); err != nil {
				t.Fatal(err)
			}
			rec, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Header.Host != "h" || rec.Header.SchemaVersion != SchemaVersion || len(rec.Samples) != 2 {
				t.Fatalf("read back header %+v with %d samples", rec.Header, len(rec.Samples))
			}
			if rec.End == nil || rec.End.Samples != 2 || rec.End.Reason != "duration" {
				t.Errorf("end = %+v", rec.End)
			}
			got := rec.Samples[1].PSI.Memory.Some.Total
			if got != 641648*time.Microsecond {
				t.Errorf("PSI total after round trip = %v, want 641648µs", got)
			}
			if *rec.Samples[1].VMStat.Pswpout != 32945 {
				t.Errorf("pswpout = %d", *rec.Samples[1].VMStat.Pswpout)
			}
		})
	}
}

func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const hdr = `{"type":"header","format":"memdiag-recording","schema_version":1,"interval_ns":1000000000}`

func TestReaderTruncatedLastLine(t *testing.T) {
	p := writeLines(t, hdr,
		`{"type":"sample","seq":0,"time":"2026-11-29T10:00:00Z"}`,
		`{"type":"sample","seq":1,"time":"2026-11-29T10:00:01Z"}`,
		`{"type":"sample","seq":2,"time":"2026-11-29T10:0`)
	rec, err := ReadFile(p)
	if err != nil {
		t.Fatalf("truncated last line must not be an error: %v", err)
	}
	if len(rec.Samples) != 2 || len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], "r.jsonl:4: truncated last line") {
		t.Errorf("samples %d, warnings %q", len(rec.Samples), rec.Warnings)
	}
}

func TestReaderBadMiddleLine(t *testing.T) {
	p := writeLines(t, hdr,
		`{"type":"sample","seq":0,"time":"2026-11-29T10:00:00Z"}`,
		`{"type":"sample","seq":1,"ti`,
		`{"type":"sample","seq":2,"time":"2026-11-29T10:00:02Z"}`,
		`{"type":"sample","seq":3,"time":"not a time"}`,
		`{"type":"sample","seq":4,"time":"2026-11-29T10:00:04Z"}`)
	rec, err := ReadFile(p)
	if err != nil {
		t.Fatalf("a damaged middle line must not lose the rest: %v", err)
	}
	var seqs []int
	for _, s := range rec.Samples {
		seqs = append(seqs, s.Seq)
	}
	if !slices.Equal(seqs, []int{0, 2, 4}) || len(rec.Warnings) != 2 ||
		!strings.Contains(rec.Warnings[0], "r.jsonl:3: damaged line skipped") || !strings.Contains(rec.Warnings[1], "r.jsonl:5: damaged sample skipped") {
		t.Errorf("samples %v, warnings %q", seqs, rec.Warnings)
	}
}

// TestReaderDamagedEndLineMidFile: an end line that does not decode,
// with many batches of lines after it, is an error at its line from the
// parallel reader. The reader once waited for its decoders before
// stopping the producer, which was blocked handing on the next batches:
// ReadFile never returned.
func TestReaderDamagedEndLineMidFile(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // the parallel reader: 4 decoders
	lines := []string{hdr, `{"type":"end","samples":"x"}`}
	for i := range 40 * batchLines { // 40 batches; the pipe holds 8 + 4
		lines = append(lines, fmt.Sprintf(`{"type":"sample","seq":%d,"time":"2026-11-29T10:00:00Z"}`, i))
	}
	_, err := ReadFile(writeLines(t, lines...))
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "r.jsonl:2: ") {
		t.Errorf("err = %v, want ErrFormat at r.jsonl:2", err)
	}
}

// TestReaderKilledGzip: a compressed recording whose writer was killed has
// no gzip trailer; what was flushed is read, with a warning.
func TestReaderKilledGzip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.jsonl.gz")
	w, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&Header{Host: "h"}); err != nil {
		t.Fatal(err)
	}
	s0 := sampleFromRoot(t, "linux-6.18-hog-t0")
	if err := w.WriteSample(&s0); err != nil {
		t.Fatal(err)
	}
	// What a SIGKILL leaves: WriteSample's flushed blocks, no trailer.
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatalf("killed gzip recording: %v", err)
	}
	// Every line is whole (the writer flushes each): only the trailer is
	// missing, and no line is called cut short (a new user's trial saw
	// "1 line cut short" for such a file).
	if len(rec.Samples) != 1 || len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], "k.jsonl.gz:2: compressed stream ends after this line without its gzip trailer") {
		t.Errorf("samples %d, warnings %q", len(rec.Samples), rec.Warnings)
	}
	g := NewGaps(rec.Header)
	for i := range rec.Samples {
		g.Add(&rec.Samples[i])
	}
	if a := g.Abnormal(rec.End, rec.Warnings); strings.Contains(a, "cut short") || !strings.Contains(a, "no end line") {
		t.Errorf("Abnormal %q: want no end line, and no line cut short", a)
	}
}

// TestReaderKilledGzipMidLine: a compressed stream that stops inside a
// line (killed between a line's first bytes and its flush) loses that
// line: "cut short at this line", counted as a line cut short.
func TestReaderKilledGzipMidLine(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "p.jsonl")
	w, err := Create(plain, false)
	if err != nil {
		t.Fatal(err)
	}
	s0 := sampleFromRoot(t, "linux-6.18-hog-t0")
	if err := w.WriteHeader(&Header{Host: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSample(&s0); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(plain) // the header and a sample, whole
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.jsonl.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write(append(whole, `{"type":"sample","seq":1,"ti`...)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Flush(); err != nil { // no Close: no trailer
		t.Fatal(err)
	}
	f.Close()
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 1 || len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], "m.jsonl.gz:3: compressed stream cut short at this line") {
		t.Errorf("samples %d, warnings %q", len(rec.Samples), rec.Warnings)
	}
	g := NewGaps(rec.Header)
	g.Add(&rec.Samples[0])
	if a := g.Abnormal(rec.End, rec.Warnings); !strings.Contains(a, "1 line cut short") {
		t.Errorf("Abnormal %q: want 1 line cut short", a)
	}
}

func TestReaderRejects(t *testing.T) {
	for name, first := range map[string]string{
		"not json":     "hello",
		"other format": `{"type":"header","format":"x"}`,
		"newer schema": `{"type":"header","format":"memdiag-recording","schema_version":99}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadFile(writeLines(t, first))
			if err == nil || !errors.Is(err, ErrFormat) {
				t.Errorf("err = %v, want ErrFormat", err)
			}
		})
	}
	_, err := NewReader(strings.NewReader(""), "empty")
	if err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("empty: %v", err)
	}
}

func TestCreateRefusesExistingAndSymlink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(p, false); !errors.Is(err, ErrExists) {
		t.Errorf("existing file without force: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "keep" {
		t.Errorf("existing file was changed to %q", b)
	}
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		if _, err := Create(link, force); err == nil {
			t.Errorf("Create through a symlink (force=%v) succeeded", force)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "victim" {
		t.Errorf("symlink target was written: %q", b)
	}
	w, err := Create(p, true)
	if err != nil {
		t.Fatalf("force: %v", err)
	}
	w.Close("x")
	if _, err := Create(filepath.Join(dir, "no/such/dir/r.jsonl"), false); err == nil {
		t.Error("unwritable path succeeded")
	}
}

// TestSummaryRealSnapshots folds the two real snapshots into a summary.
func TestSummaryRealSnapshots(t *testing.T) {
	s0, s1 := sampleFromRoot(t, "linux-6.18-hog-t0"), sampleFromRoot(t, "linux-6.18-hog-t1")
	sm := NewSummary(&Header{PageSize: 4096})
	sm.Add(&s0)
	sm.Add(&s1)
	if want := (641648 - 411329) * time.Microsecond; sm.MemSomeStall < want-time.Microsecond || sm.MemSomeStall > want+time.Microsecond {
		t.Errorf("MemSomeStall = %v, want %v", sm.MemSomeStall, want)
	}
	if want := float64((32945 - 12154) * 4096); !near(sm.SwapOutBytes, want) {
		t.Errorf("SwapOutBytes = %v, want %v", sm.SwapOutBytes, want)
	}
	if want := float64((453092 + 902256) * 1024); sm.FileLRUMinBytes != want {
		t.Errorf("FileLRUMinBytes = %v, want %v", sm.FileLRUMinBytes, want)
	}
	if sm.OOMKills != 1 {
		t.Errorf("OOMKills = %v", sm.OOMKills)
	}
}

// TestSummaryExitEvents: a child that lived between two samples is known
// only from its exit record; a process seen in the top N is topped up to
// its exit total; a process that existed before the recording is not
// credited with its life-time total.
func TestSummaryExitEvents(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sm := NewSummary(&Header{PageSize: 4096})
	sm.Add(&Sample{Time: t0})
	sm.Add(&Sample{Time: t0.Add(time.Second),
		Procs: []ProcIO{{PID: 10, StartTicks: 5, Comm: "job", DeltaWriteBytes: 3 << 20}},
		Events: []Event{
			{Kind: "exec", PID: 10, Comm: "job"},
			{Kind: "exec", PID: 11, Comm: "child", Unit: "x.service"},
			{Kind: "exit", PID: 11, Comm: "child", Unit: "x.service", WriteBytes: 8 << 20},
		}})
	sm.Add(&Sample{Time: t0.Add(2 * time.Second), Events: []Event{
		{Kind: "exit", PID: 10, Comm: "job", WriteBytes: 5 << 20},
		{Kind: "exit", PID: 12, Comm: "old", WriteBytes: 1 << 30},
	}})
	got := sm.TopWriters(5)
	want := []ProcTotal{{PID: 11, Comm: "child", Unit: "x.service", WriteBytes: 8 << 20}, {PID: 10, StartTicks: 5, Comm: "job", WriteBytes: 5 << 20}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TopWriters (-want +got):\n%s", diff)
	}
}

// TestSummaryPIDReuse (issue 30 item 12): a process is its PID and start
// time. backup (PID 20, start 100) wrote 1 MiB and exited; a later
// process given PID 20 (start 300) started, wrote 4 MiB between two
// samples and exited. They are two totals, each with its start time,
// and the later one's exit record is not added to backup's.
func TestSummaryPIDReuse(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	sm := NewSummary(&Header{PageSize: 4096})
	sm.Add(&Sample{Time: t0})
	sm.Add(&Sample{Time: t0.Add(time.Second), Procs: []ProcIO{{PID: 20, StartTicks: 100, Comm: "backup", Unit: "backup.service", DeltaWriteBytes: 1 << 20}}})
	sm.Add(&Sample{Time: t0.Add(2 * time.Second), Events: []Event{
		{Kind: "exit", PID: 20, StartTicks: 100, Comm: "backup", Unit: "backup.service", WriteBytes: 1 << 20},
		{Kind: "exec", PID: 20, StartTicks: 300, Comm: "dd"},
		{Kind: "exit", PID: 20, StartTicks: 300, Comm: "dd", Unit: "tenant.service", WriteBytes: 4 << 20},
	}})
	want := []ProcTotal{
		{PID: 20, StartTicks: 300, Comm: "dd", Unit: "tenant.service", WriteBytes: 4 << 20},
		{PID: 20, StartTicks: 100, Comm: "backup", Unit: "backup.service", WriteBytes: 1 << 20},
	}
	if diff := cmp.Diff(want, sm.TopIO(-1)); diff != "" {
		t.Errorf("TopIO (-want +got):\n%s", diff)
	}
}

// TestReadEachMatchesReadFile: the streaming reader hands over the samples
// ReadFile keeps, in order, with the same warnings and end line.
func TestReadEachMatchesReadFile(t *testing.T) {
	p := writeLines(t, hdr,
		`{"type":"sample","seq":0,"time":"2026-11-29T10:00:00Z","unknown_field":[1,2]}`,
		`{"type":"sample","seq":1,"ti`,
		`{"type":"sample","seq":2,"time":"2026-11-29T10:00:02Z"}`,
		`{"type":"end","time":"2026-11-29T10:00:03Z","samples":2,"reason":"duration"}`,
		`{"type":"sample","seq":3,"time":"2026-11-29T10:0`)
	want, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	got, err := ReadEach(p, func(s *Sample) { seqs = append(seqs, s.Seq) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seqs, []int{0, 2}) || len(got.Samples) != 0 {
		t.Errorf("ReadEach gave samples %v and kept %d", seqs, len(got.Samples))
	}
	if !slices.Equal(got.Warnings, want.Warnings) || len(got.Warnings) != 2 ||
		!strings.Contains(got.Warnings[0], "r.jsonl:3: damaged line skipped") || !strings.Contains(got.Warnings[1], "r.jsonl:6: truncated last line") {
		t.Errorf("warnings %q, ReadFile's %q", got.Warnings, want.Warnings)
	}
	if got.End == nil || got.End.Reason != "duration" || got.Header.Interval != time.Second {
		t.Errorf("end %+v, header %+v", got.End, got.Header)
	}
}

// TestReadManyBatches: a recording of thousands of lines, read in many
// batches whose buffers are reused, gives every sample once, in order,
// with its own values, and names the damaged lines.
func TestReadManyBatches(t *testing.T) {
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	lines := []string{hdr}
	var want []int
	for i := range 3000 {
		if i == 1500 {
			lines = append(lines, `{"type":"sample","seq":1500,"ti`) // line 1502
			continue
		}
		lines = append(lines, fmt.Sprintf(`{"type":"sample","seq":%d,"time":%q,"procs":[{"pid":%d,"comm":"p%d"}]}`,
			i, start.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i, i))
		want = append(want, i)
	}
	lines = append(lines, `{"type":"sample","seq":3000,"time":"2026-11-29T1`) // line 3002
	p := writeLines(t, lines...)
	var got []int
	rec, err := ReadEach(p, func(s *Sample) {
		if len(s.Procs) != 1 || s.Procs[0].PID != s.Seq || s.Procs[0].Comm != fmt.Sprintf("p%d", s.Seq) ||
			!s.Time.Equal(start.Add(time.Duration(s.Seq)*time.Second)) {
			t.Errorf("sample %d: %+v", s.Seq, s)
		}
		got = append(got, s.Seq)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %d samples, want %d in order", len(got), len(want))
	}
	if len(rec.Warnings) != 2 || !strings.Contains(rec.Warnings[0], "r.jsonl:1502: damaged line skipped") ||
		!strings.Contains(rec.Warnings[1], "r.jsonl:3002: truncated last line") {
		t.Errorf("warnings %q", rec.Warnings)
	}
}
