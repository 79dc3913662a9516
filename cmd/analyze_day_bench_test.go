package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"
)

// BenchmarkAnalyzeDay runs `memdiag analyze DAY --latency CSV` in the
// process, on the day of bench/genrec (bench/analyze.sh), so that
// `-benchmem`, `-memprofile` and `-cpuprofile` see the whole pipeline:
// reading, the series, the import and the analysis (issue 32). It needs
// the files, which are too large to keep in testdata:
//
//	go build -o /tmp/genrec ./bench/genrec
//	/tmp/genrec -out /tmp/day.jsonl.gz -latency /tmp/day.csv
//	MEMDIAG_BENCH_DAY=/tmp/day.jsonl.gz MEMDIAG_BENCH_DAY_LATENCY=/tmp/day.csv \
//	  go test ./cmd -run '^$' -bench AnalyzeDay -benchmem -benchtime 1x -memprofile mem.prof
//
// MEMDIAG_BENCH_DAY_LATENCY may be empty: the recording alone. With
// MEMDIAG_BENCH_HEAPDIR set, a heap profile is written there every 0.5 s
// (heap-NNN.prof; in use as of the last collection), to find the peak.
func BenchmarkAnalyzeDay(b *testing.B) {
	day := os.Getenv("MEMDIAG_BENCH_DAY")
	if day == "" {
		b.Skip("MEMDIAG_BENCH_DAY is not set (a day of bench/genrec)")
	}
	args := []string{"analyze", "--format", "json", day}
	if l := os.Getenv("MEMDIAG_BENCH_DAY_LATENCY"); l != "" {
		args = append(args, "--latency", l)
	}
	now := func() time.Time { return time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC) }
	if dir := os.Getenv("MEMDIAG_BENCH_HEAPDIR"); dir != "" {
		stop := make(chan struct{})
		defer close(stop)
		go heapSnapshots(b, dir, stop)
	}
	b.ReportAllocs()
	for b.Loop() {
		ios, _, out, errOut := iostreamsTest()
		if code := execute(context.Background(), &factory{IO: ios, Now: now, Root: "/"}, args); code != exitOK {
			b.Fatalf("exit %d: %s", code, errOut)
		}
		if out.Len() == 0 {
			b.Fatal("no report")
		}
	}
}

// heapSnapshots writes dir/heap-NNN.prof every 0.5 s until stop closes.
func heapSnapshots(b *testing.B, dir string, stop chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%03d.prof", n)))
		if err != nil {
			b.Error(err)
			return
		}
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Error(err)
			return
		}
	}
}
