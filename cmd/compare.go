package cmd

import (
	"context"
	"io"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/report"
)

// compareOptions are the inputs of `memdiag compare`.
type compareOptions struct {
	IO *iostreams.IOStreams
	// Ctx ends reading when done (Ctrl-C, SIGTERM); nil never ends it.
	Ctx context.Context

	// Pair are the two recordings (BEFORE, AFTER), their --latency-before
	// and --latency-after files, the window of both (--from, --to) or of
	// one side (--before-window, --after-window) and --no-redact.
	analysis.Pair
	LatencyIn   analysis.LatencyFlags // --latency-format, --latency-tz, ...
	Stat, Spike string
	Format      format.Format
	// Output is the file the comparison goes to ("" or "-": stdout).
	Output string
	Mode   fs.FileMode // --mode of --output
	Force  bool        // --force: --output may overwrite an existing file
}

func newCompareCmd(f *factory, runF func(*compareOptions) error) *cobra.Command {
	opts := &compareOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "compare BEFORE AFTER",
		Short:   "Compare two recordings: requests/s, p99, spikes, stall time",
		Long:    helptext.Long("compare"),
		Example: helptext.Examples("compare"),
		Args:    exactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Before.Path, opts.After.Path = args[0], args[1]
			opts.Format = format.ForOutput(opts.Format, c.Flags().Changed("format"), opts.Output)
			opts.NoRedact = f.NoRedact
			if runF != nil {
				return runF(opts)
			}
			opts.Ctx = c.Context()
			return runCompare(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Before.Latency, "latency-before", "", "load-test results `FILE` for the BEFORE recording")
	fl.StringVar(&opts.After.Latency, "latency-after", "", "load-test results `FILE` for the AFTER recording")
	fl.StringVar(&opts.LatencyIn.Format, "latency-format", "", "force the results format of both files")
	fl.StringVar(&opts.LatencyIn.TZ, "latency-tz", "", "IANA `zone` of results timestamps written without one (default: each recording's)")
	latencyFlags(fl, &opts.LatencyIn)
	windowFlags(fl, &opts.From, &opts.To, "both recordings")
	fl.StringVar(&opts.Before.Window, "before-window", "", "read BEFORE only within `FROM..TO` (the forms of --from), instead of --from/--to")
	fl.StringVar(&opts.After.Window, "after-window", "", "read AFTER only within `FROM..TO`, instead of --from/--to")
	fl.StringVar(&opts.Stat, "stat", "p99", "latency statistic for spikes: max, p99, p95 or mean")
	fl.StringVar(&opts.Spike, "spike", "3x", "spike floor: a factor of the rolling baseline (3x) or a latency (500ms)")
	formatFlag(cmd, &opts.Format, format.Table, report.Formats, "(html: both runs on charts, one self-contained page)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the comparison to `FILE` instead of stdout (FILE.html: --format html)")
	modeFlag(fl, &opts.Mode)
	forceFlag(fl, &opts.Force, "--output")
	return cmd
}

func runCompare(opts *compareOptions) error {
	if err := rootfs.OneStdin([]string{"BEFORE", "AFTER", "--latency-before", "--latency-after"}, opts.Before.Path, opts.After.Path, opts.Before.Latency, opts.After.Latency); err != nil {
		return err
	}
	if err := checkOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	co, err := analysis.Settings{Stat: opts.Stat, Spike: opts.Spike, PSIScope: "auto", MinSignals: 1}.Correlate()
	if err != nil {
		return err
	}
	res, traces, err := opts.Analyze(opts.Ctx, opts.IO, opts.LatencyIn, co, opts.Format == format.HTML)
	if err != nil {
		return err
	}
	ro := report.Options{Color: opts.IO.ColorEnabled(), Width: opts.IO.Width(), Traces: traces}
	return writeOutput(opts.IO, opts.Output, opts.Mode, opts.Force, &ro, func(w io.Writer) error { return report.RenderCompare(w, res[0], res[1], opts.Format, ro) })
}
