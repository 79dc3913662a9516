package record

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	stdjson "encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

// checkSampleDecoder holds sampleDecoder to goccy on line: a line the
// hand decoder reads must decode with goccy to the same Sample, and
// decodeSample (hand decoder, else goccy) must give goccy's value or
// goccy's error. It reports whether the hand decoder read the line.
func checkSampleDecoder(t *testing.T, d *sampleDecoder, line []byte) bool {
	t.Helper()
	want := new(Sample)
	wantErr := gojson.Unmarshal(line, want)
	got, fast := d.sample(line)
	if fast {
		if wantErr != nil {
			t.Fatalf("hand decoder reads what goccy refuses (%v): %q", wantErr, line)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("hand decoder differs from goccy (-goccy +hand):\n%s\nline: %q", diff, line)
		}
	}
	got, err := d.decodeSample(line)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("decodeSample error %v, goccy's %v: %q", err, wantErr, line)
	case err != nil && err.Error() != wantErr.Error():
		t.Fatalf("decodeSample error %q, goccy's %q", err, wantErr)
	case err == nil:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decodeSample differs from goccy (-goccy +got):\n%s\nline: %q", diff, line)
		}
	}
	return fast
}

// recordingFiles are the recordings in the repository's testdata, plain
// and gzip: files whose first line is a recording's header.
func recordingFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, root := range []string{"testdata", "../testdata", "../correlate/testdata", "../cmd/testdata"} {
		err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			if strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".jsonl.gz") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return files
}

