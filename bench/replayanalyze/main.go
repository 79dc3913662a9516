// Command replayanalyze replays a store's segments (or recordings), in
// name order, into one correlate.Series, as `record --listen`'s
// in-process analysis builds it, and every -every samples runs the
// correlator over everything so far, printing one line:
//
//	samples N heap_inuse_mib H analyze_ms A episodes E culprits C [trims T trim_max_ms M]
//
// heap_inuse_mib is the live heap after a GC (the series and the
// reader's state), analyze_ms the wall time of one Analyze. With
// -window D the series is the exporter's: a sliding window of D
// (correlate.Series.Slide); with -window D -pair it is what the exporter
// kept before (two series, the second started D/2 after the first, the
// older analysed and dropped once D old), to compare their heaps; trims
// and trim_max_ms count the sliding window's trims so far and the
// longest one's wall time. -cpuprofile
// profiles the last Analyze, -memprofile writes the heap after the last
// sample. It measures what the exporter's round costs
// on a real host's recording (docs/benchmarks.md), which the union
// fixture of BenchmarkAnalyzeWindow cannot: a busy host's ~1,100
// processes, its exec churn and its jobs.
//
//	go run ./bench/replayanalyze -every 600 /tmp/soak/long/store/*.jsonl.gz
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

func main() {
	every := flag.Int("every", 600, "analyse after every this many samples")
	cpu := flag.String("cpuprofile", "", "write a CPU profile of the last analysis to this file")
	mem := flag.String("memprofile", "", "write a heap profile after the last sample to this file (the series alive)")
	window := flag.Duration("window", 0, "keep a sliding window of this much sample time, as the exporter (0: every sample)")
	pair := flag.Bool("pair", false, "with -window: two overlapping series, as the exporter kept before issue 28")
	analyze := flag.Bool("analyze", true, "analyse at each report (false: the heap only, fast, as when no round has run)")
	repeat := flag.Int("repeat", 1, "replay the segments this many times, each later by the span replayed (a longer run from a short store)")
	flag.Parse()
	segs := slices.Sorted(slices.Values(flag.Args()))
	if len(segs) == 0 || *every <= 0 {
		fmt.Fprintln(os.Stderr, "usage: replayanalyze [-every N] [-window D [-pair]] [-cpuprofile F] [-memprofile F] SEGMENT...")
		os.Exit(2)
	}
	var sr, second *correlate.Series
	n, trims := 0, 0
	var trimMax time.Duration
	last := func(final bool) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if final && *cpu != "" {
			f, err := os.Create(*cpu)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		var res correlate.Result
		if *analyze {
			res = sr.Analyze(correlate.Options{Project: timers.Project})
		}
		fmt.Printf("samples %d heap_inuse_mib %.1f analyze_ms %d episodes %d culprits %d",
			n, float64(ms.HeapInuse)/(1<<20), time.Since(t0).Milliseconds(), len(res.Episodes), len(res.Culprits))
		if *window > 0 && !*pair {
			fmt.Printf(" trims %d trim_max_ms %d", trims, trimMax.Milliseconds())
		}
		fmt.Println()
	}
	add := func(s *record.Sample, h record.Header) {
		if sr == nil && *window > 0 && !*pair {
			sr = correlate.NewWindowSeries(h)
		} else if sr == nil {
			sr = correlate.NewSeries(h)
		}
		sr.Add(s)
		switch from, _, ok := sr.Span(); {
		case *window <= 0:
		case !*pair:
			t0 := time.Now()
			if sr.Slide(*window) {
				trims++
				trimMax = max(trimMax, time.Since(t0))
			}
		case second != nil:
			second.Add(s)
			if s.Time.Sub(from) >= *window {
				sr, second = second, nil
			}
		case ok && s.Time.Sub(from) >= *window/2:
			second = correlate.NewSeries(h)
			second.Add(s)
		}
		if n++; n%*every == 0 {
			last(false)
		}
	}
	var first, lastAt time.Time
	for range max(*repeat, 1) {
		shift := time.Duration(0)
		if !first.IsZero() {
			shift = lastAt.Sub(first) + time.Second
		}
		replay(segs, shift, func(s *record.Sample, h record.Header) {
			if first.IsZero() {
				first = s.Time
			}
			lastAt = s.Time
			add(s, h)
		})
	}
	if sr != nil && n%*every != 0 {
		last(true)
	}
	if *mem != "" {
		runtime.GC()
		f, err := os.Create(*mem)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		f.Close()
		runtime.KeepAlive(sr)
		runtime.KeepAlive(second)
	}
}

// replay reads the segments in order and passes each sample, its time
// later by shift, to fn with its segment's header.
func replay(segs []string, shift time.Duration, fn func(*record.Sample, record.Header)) {
	for _, p := range segs {
		r, err := record.Open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			s, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v (the samples before it are kept)\n", p, err)
				break
			}
			if s == nil {
				break
			}
			s.Time = s.Time.Add(shift)
			fn(s, r.Header())
		}
		r.Close()
	}
}
