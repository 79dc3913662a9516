package record

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var gt0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func withPSI(s Sample) Sample {
	s.PSI = &PSI{Memory: &PSIResource{Some: PSILine{}, Full: &PSILine{}}}
	return s
}

func TestGapsComplete(t *testing.T) {
	h := Header{Collectors: []CollectorStatus{{Name: "psi", Available: true}, {Name: "procs", Available: true}, {Name: "events", Available: true}}}
	g := NewGaps(h)
	for i := range 3 {
		s := withPSI(Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second), Scan: &ScanStats{Processes: 75}, EventStats: &EventStats{Received: 4}})
		g.Add(&s)
	}
	end := &End{Samples: 3, Reason: "duration"}
	if got := g.Lines(end, nil); len(got) != 0 {
		t.Errorf("Lines() of a complete recording = %q, want none", got)
	}
	if got := g.Abnormal(end, nil); got != "" {
		t.Errorf("Abnormal() = %q", got)
	}
}

// A recording made without PSI, not as root, with events polled, killed
// (no end line, last line cut): every gap is named, in this order.
func TestGapsEverything(t *testing.T) {
	h := Header{Collectors: []CollectorStatus{
		{Name: "psi", Available: false, Reason: "no /proc/pressure: kernel older than 4.20"},
		{Name: "procs", Available: true},
		{Name: "events", Available: false, Reason: "netlink: operation not permitted"},
	}}
	g := NewGaps(h)
	for i, denied := range []int{70, 73, 72} {
		s := Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second), Scan: &ScanStats{Processes: 75, Denied: denied}}
		g.Add(&s)
	}
	warns := []string{"r.jsonl:5: truncated last line (120 bytes) skipped; the recorder was probably killed"}
	want := []string{
		"recording cut short, 3 samples readable: no end line: the recorder was killed, crashed, ran out of disk or is still recording; 1 line cut short; nothing is known after the last sample (2026-12-01 12:00:02 UTC)",
		"no memory PSI (no /proc/pressure: kernel older than 4.20): stall on memory is unknown, not zero; the PSI signals cannot rise and their thresholds cannot be judged",
		"per-process I/O unreadable for 73 of 75 processes (/proc/PID/io denied: the recorder needs root or CAP_SYS_PTRACE + CAP_DAC_READ_SEARCH): their I/O is missing from the top processes and the culprits",
		"process events polled, not from the kernel (netlink: operation not permitted): a process that started and ended between two samples is missing",
	}
	if diff := cmp.Diff(want, g.Lines(nil, warns)); diff != "" {
		t.Errorf("Lines() (-want +got):\n%s", diff)
	}
}

// A damaged line in the middle of a recording with a proper end line is
// not a recording cut short: it is named with its place, and the rest was
// read. A damaged sample line explains one sample missing from the end
// line's count.
func TestGapsDamagedMiddle(t *testing.T) {
	g := NewGaps(Header{})
	for i := range 91 {
		s := Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second), PSI: &PSI{Memory: &PSIResource{}}}
		g.Add(&s)
	}
	warns := []string{"midbad.jsonl:2: damaged line skipped: invalid character 'o' in literal null (expecting 'u')"}
	want := []string{"recording damaged, 91 samples readable: 1 damaged line skipped (midbad.jsonl:2), the rest read; its end line is there"}
	for _, end := range []*End{{Samples: 91}, {Samples: 92}} {
		if diff := cmp.Diff(want, g.Lines(end, warns)); diff != "" {
			t.Errorf("end counts %d: Lines() (-want +got):\n%s", end.Samples, diff)
		}
	}
	// Two samples missing, one damaged line: one is unaccounted for.
	got := g.Lines(&End{Samples: 93}, warns)
	if len(got) != 1 || got[0] != "recording cut short, 91 samples readable: the end line counts 93 samples, 91 are readable; 1 damaged line skipped (midbad.jsonl:2), the rest read" {
		t.Errorf("end counts 93: %q", got)
	}
	if a := g.Abnormal(&End{Samples: 91}, warns); a != "1 damaged line skipped (midbad.jsonl:2), the rest read" {
		t.Errorf("Abnormal = %q", a)
	}
}

func TestGapsPartial(t *testing.T) {
	h := Header{Cgroup: "/sys/fs/cgroup/web", Collectors: []CollectorStatus{{Name: "procs", Available: true}}}
	g := NewGaps(h)
	for i := range 4 {
		s := Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second), EventStats: &EventStats{LostKernel: 2}}
		if i != 2 { // the group's PSI missing once (the group was removed and re-created)
			s.CgroupPSI = &PSI{Memory: &PSIResource{}}
		}
		g.Add(&s)
	}
	want := []string{
		"recording cut short, 4 samples readable: the end line counts 5 samples, 4 are readable",
		"no memory PSI of cgroup /sys/fs/cgroup/web in 1 of 4 samples",
		"process events off (watch --events off): processes were seen by polling /proc once per interval; one that started and ended between two samples is missing",
		"8 process events lost (socket or buffer overrun)",
	}
	if diff := cmp.Diff(want, g.Lines(&End{Samples: 5}, nil)); diff != "" {
		t.Errorf("Lines() (-want +got):\n%s", diff)
	}
}

