package diskio_test

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/memdiag/memdiag/diskio"
)

// A sampling loop as `memdiag watch` runs it: one scan per interval, the
// denial warning printed once, rates from the deltas.
func ExampleProcScanner() {
	s, err := diskio.NewProcScanner("/proc", diskio.ProcScanOptions{TopN: 10})
	if err != nil {
		slog.Error("diskio", "err", err)
		return
	}
	warned := false
	interval := time.Second
	for i := 0; i < 3; i++ {
		top, events, stats, err := s.Scan(time.Now())
		if err != nil {
			slog.Error("diskio", "err", err)
			return
		}
		if stats.Denied > 0 && !warned {
			slog.Warn(diskio.DeniedHint, "processes", stats.Denied)
			warned = true
		}
		for _, p := range top {
			fmt.Printf("%d %s %s %.1f MB/s written\n", p.PID, p.Comm, p.Unit,
				float64(p.DeltaWriteBytes)/interval.Seconds()/1e6)
		}
		for _, e := range events {
			fmt.Println(e.Kind, e.PID, e.Comm, e.Unit)
		}
		time.Sleep(interval)
	}
}

// Disk rates between two readings.
func ExampleDiskRates() {
	c, err := diskio.NewDiskCollector("/proc", "/sys", diskio.DiskFilter{})
	if err != nil {
		return
	}
	first, _ := c.Disks()
	prev := map[string]diskio.Disk{}
	for _, d := range first {
		prev[d.Name] = d
	}
	time.Sleep(time.Second)
	cur, _ := c.Disks()
	for _, d := range cur { // match by name: devices come and go
		if r, ok := diskio.DiskRates(prev[d.Name], d, time.Second); ok {
			fmt.Printf("%s %.0f B/s written, busy %.0f %%\n", r.Name, r.WriteBytesPerSec, r.Busy*100)
		}
	}
}
