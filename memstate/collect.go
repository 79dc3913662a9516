package memstate

import (
	"context"
	"errors"
	"path/filepath"
	"time"
)

// CollectOptions say what [Collector.Report] reads (memdiag mem's flags).
type CollectOptions struct {
	Top      int           // processes by RSS (0: all)
	Interval time.Duration // between the two /proc/vmstat and PSI reads; 0: one read, pressure not measured
	Now      func() time.Time
	// KernelLog is a file of kernel log text in any form (--kernel-log);
	// "" reads the root's own log.
	KernelLog string
	// RunLog runs a kernel log command (dmesg, journalctl) when /dev/kmsg
	// is unreadable; nil never does. Set it only for the running host
	// (root "/"): the commands read its log, not a fixture's.
	RunLog func(ctx context.Context, name string, args ...string) ([]byte, error)
	// BeforeSecondRead, when set, runs between the two reads (a test
	// changes the fixture root's counters there).
	BeforeSecondRead func()
}

// Report reads the memory state of c's root: two snapshots o.Interval
// apart, the host, the o.Top largest processes, every memory cgroup and
// the OOM kills of the kernel log, and builds the report. What the host
// lacks (no PSI, no cgroup hierarchy, no boot time) is a warning of the
// report, not an error.
func (c *Collector) Report(ctx context.Context, o CollectOptions) (Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var warnings []string
	warn := func(err error) { warnings = append(warnings, err.Error()) }
	prev, cur, missing, err := c.Snapshots(ctx, o.Interval, o.Now, o.BeforeSecondRead)
	if err != nil {
		return Report{}, err
	}
	if missing != nil {
		warn(missing)
	}
	host, hw, err := c.Host()
	if err != nil {
		return Report{}, err
	}
	for _, e := range hw {
		warn(e)
	}
	procs, scan, err := c.Procs(o.Top)
	if err != nil {
		return Report{}, err
	}
	if scan.Fault != nil {
		warn(scan.Fault) // once: the count and the first file
	}
	cgs, err := c.Cgroups(&host)
	if err != nil {
		var ue *UnavailableError
		if !errors.As(err, &ue) {
			return Report{}, err
		}
		warn(err)
	}
	boot, err := c.BootTime()
	if err != nil {
		warn(err)
	}
	rep := Build(o.Now(), prev, cur, host, procs, scan, cgs, c.readKernelLog(ctx, o, boot))
	rep.Warnings = warnings
	if r := filepath.Clean(c.root); r != "/" {
		rep.Root = c.root
	}
	return rep, nil
}

// readKernelLog reads OOM kills from the file of --kernel-log, else
// from the root's log, else with o.RunLog.
func (c *Collector) readKernelLog(ctx context.Context, o CollectOptions, boot time.Time) KernelLog {
	ko := KernelLogOptions{LogOptions: LogOptions{Boot: boot}, File: o.KernelLog, Run: o.RunLog}
	if o.Now != nil {
		ko.Now = o.Now()
	}
	return c.ReadKernelLog(ctx, ko)
}