// recordingLines are the lines of the recording at path, inflated when
// it is gzip; nil when it is not a recording.
func recordingLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.HasPrefix(data, headerPrefix) {
		return nil
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestSampleDecoderRecordings decodes every sample line of every
// recording in testdata with the hand decoder and with goccy.
func TestSampleDecoderRecordings(t *testing.T) {
	files, total, fast := 0, 0, 0
	for _, path := range recordingFiles(t) {
		lines := recordingLines(t, path)
		if lines == nil {
			continue
		}
		files++
		d := newSampleDecoder()
		n, f := 0, 0
		for _, l := range lines {
			if !bytes.HasPrefix(l, samplePrefix) {
				continue
			}
			n++
			if checkSampleDecoder(t, d, l) {
				f++
			}
		}
		t.Logf("%s: %d of %d sample lines by hand", path, f, n)
		total, fast = total+n, fast+f
	}
	if files < 20 || fast < total/2 {
		t.Errorf("%d recordings, %d of %d sample lines read by hand; want ≥ 20 recordings and most lines by hand", files, fast, total)
	}
}

// fullSample is a sample with every field the hand decoder reads set,
// small values, and escapes, non-ASCII and negative numbers.
func fullSample() *Sample {
	u := func(v uint64) *uint64 { return &v }
	line := PSILine{Avg10: 0.17, Avg60: 1.5, Avg300: 12, Total: 1745 * time.Microsecond}
	res := &PSIResource{Some: line, Full: &line}
	p := ProcIO{PID: 7, PPID: 1, StartTicks: 100, Comm: "dd", Exe: "/usr/bin/dd", Cmdline: `sh -c "dd if=/dev/zero" <x>`,
		Cgroup: "/a.slice/b.service", Unit: "b.service", ReadBytes: 1, WriteBytes: 2, CancelledWriteBytes: 3,
		DeltaReadBytes: 4, DeltaWriteBytes: 5, DeltaCancelledWriteBytes: 6, DeltaReapedReadBytes: 7,
		DeltaReapedWriteBytes: 8, BlkioDelay: 9, DeltaBlkioDelay: -10}
	t0 := time.Date(2026, 3, 15, 12, 0, 1, 500, time.FixedZone("", 3600))
	return &Sample{Type: TypeSample, Seq: 3, Time: t0,
		PSI:          &PSI{Memory: res, IO: &PSIResource{Some: line}, CPU: res},
		CgroupPSI:    &PSI{Memory: res},
		Meminfo:      &Meminfo{MemTotal: u(1 << 40), MemFree: u(0), SwapFree: u(18446744073709551615)},
		VMStat:       &VMStat{PgscanKswapd: u(5), WorkingsetRestore: u(6)},
		Disks:        []Disk{{Name: "vda", Reads: 1, Writes: 2, ReadBytes: 3, WriteBytes: 4, IOTicks: 5, TimeInQueue: 6, InFlight: 7}},
		Procs:        []ProcIO{p, {PID: 8, Comm: "ünïcode"}},
		Events:       []Event{{Kind: "exec", Time: t0, Source: "poll", PID: 9, PPID: 1, StartTicks: 2, Comm: "sh", Exe: "/bin/sh", Cmdline: "sh", Cgroup: "/", Unit: "u", ReadBytes: 3, WriteBytes: 4, BlkioDelay: 5, ParentComm: "cron", ParentCmdline: "cron -f", ParentPPID: 1}},
		Scan:         &ScanStats{Processes: 180, Denied: 1, Vanished: 2, Failed: 3, ReapedReadBytes: 4, ReapedWriteBytes: 5},
		Latency:      &Latency{Count: 10, Errors: 1, WithFailed: true, Mean: 1, P50: 2, P95: 3, P99: 4, Max: 5},
		EventStats:   &EventStats{Received: 1, LostKernel: 2, LostBuffer: 3, Overruns: 4, TaskstatsMissing: 5, Error: "e\tf"},
		Onsets:       []StallOnset{{Time: t0, Scope: "host", Resource: "memory", Kind: "some", Stall: 1, Window: 2, Mode: "poll", Procs: []ProcIO{p}}},
		RSS:          []ProcRSS{{PID: 7, StartTicks: 100, Comm: "dd", AnonBytes: 1, FileBytes: 2, ShmemBytes: 3, Cgroup: "/x", Threads: 4}},
		RSSLeftOut:   2,
		Errors:       []string{"psi: gone", "x"},
		CgroupVMStat: &VMStat{Pgmajfault: u(1)},
		VictimDelay:  &TaskDelays{PID: 7, ReclaimNS: 1, ThrashingNS: 2, SwapinNS: 3, CompactNS: 4, BlkioNS: 5},
	}
}

// writtenLine is s as the Writer writes it, without the newline.
func writtenLine(tb testing.TB, s *Sample) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := stdjson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// sampleLineSeeds are lines for FuzzSampleDecoder and its test: a written
// sample with every field the hand decoder reads, and lines that are
// almost that.
func sampleLineSeeds(tb testing.TB) []string {
	full := string(writtenLine(tb, fullSample()))
	small := `{"type":"sample","seq":1,"time":"2026-03-15T12:00:01Z","psi":{"memory":{"some":{"avg10":1.5,"avg60":0,"avg300":0,"total_us":1200}}},"procs":[{"pid":7,"start_ticks":1,"comm":"dd","read_bytes":4096,"write_bytes":0,"cancelled_write_bytes":0,"d_read_bytes":0,"d_write_bytes":0,"d_cancelled_write_bytes":0}]}`
	return []string{
		full, small,
		strings.Replace(small, `"seq":1`, `"seq":1,"seq":2`, 1),                             // duplicate key
		strings.Replace(small, `"seq":1`, `"Seq":1`, 1),                                     // another case
		strings.Replace(small, `"seq":1`, `"seq":null`, 1),                                  // null
		strings.Replace(small, `"seq":1`, `"seq":1.0`, 1),                                   // fraction
		strings.Replace(small, `"seq":1`, `"seq":-0`, 1),                                    // negative zero
		strings.Replace(small, `"seq":1`, `"seq":99999999999999999999`, 1),                  // out of range
		strings.Replace(small, `"pid":7`, `"pid":7,"extra":[1,{"a":2}]`, 1),                 // unknown field
		strings.Replace(small, `"comm":"dd"`, `"comm":"d\u00e9\ud800"`, 1),                  // escapes, a lone surrogate
		strings.Replace(small, `"comm":"dd"`, "\"comm\":\"d\xff\"", 1),                      // invalid UTF-8
		strings.Replace(small, `"avg10":1.5`, `"avg10":1e400`, 1),                           // float out of range
		strings.Replace(small, `"read_bytes":4096`, `"read_bytes":-1`, 1),                   // negative unsigned
		strings.Replace(small, `"read_bytes":4096`, `"read_bytes":18446744073709551616`, 1), // 2^64
		strings.Replace(small, `"read_bytes":4096`, `"read_bytes":18446744073709551615`, 1), // 2^64-1
		strings.Replace(small, `"pid":7`, `"pid":-999999999999999999`, 1),                   // 18 digits
		strings.Replace(small, `"procs":[`, `"procs":[],"x":[`, 1),                          // empty array
		strings.Replace(small, `,"seq"`, ` ,"seq"`, 1),                                      // space
		strings.Replace(small, `"time":"2026-03-15T12:00:01Z"`, `"time":"x"`, 1),            // bad time
		small + " ", small + "}", small[:len(small)-5],
	}
}

// TestSampleDecoderSeeds runs FuzzSampleDecoder's check on its seeds and
// checks that the written full sample is read by hand.
func TestSampleDecoderSeeds(t *testing.T) {
	d := newSampleDecoder()
	for i, s := range sampleLineSeeds(t) {
		fast := checkSampleDecoder(t, d, []byte(s))
		if i < 2 && !fast {
			t.Errorf("seed %d not read by hand: %s", i, s)
		}
	}
}

// FuzzSampleDecoder holds the hand decoder to goccy on any line that
// starts as a sample line does.
func FuzzSampleDecoder(f *testing.F) {
	for _, s := range sampleLineSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkSampleDecoder(t, newSampleDecoder(), line)
	})
}