// Empty, header-only, cut and one-sample recordings are errors wrapping
// ErrNoSamples, each saying which.
func TestNoSamples(t *testing.T) {
	dir := t.TempDir()
	header := `{"type":"header","format":"memdiag-recording","schema_version":1,"interval_ns":1000000000,"collectors":[]}` + "\n"
	sample := `{"type":"sample","seq":0,"time":"2026-12-01T12:00:00Z"}` + "\n"
	tests := []struct{ name, content, want string }{
		{"empty", "", "empty.jsonl: no samples: empty file"},
		{"cut-header", header[:40], "cut-header.jsonl:1: no samples: line 1 cut short"},
		{"header-only", header, "header-only.jsonl: no samples: the header only"},
		{"header-end", header + `{"type":"end","samples":0,"reason":"signal: SIGTERM"}` + "\n", `header-end.jsonl: no samples: a header and an end line ("signal: SIGTERM") and nothing between`},
		{"cut-sample", header + sample[:30], "cut-sample.jsonl: no samples: the header, then line 2 cut short"},
		{"one-sample", header + sample, "one-sample.jsonl: only 1 sample (no samples to compare it with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name+".jsonl")
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			err := func() error {
				rec, err := ReadFile(p)
				if err != nil {
					return err
				}
				return NeedSamples(p, len(rec.Samples), rec.End, rec.Warnings)
			}()
			if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), filepath.Join(dir, tt.want)) {
				t.Errorf("err = %v, want ErrNoSamples and %q", err, tt.want)
			}
		})
	}
}

// One process of 140 denied (a sandbox's PID 1, which root may not read
// here): no claim that the recorder was not root.
func TestGapsFewDenied(t *testing.T) {
	g := NewGaps(Header{Collectors: []CollectorStatus{{Name: "procs", Available: true}, {Name: "events", Available: true}}})
	for i := range 3 {
		s := Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second), Scan: &ScanStats{Processes: 140, Denied: 1}, PSI: &PSI{Memory: &PSIResource{}}}
		g.Add(&s)
	}
	want := []string{"per-process I/O unreadable for 1 of 140 processes (/proc/PID/io denied: a few processes even root may not read, such as a sandbox's init, or a recorder without CAP_SYS_PTRACE): their I/O is missing from the top processes and the culprits"}
	if diff := cmp.Diff(want, g.Lines(&End{Samples: 3, Reason: "duration"}, nil)); diff != "" {
		t.Errorf("Lines() (-want +got):\n%s", diff)
	}
}

// The page-cache chain: not traced (off, or the programs did not load)
// is said with the reason; traced in part says what is missing; traced
// in full, or a recording made before the collector, says nothing.
func TestGapsChain(t *testing.T) {
	for _, tt := range []struct {
		st   *CollectorStatus
		want []string
	}{
		{&CollectorStatus{Name: "ebpf-chain", Reason: "off (--ebpf off)"},
			[]string{"no page-cache chain (eBPF: off (--ebpf off)): culprits are credited by correlation — who did the disk I/O when — not by what their page-cache use cost the victim"}},
		{&CollectorStatus{Name: "ebpf-chain", Available: true, Reason: "refaults not traced: fentry refused"},
			[]string{"page-cache chain traced in part: refaults not traced: fentry refused"}},
		{&CollectorStatus{Name: "ebpf-chain", Available: true}, nil},
		{nil, nil},
	} {
		h := Header{Collectors: []CollectorStatus{{Name: "psi", Available: true}}}
		if tt.st != nil {
			h.Collectors = append(h.Collectors, *tt.st)
		}
		g := NewGaps(h)
		for i := range 2 {
			s := withPSI(Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second)})
			g.Add(&s)
		}
		if d := cmp.Diff(tt.want, g.Lines(&End{Samples: 2}, nil)); d != "" {
			t.Errorf("%+v: Lines() (-want +got):\n%s", tt.st, d)
		}
	}
}

