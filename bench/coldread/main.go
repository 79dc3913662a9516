// Command coldread reads a file through the page cache at a fixed rate,
// cold: every window it has read is dropped from the page cache
// (posix_fadvise DONTNEED) right after, so each pass over the file reads
// it from the disk again and adds every page to the page cache anew.
// bench/ebpf.sh runs it as the "cold buffered reads" load: the page-cache
// add and delete tracepoints the eBPF chain attaches to fire once per
// page (4 KiB), ~128,000 times a second each at 500 MiB/s.
//
//	coldread -file F -rate 500 -duration 30s
//
// At the end it prints the bytes read and the achieved MiB/s on stderr.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	file := flag.String("file", "", "file to read (its pages are dropped from the page cache as it goes)")
	rate := flag.Float64("rate", 500, "MiB per second (0: as fast as the disk)")
	duration := flag.Duration("duration", 30*time.Second, "stop after this long")
	flag.Parse()
	f, err := os.Open(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldread:", err)
		os.Exit(1)
	}
	defer f.Close()
	fd := int(f.Fd())
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED) // start cold
	const chunk = 1 << 20
	const window = 64 << 20 // dropped behind the reader every 64 MiB
	buf := make([]byte, chunk)
	start := time.Now()
	end := start.Add(*duration)
	var total, off, dropped int64
	for time.Now().Before(end) {
		n, err := f.ReadAt(buf, off)
		off += int64(n)
		total += int64(n)
		if off-dropped >= window || err == io.EOF {
			_ = unix.Fadvise(fd, dropped, off-dropped, unix.FADV_DONTNEED)
			dropped = off
		}
		if err == io.EOF {
			off, dropped = 0, 0
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "coldread:", err)
			os.Exit(1)
		}
		if *rate > 0 { // pace: total bytes may not run ahead of rate × elapsed
			due := start.Add(time.Duration(float64(total) / (*rate * (1 << 20)) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
	}
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	el := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "coldread: %d bytes in %.1f s, %.1f MiB/s\n", total, el, float64(total)/el/(1<<20))
}
