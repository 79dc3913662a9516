package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/report/mem"
)

// memOptions are the inputs of `memdiag mem`.
type memOptions struct {
	IO     *iostreams.IOStreams
	Root   string
	Format format.Format
	// CollectOptions are what is read (--top, --interval, --kernel-log)
	// with the factory's clock; its RunLog runs a kernel log command
	// (dmesg, journalctl) when /dev/kmsg is unreadable, only when Root is
	// "/" (runMem), and tests set BeforeSecondRead.
	memstate.CollectOptions
	AllOOM bool // every OOM kill of the log in the table, not the newest mem.OOMShown
	// Allocators writes each top process's allocator reading under
	// the process table (JSON has them anyway).
	Allocators bool
	ctx        context.Context
}

func newMemCmd(f *factory, runF func(*memOptions) error) *cobra.Command {
	opts := &memOptions{IO: f.IO, CollectOptions: memstate.CollectOptions{Now: f.Now, RunLog: memstate.RunLogCommand}}
	c := &cobra.Command{
		Use:     "mem",
		Short:   "Show which memory is the problem: host, cgroups, processes, OOM",
		Long:    helptext.Long("mem"),
		Example: helptext.Examples("mem"),
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Top < 0 {
				return flagErrorf("--top must be 0 (all) or more, not %d", opts.Top)
			}
			if opts.Interval < 0 {
				return flagErrorf("--interval must not be negative")
			}
			opts.Root = f.Root
			if opts.Root != "/" && !cmd.Flags().Changed("interval") {
				// A copied tree does not change: two reads a second apart
				// would only ever show "no pressure".
				opts.Interval = 0
			}
			opts.ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return runMem(opts)
		},
	}
	formatFlag(c, &opts.Format, format.Table, mem.Formats, "(csv: one value per row: section,id,field,value)")
	c.Flags().IntVar(&opts.Top, "top", 10, "processes to show by RSS, and cgroups by usage beyond those with a limit or OOM kills (0: all)")
	c.Flags().StringVar(&opts.KernelLog, "kernel-log", "", "read OOM kills from this file of kernel log text (dmesg, dmesg -T, journalctl -k, /dev/kmsg, syslog) instead of the host's log (a regular file or a pipe, at most 256 MiB: it is read whole)")
	c.Flags().BoolVar(&opts.AllOOM, "all-oom", false, fmt.Sprintf("list every OOM kill of the kernel log, not the newest %d (the kernel's report of each, not of the newest %d)", mem.OOMShown, mem.OOMDetailed))
	c.Flags().BoolVar(&opts.Allocators, "allocators", false, "say for each process listed which allocator it uses and whether freed memory may stay with it (leak or retention)")
	c.Flags().DurationVar(&opts.Interval, "interval", time.Second, "time between the two reads that measure pressure (0: do not measure; the default with --root other than /)")
	return c
}

func runMem(opts *memOptions) error {
	col, err := memstate.NewCollector(opts.Root)
	if err != nil {
		return err
	}
	o := opts.CollectOptions
	if opts.Root != "/" {
		o.RunLog = nil // the commands read the running host's log, not a fixture's
	}
	rep, err := col.Report(opts.ctx, o)
	if err != nil {
		return err
	}
	return mem.Render(opts.IO.Out, rep, opts.Format, mem.Options{TopCgroups: opts.Top, AllOOM: opts.AllOOM, Allocators: opts.Allocators, Width: opts.IO.Width(), Color: opts.IO.ColorEnabled()})
}
