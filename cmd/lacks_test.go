package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/session"
)

// writeKilledRecording writes writeRecording's samples (memory some stall
// 11.25 % over 4 s, 300 pages swapped out) without an end line, as a
// recorder killed by SIGKILL leaves them, and with a last line cut short.
func writeKilledRecording(t *testing.T) string {
	t.Helper()
	full, err := os.ReadFile(writeRecording(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	// Header, 5 samples, end, "": drop the end line, cut the last sample.
	killed := strings.Join(lines[:5], "") + lines[5][:len(lines[5])/2]
	p := filepath.Join(t.TempDir(), "killed.jsonl")
	if err := os.WriteFile(p, []byte(killed), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gate --recording never passes a cut recording: the thresholds that held
// over what is left are "no data", the run exits 5, and the report says
// what the recording lacks before its verdict.
func TestRunGateRecordingKilled(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	opts := &gateOptions{IO: ios, Options: session.Options{Root: "/", Interval: time.Second}, Location: time.UTC, Format: "table",
		Getenv: func(string) string { return "" },
		Exprs:  []string{"memory.some.stall<15%", "swap.out<=1200KiB"}, Recording: writeKilledRecording(t)}
	err := runGate(context.Background(), opts)
	var ce *exitCodeError
	if !errors.As(err, &ce) || ce.Code != exitEnv {
		t.Fatalf("runGate = %v; want exit %d (no pass on a cut recording)", err, exitEnv)
	}
	got := out.String()
	lacks := strings.Index(got, "the recording lacks: recording cut short, 4 samples readable: no end line")
	verdict := strings.Index(got, "memdiag gate: FAIL: 2 of 2 thresholds could not be judged")
	if lacks < 0 || verdict < 0 || lacks > verdict {
		t.Errorf("want the lack, then the verdict; got:\n%s", got)
	}
	if !strings.Contains(got, "1 line cut short") || !strings.Contains(got, "held over what was recorded, but the recording ended abnormally") {
		t.Errorf("report does not say why:\n%s", got)
	}
}

// A breach seen in a cut recording is still a breach (exit 3 would hide
// the unjudged ones: no data wins, exit 5, and the breach is listed).
func TestRunGateRecordingKilledBreach(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	opts := &gateOptions{IO: ios, Options: session.Options{Root: "/", Interval: time.Second}, Location: time.UTC, Format: "table",
		Getenv: func(string) string { return "" },
		Exprs:  []string{"memory.some.stall<5%", "oom_kills==0"}, Recording: writeKilledRecording(t)}
	err := runGate(context.Background(), opts)
	if !isExitCode(err, exitEnv) {
		t.Fatalf("runGate = %v; want exit %d", err, exitEnv)
	}
	if !strings.Contains(out.String(), "1 of 2 thresholds breached; 1 of 2 thresholds could not be judged") {
		t.Errorf("verdict:\n%s", out)
	}
}

// A threshold whose signal the recording lacks is never a pass (exit 5):
// here a host recording made without PSI.
func TestRunGateRecordingNoPSI(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nopsi.jsonl")
	w, err := record.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	h := &record.Header{Start: t0, Interval: time.Second, PageSize: 4096,
		Collectors: []record.CollectorStatus{{Name: "psi", Reason: "no /proc/pressure: kernel built without CONFIG_PSI"}}}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := w.WriteSample(&record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second), VMStat: &record.VMStat{Pswpout: u64(0), OOMKill: u64(0)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close("duration"); err != nil {
		t.Fatal(err)
	}
	ios, _, out, _ := iostreams.Test()
	opts := &gateOptions{IO: ios, Options: session.Options{Root: "/", Interval: time.Second}, Location: time.UTC, Format: "table",
		Getenv: func(string) string { return "" }, Exprs: []string{"memory.some.stall<5%", "oom_kills==0"}, Recording: p}
	err = runGate(context.Background(), opts)
	if !isExitCode(err, exitEnv) {
		t.Fatalf("runGate = %v; want exit %d", err, exitEnv)
	}
	got := out.String()
	if !strings.HasPrefix(got, "the recording lacks: no memory PSI (no /proc/pressure: kernel built without CONFIG_PSI)") ||
		!strings.Contains(got, "1 of 2 thresholds could not be judged") {
		t.Errorf("report:\n%s", got)
	}
}

// analyze says what a recording lacks before its timeline and verdict,
// in text and in JSON.
func TestAnalyzeSaysWhatIsLacking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lacking.jsonl")
	w, err := record.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	h := &record.Header{Start: t0, Interval: time.Second, PageSize: 4096, Host: "h",
		Collectors: []record.CollectorStatus{{Name: "psi", Reason: "no /proc/pressure"}, {Name: "procs", Available: true}}}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		s := &record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second),
			VMStat: &record.VMStat{Pswpout: u64(0)}, Scan: &record.ScanStats{Processes: 75, Denied: 73}}
		if err := w.WriteSample(s); err != nil {
			t.Fatal(err)
		}
	}
	// Killed: no Close, so no end line.
	code, out, errOut := runMemdiag(t, "/", "analyze", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lacks, verdict := strings.Index(out, "THE RECORDING LACKS"), strings.Index(out, "VERDICT")
	if lacks < 0 || verdict < lacks {
		t.Fatalf("want the lacks before the verdict:\n%s", out)
	}
	for _, want := range []string{
		"  - recording cut short, 6 samples readable: no end line",
		"  - no memory PSI (no /proc/pressure): stall on memory is unknown, not zero",
		"  - per-process I/O unreadable for 73 of 75 processes",
		"  - process events off (watch --events off)",
	} {
		if !strings.Contains(out[lacks:verdict], want) {
			t.Errorf("lacks section has no %q:\n%s", want, out[lacks:verdict])
		}
	}
	_, out, _ = runMemdiag(t, "/", "analyze", "--format", "json", p)
	if !strings.Contains(out, `"recording_lacks": [`) || !strings.Contains(out, "per-process I/O unreadable for 73 of 75") {
		t.Errorf("json has no recording_lacks:\n%s", out)
	}
}

// Empty, header-only and cut recordings are errors (exit 1), for analyze
// and gate alike, never "0001-01-01 … No episode".
func TestNoSamplesExitNonZero(t *testing.T) {
	dir := t.TempDir()
	header := `{"type":"header","format":"memdiag-recording","schema_version":1,"interval_ns":1000000000,"collectors":[]}` + "\n"
	files := map[string]string{"empty.jsonl": "", "header.jsonl": header, "cut.jsonl": header[:50]}
	want := map[string]string{"empty.jsonl": "no samples: empty file", "header.jsonl": "no samples: the header only", "cut.jsonl": "line 1 cut short"}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"analyze", p}, {"gate", "-t", "oom_kills==0", "--recording", p}} {
			code, out, errOut := runMemdiag(t, "/", args...)
			if code != exitError || !strings.Contains(errOut, want[name]) || strings.Contains(out, "No episode") {
				t.Errorf("%s %s: exit %d, stderr %q, stdout %q; want %d and %q", args[0], name, code, errOut, out, exitError, want[name])
			}
		}
	}
}
