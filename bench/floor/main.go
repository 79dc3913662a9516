// Command floor is the cost no sampler can go below: every interval it
// opens, reads and closes exactly the /proc files `memdiag watch` reads
// per interval (the PSI files, meminfo, vmstat, diskstats, the /proc
// directory listing and each process's io and stat) into one reused buffer,
// and parses nothing. bench/compare.sh runs it beside memdiag, pidstat and
// atop and reports each one's CPU time as a ratio to this floor.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

func main() {
	interval := flag.Duration("interval", time.Second, "time between reads")
	count := flag.Int("count", 0, "stop after this many intervals (0: never)")
	proc := flag.String("proc", "/proc", "procfs mount")
	flag.Parse()
	buf := make([]byte, 64<<10)
	read := func(path string) {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		for {
			n, err := syscall.Read(fd, buf)
			if n <= 0 || err != nil {
				break
			}
		}
		syscall.Close(fd)
	}
	global := []string{"pressure/memory", "pressure/io", "pressure/cpu", "meminfo", "vmstat", "diskstats"}
	var files int
	for i := 0; *count == 0 || i < *count; i++ {
		start := time.Now()
		for _, g := range global {
			read(*proc + "/" + g)
		}
		d, err := os.Open(*proc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		files = len(global)
		for _, n := range names {
			if _, err := strconv.Atoi(n); err != nil {
				continue
			}
			read(*proc + "/" + n + "/io")
			read(*proc + "/" + n + "/stat")
			files += 2
		}
		time.Sleep(*interval - time.Since(start))
	}
	fmt.Fprintln(os.Stderr, "floor: files per interval:", files)
}
