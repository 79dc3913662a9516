package cmd

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"
	_ "time/tzdata" // a recording's zone resolves on hosts without tzdata ("analyze works later and elsewhere")

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/report"
)

// analyzeOptions are the inputs of `memdiag analyze`.
type analyzeOptions struct {
	IO *iostreams.IOStreams
	// Ctx ends reading when done (Ctrl-C, SIGTERM); nil never ends it.
	Ctx context.Context

	Recording  string
	CPUProfile string // hidden --cpuprofile: pprof CPU profile of the run (bench/)
	// More are the recordings after the first (segments, store
	// directories), read with Recording as one; From and To keep a window.
	More        []string
	From, To    string
	LatencyFile string
	// LatencyIn are the --latency-* flags of the results file.
	LatencyIn analysis.LatencyFlags
	// Settings are the analysis flags (--stat, --spike, the thresholds,
	// --psi-scope, --min-signals, --require, --gap, --lag, ...).
	analysis.Settings
	Format   format.Format
	Values   bool
	NoRedact bool // --no-redact: command lines as the recording holds them
	// Output is the file the report goes to ("" or "-": stdout). Its
	// extension picks the format when --format is not given (.html).
	Output string
	Mode   fs.FileMode // --mode of --output
	Force  bool        // --force: --output may overwrite an existing file
	// Prom holds --prometheus and its flags (analyze_prometheus.go); Now
	// is the clock of its relative --from/--to.
	Prom promOptions
	Now  func() time.Time
	// BeforeRender, if set, sees the result before it is rendered (watch
	// prints its end summary, the culprit's processes first, there).
	BeforeRender func(*correlate.Result)
}

func newAnalyzeCmd(f *factory, runF func(*analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{IO: f.IO, Settings: analysis.Settings{Thresholds: map[correlate.Signal]string{}}, Now: f.Now}
	th := make([]string, len(analysis.ThresholdFlags))
	cmd := &cobra.Command{
		Use:     "analyze REC [REC...]",
		Short:   "Explain a recording: its spikes, episodes and the job causing them",
		Long:    helptext.Long("analyze"),
		Example: helptext.Examples("analyze"),
		Args:    analyzeArgs(&opts.Prom),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Recording = args[0]
			}
			if len(args) > 1 {
				opts.More = args[1:]
			}
			opts.Format = format.ForOutput(opts.Format, c.Flags().Changed("format"), opts.Output)
			opts.NoRedact = f.NoRedact
			for i, t := range analysis.ThresholdFlags {
				if c.Flags().Changed(t.Flag) {
					opts.Thresholds[t.Signal] = th[i]
				}
			}
			if runF != nil {
				return runF(opts)
			}
			opts.Ctx = c.Context()
			if opts.Prom.URL != "" {
				return runAnalyzePrometheus(opts)
			}
			return runAnalyze(opts)
		},
	}
	analyzeFlags(cmd, opts, th)
	return cmd
}

// analyzeFlags adds analyze's flags to cmd; th receives the threshold
// flags, in the order of analysis.ThresholdFlags.
func analyzeFlags(cmd *cobra.Command, opts *analyzeOptions, th []string) {
	fl := cmd.Flags()
	windowFlags(fl, &opts.From, &opts.To, "")
	fl.StringVar(&opts.LatencyFile, "latency", "", "load-test results `FILE` to take latency from instead of the recording (a regular file of at most 16 GiB, or - for standard input; a FIFO or a device such as /dev/zero is refused)")
	fl.StringVar(&opts.LatencyIn.Format, "latency-format", "", fmt.Sprintf("force the results format: %v", latency.Formats))
	fl.StringVar(&opts.LatencyIn.TZ, "latency-tz", "", "IANA `zone` of results timestamps written without one (default: the recording's)")
	latencyFlags(fl, &opts.LatencyIn)
	fl.StringVar(&opts.Stat, "stat", "p99", "latency statistic per interval: max, p99, p95 or mean")
	fl.StringVar(&opts.Spike, "spike", "3x", "spike floor: a factor of the rolling baseline (3x) or a latency (500ms)")
	def := correlate.DefaultThresholds()
	for i, t := range analysis.ThresholdFlags {
		fl.StringVar(&th[i], t.Flag, analysis.DefaultThreshold(t.Signal, def.Get(t.Signal)), t.Help)
	}
	fl.StringVar(&opts.LRUDropMin, "lru-drop-min", "32MiB", "bytes the file LRU must also lose within one interval for an LRU drop")
	fl.StringVar(&opts.PSIScope, "psi-scope", "auto", "whose memory PSI the PSI signals read: auto (the recorded --cgroup group, else the host), host, cgroup or any")
	fl.IntVar(&opts.MinSignals, "min-signals", 1, "kernel signals an interval must raise to count without a latency spike (2 ignores lone disk bursts on a shared host)")
	fl.StringVar(&opts.Require, "require", "", "an episode needs one of these `signals` (psi_some, psi for both, ...; none: no requirement); default: psi whenever the recording has memory PSI (disk or reclaim bursts without stall are I/O bursts, not episodes)")
	fl.DurationVar(&opts.Gap, "gap", 0, "merge flagged intervals separated by at most this quiet time (default: one sampling interval)")
	fl.DurationVar(&opts.Lag, "lag", 60*time.Second, "how long after a job's firing its episode may start")
	fl.DurationVar(&opts.GrowthWindow, "growth-min-window", memstate.MinGrowthWindow, "shortest observation of a process from which steady RSS growth is reported")
	formatFlag(cmd, &opts.Format, format.Table, report.Formats, "(html: one self-contained page with charts)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the report to `FILE` instead of stdout (FILE.html: --format html)")
	modeFlag(fl, &opts.Mode)
	forceFlag(fl, &opts.Force, "--output")
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the run to this file (for bench/)")
	_ = fl.MarkHidden("cpuprofile")
	fl.BoolVar(&opts.Values, "values", false, "show the measured values in the timeline (wide layout)")
	addPrometheusFlags(cmd, &opts.Prom)
}

func runAnalyze(opts *analyzeOptions) error {
	if err := rootfs.OneStdin([]string{"REC", "--latency"}, opts.Recording, opts.LatencyFile); err != nil {
		return err
	}
	if err := checkOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	co, err := opts.Correlate()
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(opts.CPUProfile, 0o600)
	if err != nil {
		return err
	}
	defer stopProfile()
	defer analysis.LimitMemory()()
	in := analysis.Input{Paths: append([]string{opts.Recording}, opts.More...), From: opts.From, To: opts.To, NoRedact: opts.NoRedact}
	res, trace, err := in.Analyze(opts.Ctx, opts.IO, opts.LatencyFile, opts.LatencyIn, co, opts.Format == format.HTML)
	if err != nil {
		return err
	}
	if opts.BeforeRender != nil {
		opts.BeforeRender(&res)
	}
	ro := report.Options{Values: opts.Values, Color: opts.IO.ColorEnabled(), Width: opts.IO.Width()}
	if trace != nil {
		ro.Traces = []*correlate.Trace{trace}
	}
	return writeOutput(opts.IO, opts.Output, opts.Mode, opts.Force, &ro, func(w io.Writer) error { return report.Render(w, res, opts.Format, ro) })
}
