package record

import (
	"bytes"
	"compress/gzip"
	stdjson "encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// benchSample is a sample like `watch` writes each second at N=1000 on
// the project's CI host: PSI, meminfo and vmstat read from the
// linux-6.18 fixture, one disk, and 10 top processes by I/O and by RSS
// with the field values of a live recording (docs/benchmarks.md).
func benchSample(b *testing.B) *Sample {
	s := sampleFromRoot(b, "linux-6.18")
	s.Disks = []Disk{{Name: "vda", Reads: 300215, Writes: 165777, ReadBytes: 28919649280, WriteBytes: 34315735040,
		IOTicks: 148148 * time.Millisecond, TimeInQueue: 873224 * time.Millisecond}}
	for i := 0; i < 10; i++ {
		s.Procs = append(s.Procs, ProcIO{PID: 31710 + i, PPID: 31620, StartTicks: 317931, Comm: "websvc",
			Cmdline: "/tmp/TestAnalyze/001/websvc -data /tmp/TestAnalyze/003/web.dat -data-size 100663296 -anon 50331648",
			Cgroup:  "/memdiag-e2e.slice/memdiag-e2e-web.service", Unit: "memdiag-e2e-web.service",
			ReadBytes: 123891712, WriteBytes: 100663296, DeltaReadBytes: 147456})
		s.RSS = append(s.RSS, ProcRSS{PID: 31710 + i, StartTicks: 317931, Comm: "websvc", AnonBytes: 105103360, FileBytes: 6598656})
	}
	s.Scan = &ScanStats{Processes: 1072, Denied: 1}
	return &s
}

// BenchmarkWriteSample is the recording's cost per sample: JSON encoding
// and the write(2) per line (plain), or compression with a sync flush per
// line (.gz). B/sample is the bytes the file grows.
func BenchmarkWriteSample(b *testing.B) {
	for _, name := range []string{"rec.jsonl", "rec.jsonl.gz"} {
		b.Run(name, func(b *testing.B) {
			s := benchSample(b)
			path := filepath.Join(b.TempDir(), name)
			w, err := Create(path, true)
			if err != nil {
				b.Fatal(err)
			}
			clock := s.Time
			w.now = func() time.Time { return clock }
			if err := w.WriteHeader(&Header{Interval: time.Second}); err != nil {
				b.Fatal(err)
			}
			fi, _ := os.Stat(path)
			start := fi.Size()
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				clock = clock.Add(time.Second)
				s.Time, s.Seq = clock, n
				if err := w.WriteSample(s); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if err := w.Close("bench"); err != nil {
				b.Fatal(err)
			}
			fi, _ = os.Stat(path)
			b.ReportMetric(float64(fi.Size()-start)/float64(n), "B/sample")
			b.ReportMetric(float64(fi.Size()-start)/float64(n)*3600/1e6, "MB/hour@1s")
		})
	}
}

// BenchmarkDecodeSample is the cost of reading one sample line (the
// benchmark sample above, ~6 KB) with the reader's decoder (the hand
// decoder, sampleDecoder) and, for comparison, with
// github.com/goccy/go-json, which it falls back to, and encoding/json,
// which the reader used before (docs/benchmarks.md, "analyze on a day").
func BenchmarkDecodeSample(b *testing.B) {
	line := writtenLine(b, benchSample(b))
	hand := newSampleDecoder()
	if _, ok := hand.sample(line); !ok {
		b.Fatal("the hand decoder does not read the benchmark sample")
	}
	for _, d := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{
		{"hand", func(l []byte, v any) (err error) { *v.(*Sample), err = deref(hand.decodeSample(l)); return err }},
		{"goccy", json.Unmarshal}, {"encoding-json", stdjson.Unmarshal},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				var s Sample
				if err := d.unmarshal(line, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func deref(s *Sample, err error) (Sample, error) {
	if err != nil {
		return Sample{}, err
	}
	return *s, nil
}

// BenchmarkGzipSyncFlush measures what the .gz writer's sync flush after
// every sample costs in size, against the flush every 10 samples (10 s at
// the default interval) it replaced: the lines of a real recording
// (MEMDIAG_BENCH_RECORDING, a plain .jsonl from `memdiag watch`; else the
// benchmark sample with its counters moving) compressed both ways.
// B/sample is the compressed bytes per sample line.
func BenchmarkGzipSyncFlush(b *testing.B) {
	var lines [][]byte
	if p := os.Getenv("MEMDIAG_BENCH_RECORDING"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if bytes.HasPrefix(l, samplePrefix) {
				lines = append(lines, l)
			}
		}
	} else {
		s := benchSample(b)
		for i := range 600 {
			s.Seq, s.Time = i, s.Time.Add(time.Second)
			s.Procs[i%10].ReadBytes += uint64(i) * 4096
			s.Disks[0].ReadBytes += uint64(i) * 65536
			l, _ := stdjson.Marshal(s)
			lines = append(lines, append(l, '\n'))
		}
	}
	if len(lines) == 0 {
		b.Fatal("no sample lines")
	}
	for _, every := range []int{1, 10} {
		b.Run(fmt.Sprintf("flush-every-%d", every), func(b *testing.B) {
			var size int
			for b.Loop() {
				var buf bytes.Buffer
				gz := gzip.NewWriter(&buf)
				for i, l := range lines {
					_, _ = gz.Write(l)
					if (i+1)%every == 0 {
						_ = gz.Flush()
					}
				}
				_ = gz.Close()
				size = buf.Len()
			}
			b.ReportMetric(float64(size)/float64(len(lines)), "B/sample")
		})
	}
}

// BenchmarkBetween is one interval's derivation from two samples as
// `analyze` does it for every sample (correlate.Series.Add): the
// catalogue's readings of both samples, converted from the wire types,
// and every signal. The samples are the hog fixtures with one disk.
func BenchmarkBetween(b *testing.B) {
	s0, s1 := sampleFromRoot(b, "linux-6.18-hog-t0"), sampleFromRoot(b, "linux-6.18-hog-t1")
	s0.Disks = []Disk{{Name: "vda", Reads: 300215, Writes: 165777, ReadBytes: 28919649280, WriteBytes: 34315735040,
		IOTicks: 148148 * time.Millisecond, TimeInQueue: 873224 * time.Millisecond}}
	s1.Disks = []Disk{{Name: "vda", Reads: 300415, Writes: 165877, ReadBytes: 28929649280, WriteBytes: 34325735040,
		IOTicks: 148948 * time.Millisecond, TimeInQueue: 874224 * time.Millisecond}}
	h := &Header{PageSize: 4096}
	b.ReportAllocs()
	for b.Loop() {
		_ = Between(h, &s0, &s1)
	}
}
