package cmd

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"time"
	_ "time/tzdata" // a recording's zone resolves on hosts without tzdata ("analyze works later and elsewhere")

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/record"
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
	More          []string
	From, To      string
	LatencyFile   string
	LatencyFormat string
	LatencyTZ     string // zone of timestamps written without one; "" = the recording's
	LatencyIn     analysis.LatencyFlags
	Stat          string
	Spike         string
	// Thresholds holds the threshold flags that were given, by signal.
	Thresholds map[correlate.Signal]string
	LRUDropMin string // "" = default
	PSIScope   string
	MinSignals int
	Require    string
	Gap        time.Duration
	Lag        time.Duration
	// GrowthWindow is the shortest observation from which steady RSS
	// growth is reported (--growth-min-window).
	GrowthWindow time.Duration
	Format       format.Format
	Values       bool
	NoRedact     bool // --no-redact: command lines as the recording holds them
	// Output is the file the report goes to ("" or "-": stdout). Its
	// extension picks the format when --format is not given (.html).
	Output string
	Mode   fs.FileMode // --mode of --output
	// Prom holds --prometheus and its flags (analyze_prometheus.go); Now
	// is the clock of its relative --from/--to.
	Prom promOptions
	Now  func() time.Time
	// BeforeRender, if set, sees the result before it is rendered (watch
	// prints its end summary, the culprit's processes first, there).
	BeforeRender func(*correlate.Result)
}

// analyzeLong is the long help of newAnalyzeCmd.
var analyzeLong = heredoc.Doc(`
	analyze reads a recording made by memdiag watch and prints the timeline
	of its episodes — intervals where memory pressure (PSI memory some or
	full) rose above the recording's own quiet level, with the latency
	spikes that fell in them — with the marks of the signals that moved
	(PSI, file LRU, refaults, reclaim, disk I/O, I/O time, swap), how often
	the episodes recur, and the culprit: the timer, cron job or process
	that explains them, with its evidence and what to do about it. A
	latency spike with no pressure is listed, but never opens an episode;
	disk or reclaim activity that stalled less than the thresholds is an
	I/O burst, not an episode (--require none counts any signal).

	A timeline row's TIME is the end of the episode's first interval: the
	moment its counters were read, which is the time watch printed on that
	interval's live row (sar and pidstat stamp intervals the same way).
	--values adds the episode's DURATION.

	Latency comes from the recording (watch --probe or --latency) or from a
	load test's results file given with --latency (vegeta, JMeter, k6,
	Locust, hey or a generic timestamp,latency CSV; the format is detected).

	REC may also be a store directory of memdiag record, or several of its
	segments: they are read as one continuous recording, and --from/--to keep
	a window of it, reading only the segments that overlap (-6h, 06:25,
	'yesterday 06:00..07:00', RFC 3339; see docs/service.md).

	Each signal is compared with the recording's own baseline: its median
	(PSI: its quiet level, the 25th percentile, and PSI must also reach 1 %
	some or 0.5 % full of wall time); a threshold is the rise above it that
	counts (see the flags for defaults; "off" disables a signal). A spike
	is a latency statistic above its rolling median by --spike, either a
	factor (3x) or an absolute floor (500ms). docs/analyze.md has the
	whole method.
`)

// analyzeExample is the Example section of newAnalyzeCmd's help.
var analyzeExample = examples(`
	# the timeline table and the verdict
	memdiag analyze run.jsonl

	# latency from a load test's results; a spike is a max above 500 ms
	memdiag analyze run.jsonl --latency results.csv --stat max --spike 500ms

	# measured values in the table; a higher disk threshold, swap ignored
	memdiag analyze run.jsonl --values --disk-io 32MiB --swap-out off

	# the best-ranked culprit, for a script
	memdiag analyze run.jsonl --format json | jq '.culprits[0]'

	# one self-contained page with charts, to mail or keep as a CI artifact
	memdiag analyze run.jsonl -o report.html

	# yesterday's early morning from memdiag record's store, across its segments
	memdiag analyze /var/lib/memdiag --from 'yesterday 06:00..07:00'
`)