// TestSampleDecoderFields checks that the hand decoder's keys are each
// wire type's JSON names in field order, so that it reads every field
// the writer writes (a key it does not know sends the line to goccy).
func TestSampleDecoderFields(t *testing.T) {
	for _, c := range []struct {
		typ  any
		keys []string
		left []string
	}{
		{Sample{}, keysOf(sampleFields), sampleLeftToDecoder},
		{PSI{}, keysOf(psiFields), nil},
		{PSIResource{}, keysOf(psiResourceFields), nil},
		{Meminfo{}, keysOf(meminfoFields), nil},
		{VMStat{}, keysOf(vmstatFields), nil},
		{Disk{}, keysOf(diskFields), nil},
		{ProcIO{}, keysOf(procIOFields), nil},
		{Event{}, keysOf(eventFields), nil},
		{ScanStats{}, keysOf(scanFields), nil},
		{Latency{}, keysOf(latencyFields), nil},
		{EventStats{}, keysOf(eventStatsFields), nil},
		{StallOnset{}, keysOf(onsetFields), nil},
		{ProcRSS{}, keysOf(rssFields), nil},
		{TaskDelays{}, keysOf(taskDelaysFields), nil},
	} {
		typ := reflect.TypeOf(c.typ)
		var want []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "-" || contains(c.left, name) {
				continue
			}
			want = append(want, name)
		}
		if diff := cmp.Diff(want, c.keys); diff != "" {
			t.Errorf("%s: hand decoder's keys (-struct +decoder):\n%s", typ.Name(), diff)
		}
	}
}

func keysOf[T any](fields []field[T]) []string {
	var keys []string
	for _, f := range fields {
		keys = append(keys, strings.TrimSuffix(strings.TrimPrefix(f.key, `"`), `":`))
	}
	return keys
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestSpecial checks special against a byte at a time, for each byte
// value at each position among printable ones.
func TestSpecial(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			w := [8]byte{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}
			w[pos] = byte(c)
			want := c < 0x20 || c == '"' || c == '\\' || c >= 0x80
			if got := special(binary.LittleEndian.Uint64(w[:])) != 0; got != want {
				t.Errorf("special(%q) = %v, want %v", w, got, want)
			}
		}
	}
}
