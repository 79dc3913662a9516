package diskio

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// cpuTime is this process's user+system CPU time so far. On a shared,
// loaded machine wall time per op mostly measures waiting for a core;
// CPU time per op is what a sample costs.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU calls fn in a b.Loop and reports CPU time per iteration.
func measureCPU(b *testing.B, fn func()) {
	n := 0
	start := cpuTime(b)
	for b.Loop() {
		fn()
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(n), "cpu-ns/op")
}

// BenchmarkScanLive scans this host's /proc once per iteration, after a
// baseline scan: the steady-state cost of one `watch` sample.
func BenchmarkScanLive(b *testing.B) {
	s, err := NewProcScanner("/proc", ProcScanOptions{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	_, _, st, err := s.Scan(now)
	if err != nil {
		b.Fatal(err)
	}
	measureCPU(b, func() {
		now = now.Add(time.Second)
		if _, _, _, err := s.Scan(now); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(st.Processes), "procs")
}

// BenchmarkScanSynthetic scans a generated /proc of n processes built
// from the real python3 writer's stat of testdata/diskio/poll. Two trees
// alternate under one symlink: from a to b, 100 processes did I/O (so
// the top-N path, with its cmdline and cgroup reads, runs every other
// iteration); from b to a their counters go back, which yields no delta.
func BenchmarkScanSynthetic(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			ta, tb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			for i := range n {
				pid := 1000 + i
				var rd, wr uint64 = 4096, 8192
				writeProc(b, ta, pid, 1, uint64(pid), fmt.Sprintf("proc%d", i), rd, wr)
				if i%(n/100) == 0 {
					rd, wr = rd+uint64(i)*4096, wr+1<<20
				}
				writeProc(b, tb, pid, 1, uint64(pid), fmt.Sprintf("proc%d", i), rd, wr)
			}
			root, flip := alternating(b, dir, ta, tb)
			s, err := NewProcScanner(root, ProcScanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			if _, _, _, err := s.Scan(now); err != nil {
				b.Fatal(err)
			}
			i := 0
			measureCPU(b, func() {
				i++
				flip()
				now = now.Add(time.Second)
				top, _, st, err := s.Scan(now)
				if err != nil || st.Processes != n || (i%2 == 1 && len(top) != 10) {
					b.Fatalf("scan %d: %d processes, top %d, err %v", i, st.Processes, len(top), err)
				}
			})
		})
	}
}

// alternating returns dir/proc, a symlink to tree a, and flip, which
// points it at the other tree each call: the scan benchmarks read two
// trees in turn so that every other scan sees changed counters.
func alternating(b *testing.B, dir, a, other string) (root string, flip func()) {
	root = filepath.Join(dir, "proc")
	link := func(target string) {
		os.Remove(root)
		if err := os.Symlink(target, root); err != nil {
			b.Fatal(err)
		}
	}
	link(a)
	cur := a
	return root, func() {
		if cur == a {
			cur = other
		} else {
			cur = a
		}
		link(cur)
	}
}

// BenchmarkDisksLive reads this host's /proc/diskstats.
func BenchmarkDisksLive(b *testing.B) {
	c, err := NewDiskCollector("/proc", "/sys", DiskFilter{})
	if err != nil {
		b.Fatal(err)
	}
	measureCPU(b, func() {
		if _, err := c.Disks(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkProcfsBaseline does the per-process reads of one scan the
// straightforward way, with prometheus/procfs (AllProcs, Proc.Stat,
// Proc.IO) over the same kind of synthetic tree, to justify the scanner's
// own reader (see procio.go). It computes no deltas, so it is a lower
// bound for a procfs-based scanner.
func BenchmarkProcfsBaseline(b *testing.B) {
	const n = 1000
	root := filepath.Join(b.TempDir(), "proc")
	for i := range n {
		writeProc(b, root, 1000+i, 1, uint64(1000+i), fmt.Sprintf("proc%d", i), 4096, 8192)
	}
	pfs, err := procfs.NewFS(root)
	if err != nil {
		b.Fatal(err)
	}
	measureCPU(b, func() {
		procs, err := pfs.AllProcs()
		if err != nil || len(procs) != n {
			b.Fatalf("AllProcs: %d, %v", len(procs), err)
		}
		var sum uint64
		for _, p := range procs {
			st, err := p.Stat()
			if err != nil {
				b.Fatal(err)
			}
			io, err := p.IO()
			if err != nil {
				b.Fatal(err)
			}
			sum += st.Starttime + io.ReadBytes + io.WriteBytes
		}
		if sum == 0 {
			b.Fatal("no data")
		}
	})
}

// BenchmarkParseStat and BenchmarkParseIO are the per-process parsers of
// a scan, on the real files of testdata/diskio/poll (python3 writer).
func BenchmarkParseStat(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "diskio", "poll", "t0", "proc", "15749", "stat"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, ok := parseStat(data); !ok {
			b.Fatal("parseStat failed")
		}
	}
}

func BenchmarkParseIO(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "diskio", "poll", "t0", "proc", "15749", "io"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, _, ok := parseIO(data); !ok {
			b.Fatal("parseIO failed")
		}
	}
}

// BenchmarkDisksFixture reads the fixture's /proc/diskstats (procfs
// blockdevice parser, whole-disk filter by /sys/block) once per op.
func BenchmarkDisksFixture(b *testing.B) {
	root := filepath.Join("..", "testdata", "diskio", "poll")
	c, err := NewDiskCollector(filepath.Join(root, "t0", "proc"), filepath.Join(root, "sys"), DiskFilter{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Disks(); err != nil {
			b.Fatal(err)
		}
	}
}