func newAnalyzeCmd(f *factory, runF func(*analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{IO: f.IO, Thresholds: map[correlate.Signal]string{}, Now: f.Now}
	th := make([]string, len(analysis.ThresholdFlags))
	cmd := &cobra.Command{
		Use:     "analyze REC [REC...]",
		Short:   "Find the latency spikes and pressure episodes of a recording, their period and the job that causes them",
		Long:    analyzeLong,
		Example: analyzeExample,
		Args:    analyzeArgs(&opts.Prom),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Recording = args[0]
			}
			if len(args) > 1 {
				opts.More = args[1:]
			}
			opts.Format = formatForOutput(c, opts.Format, opts.Output)
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
	fl.StringVar(&opts.LatencyFormat, "latency-format", "", fmt.Sprintf("force the results format: %v", latency.Formats))
	fl.StringVar(&opts.LatencyTZ, "latency-tz", "", "IANA `zone` of results timestamps written without one (default: the recording's)")
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
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the run to this file (for bench/)")
	_ = fl.MarkHidden("cpuprofile")
	fl.BoolVar(&opts.Values, "values", false, "show the measured values in the timeline (wide layout)")
	addPrometheusFlags(cmd, &opts.Prom)
}

// settings are the analysis flags of opts.
func (opts *analyzeOptions) settings() analysis.Settings {
	return analysis.Settings{Stat: opts.Stat, Spike: opts.Spike, PSIScope: opts.PSIScope, MinSignals: opts.MinSignals,
		Require: opts.Require, Thresholds: opts.Thresholds, LRUDropMin: opts.LRUDropMin,
		Gap: opts.Gap, Lag: opts.Lag, GrowthWindow: opts.GrowthWindow}
}

func runAnalyze(opts *analyzeOptions) error {
	if err := oneStdin([]string{"REC", "--latency"}, opts.Recording, opts.LatencyFile); err != nil {
		return err
	}
	co, err := opts.settings().Correlate()
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(opts.CPUProfile, 0o600)
	if err != nil {
		return err
	}
	defer stopProfile()
	defer analysis.LimitMemory()()
	lo := opts.LatencyIn
	lo.Format, lo.TZ = opts.LatencyFormat, opts.LatencyTZ
	in := recInput{Paths: append([]string{opts.Recording}, opts.More...), From: opts.From, To: opts.To, NoRedact: opts.NoRedact}
	res, trace, err := analyzeInputTrace(opts.Ctx, opts.IO, in, opts.LatencyFile, lo, co, opts.Format == format.HTML)
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
	return writeOutput(opts.IO, opts.Output, opts.Mode, &ro, func(w io.Writer) error { return report.Render(w, res, opts.Format, ro) })
}

// analyzeFileTrace is analyzeFile that also returns, when trace is set,
// the per-interval data behind the result (correlate.Series.Trace), for
// the HTML report's charts.
func analyzeFileTrace(ctx context.Context, io *iostreams.IOStreams, path, latFile string, lo analysis.LatencyFlags, co correlate.Options, trace, keep bool) (correlate.Result, *correlate.Trace, error) {
	f, name, err := openInputContext(ctx, io, "", path)
	if err != nil {
		return correlate.Result{}, nil, err
	}
	defer f.Close()
	pr, done := withProgress(io, f, name)
	// Ctrl-C ends a long read at the next 64 KiB, not at the end, and a
	// read blocked on a FIFO or stdin by closing it.
	pr = ctxReader{ctx, pr}
	if ctx != nil {
		defer context.AfterFunc(ctx, func() { f.Close() })()
	}
	r, err := record.NewReader(pr, name)
	if err != nil {
		done()
		return correlate.Result{}, nil, err
	}
	o := analysisOptions(io, latFile, lo, co, trace)
	o.Redact = !keep
	return analysis.Recording(r, path, done, o)
}

// analyzeInputTrace is analyzeFileTrace of one recording, or of several
// segments and store directories joined, within in's window.
func analyzeInputTrace(ctx context.Context, io *iostreams.IOStreams, in recInput, latFile string, lo analysis.LatencyFlags, co correlate.Options, trace bool) (correlate.Result, *correlate.Trace, error) {
	if !in.joined() {
		return analyzeFileTrace(ctx, io, in.Paths[0], latFile, lo, co, trace, in.NoRedact)
	}
	j, _, err := in.open("")
	if err != nil {
		return correlate.Result{}, nil, err
	}
	o := analysisOptions(io, latFile, lo, co, trace)
	o.Redact = !in.NoRedact
	return analysis.Recording(joinedSource{ctx, j}, j.Name(), func() {}, o)
}

// analysisOptions are the analysis.Options of the latency flags lo
// for the results file latFile ("": the recording's latency).
func analysisOptions(ios *iostreams.IOStreams, latFile string, lo analysis.LatencyFlags, co correlate.Options, trace bool) analysis.Options {
	return analysis.Options{
		Correlate: co, MinShare: lo.MinShare, WithFailed: lo.WithFailed, Trace: trace,
		Import: func(h *record.Header) (*latency.Imported, error) { return lo.Import(ios.In, h, latFile) },
		Warn:   func(err error) { fmt.Fprintf(ios.ErrOut, "memdiag: warning: %v\n", err) },
	}
}