// Gap lines are written before the sample that ends them, read back onto
// it (two before one sample merged into one), by Next and by the
// parallel reader alike, and stated by Lines.
func TestGapRecordsRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gaps.jsonl")
	w, err := Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&Header{Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return gt0.Add(time.Duration(ms) * time.Millisecond) }
	late := &Gap{Start: at(2000), End: at(3600), Late: 600 * time.Millisecond, Reason: GapLate}
	stop := &Gap{Start: at(5000), End: at(8200), Missed: 2, Reason: GapMissed}
	disk := &Gap{Start: at(9000), End: at(13000), Missed: 3, Reason: "no space left on device"}
	times := []int{0, 1000, 2000, 3600, 4000, 5000, 8200, 9000, 13000}
	gapAt := map[int]*Gap{3: late, 6: stop, 8: disk}
	for i, ms := range times {
		s := withPSI(Sample{Seq: i, Time: at(ms), Gap: gapAt[i]})
		if i == 8 {
			// a second gap line before the same sample: the sampler's own
			if err := w.WriteGap(&Gap{Start: at(12000), End: at(13000), Late: 700 * time.Millisecond, Reason: GapLate}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteSample(&s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close("duration"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if n := strings.Count(string(b), `{"type":"gap",`); n != 4 {
		t.Fatalf("%d gap lines written, want 4:\n%s", n, b)
	}
	merged := Gap{Type: TypeGap, Start: at(9000), End: at(13000), Missed: 3, Late: 700 * time.Millisecond, Reason: "late; no space left on device"}
	want := map[int]Gap{3: *late, 6: *stop, 8: merged}

	check := func(name string, samples []Sample) {
		t.Helper()
		if len(samples) != len(times) {
			t.Fatalf("%s: %d samples, want %d", name, len(samples), len(times))
		}
		g := NewGaps(Header{Interval: time.Second, Collectors: []CollectorStatus{{Name: "psi", Available: true}}})
		for i := range samples {
			s := &samples[i]
			if wg, ok := want[i]; ok {
				if d := cmp.Diff(&wg, s.Gap); d != "" {
					t.Errorf("%s: sample %d gap (-want +got):\n%s", name, i, d)
				}
			} else if s.Gap != nil {
				t.Errorf("%s: sample %d has gap %+v", name, i, s.Gap)
			}
			g.Add(s)
		}
		// unseen: 0.6 + 2.2 + 3.0 s
		wantLines := []string{"3 gaps, 5.8 s unseen: 2 samples more than half an interval late, 5 samples missed, no space left on device; " +
			"the longest 4.0 s without a sample, from 2026-12-01 12:00:09 to 12:00:13 UTC (what happened in a gap is averaged over it)"}
		if d := cmp.Diff(wantLines, g.Lines(&End{Samples: len(times)}, nil)); d != "" {
			t.Errorf("%s: Lines() (-want +got):\n%s", name, d)
		}
	}
	rec, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	check("ReadFile", rec.Samples)
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var next []Sample
	for {
		s, err := r.Next()
		if err != nil {
			break
		}
		next = append(next, *s)
	}
	check("Next", next)
}

// A recording without gaps other than the sampler's says the usual cause.
func TestGapLineSampler(t *testing.T) {
	g := NewGaps(Header{Interval: 200 * time.Millisecond, Collectors: []CollectorStatus{{Name: "psi", Available: true}}})
	for i := range 3 {
		s := withPSI(Sample{Seq: i, Time: gt0.Add(time.Duration(i) * time.Second)})
		if i == 2 {
			s.Gap = &Gap{Start: gt0.Add(time.Second), End: s.Time, Missed: 4, Reason: GapMissed}
		}
		g.Add(&s)
	}
	want := []string{"1 gap, 0.8 s unseen: 4 samples missed; the longest 1.0 s without a sample, from 2026-12-01 12:00:01 to 12:00:02 UTC " +
		"(the recorder was stopped, starved of CPU or blocked; what happened in a gap is averaged over it)"}
	if d := cmp.Diff(want, g.Lines(&End{Samples: 3}, nil)); d != "" {
		t.Errorf("Lines() (-want +got):\n%s", d)
	}
}

// TestGapsOverrunsMakeTheCountALowerBound: after an ENOBUFS the kernel's
// count of dropped events can be short (a CPU first read after the
// overflow has no earlier sequence number), so the sentence says "at
// least", or that the number is not known.
func TestGapsOverrunsMakeTheCountALowerBound(t *testing.T) {
	for _, c := range []struct {
		es   EventStats
		want string
	}{
		{EventStats{LostKernel: 2534, Overruns: 1}, "at least 2534 process events lost (socket overrun; the kernel's count leaves out a CPU none of whose events was read before it)"},
		{EventStats{Overruns: 1}, "process events lost (socket overrun; how many is not known)"},
		{EventStats{LostBuffer: 3}, "3 process events lost (socket or buffer overrun)"},
	} {
		g := NewGaps(Header{Collectors: []CollectorStatus{{Name: "procs", Available: true}}})
		g.Add(&Sample{Seq: 0, Time: gt0, EventStats: &c.es})
		if got := g.Lines(&End{Samples: 1}, nil); !slices.Contains(got, c.want) {
			t.Errorf("%+v: lacks %q, want %q among them", c.es, got, c.want)
		}
	}
}
