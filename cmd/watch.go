package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/internal/cpuprofile"
	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/report"
	"github.com/memdiag/memdiag/session"
)

// watchOptions are the settings of `memdiag watch`.
type watchOptions struct {
	F *factory
	// Options are the recording session's settings, bound to the flags
	// watch and record share (interval, cgroup, victim, events, latency,
	// --listen and its --web.config.file); sessionOptions adds the
	// factory's root, clock and streams. Duration 0: until Ctrl-C or the
	// command exits.
	session.Options
	Out   string
	Force bool
	Quiet bool
	// LatencyColumns and LatencyProps: --latency-columns, --latency-properties.
	LatencyColumns, LatencyProps string
	CPUProfile                   string      // hidden --cpuprofile: pprof CPU profile of the whole run (bench/)
	Mode                         fs.FileMode // --mode of the recording and profile
}

// watchLong is the long help of newWatchCmd.
var watchLong = helptext.Long("watch")

// watchExample is the Example section of newWatchCmd's help.
var watchExample = helptext.Examples("watch")

func newWatchCmd(f *factory, runF func(context.Context, *watchOptions) error) *cobra.Command {
	opts := &watchOptions{F: f}
	var execFlag bool // removed; kept hidden to say so
	c := &cobra.Command{
		Use:     "watch [flags] [-- COMMAND ARGS...]",
		Short:   "Record memory pressure, reclaim, swap and per-process disk I/O",
		Long:    watchLong,
		Example: watchExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.complete(cmd, args, execFlag); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runWatch(cmd.Context(), opts)
		},
	}
	fl := c.Flags()
	opts.samplingFlags(fl, "header", helptext.VictimFlag)
	longDurationVar(fl, &opts.Duration, "duration", 0, "stop after this long, e.g. 30m, 2h, 2d (default: until Ctrl-C or the command exits)")
	fl.StringVarP(&opts.Out, "out", "o", "", "recording file (default memdiag-YYYYMMDD-HHMMSS.jsonl.gz here); a name ending .gz is gzip-compressed, any other plain JSON Lines; both flushed every sample")
	fl.BoolVar(&opts.Force, "force", false, "overwrite --out if it exists")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no live rows")
	fl.BoolVar(&opts.KeepCmdline, "keep-cmdline", false, "store command lines unredacted")
	_ = fl.MarkDeprecated("keep-cmdline", "use --no-redact")
	fl.BoolVar(&execFlag, "exec", false, "removed: the command after -- is always run")
	_ = fl.MarkHidden("exec")
	fl.StringVar(&opts.ProbeURL, "probe", "", "measure latency with a built-in HTTP probe of this URL")
	fl.DurationVar(&opts.ProbeEvery, "probe-interval", 200*time.Millisecond, "time between probe requests")
	fl.StringVar(&opts.LatencyFile, "latency", "", "follow a load-test results file as it is written (a regular file: a FIFO or a device such as /dev/zero is refused)")
	fl.StringVar(&opts.LatencyFmt, "latency-format", "", "format of --latency (default: detected)")
	addJMeterFlags(fl, &opts.LatencyColumns, &opts.LatencyProps)
	fl.BoolVar(&opts.EnableDelayAcct, "enable-delayacct", false, "turn kernel.task_delayacct on while recording (root), then restore it")
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the run to this file (for bench/)")
	_ = fl.MarkHidden("cpuprofile")
	fl.StringVar(&opts.ListenAddr, "listen", "", "serve Prometheus /metrics on this address while recording (https with --web.config.file TLS), e.g. "+exposition.DefaultListen+" (docs/fleet.md)")
	webConfigFlag(fl, &opts.WebConfigFile)
	modeFlag(fl, &opts.Mode)
	return c
}

// complete takes the command after -- from args and checks the flags;
// execFlag is the removed --exec.
func (o *watchOptions) complete(cmd *cobra.Command, args []string, execFlag bool) error {
	if dash := cmd.ArgsLenAtDash(); dash > 0 {
		return flagErrorf("unexpected argument %q: put the command after --", args[0])
	} else if dash < 0 && len(args) > 0 {
		return flagErrorf("unexpected argument %q: put the command after -- (memdiag watch -- CMD ARGS)", args[0])
	}
	if len(args) > 0 {
		o.Command = args
	}
	// --keep-cmdline is the older name of --no-redact.
	o.KeepCmdline = o.KeepCmdline || o.F.NoRedact
	if execFlag {
		// --exec said what "-- CMD" alone already does.
		return flagErrorf("--exec was removed: the command after -- is always run, and the recording stops when it exits; drop --exec (memdiag watch -- CMD ARGS)")
	}
	if o.Duration < 0 {
		return flagErrorf("--duration must not be negative")
	}
	if o.TopN < 0 {
		return flagErrorf("--top must not be negative")
	}
	if o.Out == "off" || o.Out == "none" {
		// gate's --out off means no recording; watch's summary
		// and verdict are read back from its recording, so it
		// always writes one rather than a file named "off".
		return flagErrorf("--out %s: watch always records (its summary is analyzed from the recording); give a file name (./%s for a file of that name)", o.Out, o.Out)
	}
	if err := checkWebConfig(o.ListenAddr, o.WebConfigFile); err != nil {
		return err
	}
	return o.checkEventsAndStall()
}

// samplingFlags adds the flags watch and record share: what is sampled
// and how often; header is where --no-timers leaves the jobs out of,
// victimHelp --victim's help (record has no --probe to find it from).
func (o *watchOptions) samplingFlags(fl *pflag.FlagSet, header, victimHelp string) {
	fl.DurationVar(&o.Interval, "interval", time.Second, "time between samples (at least 10ms)")
	flagvalue.MinDuration(fl, "interval", 10*time.Millisecond)
	fl.StringVar(&o.Cgroup, "cgroup", "", helptext.CgroupRecordFlag)
	fl.StringVar(&o.Victim, "victim", "", victimHelp)
	fl.IntVar(&o.TopN, "top", 10, "processes kept per sample, by I/O in the interval")
	fl.BoolVar(&o.AllDevices, "all-devices", false, "also record partitions and loop, ram and zram devices")
	fl.BoolVar(&o.NoTimers, "no-timers", false, "do not store the host's periodic jobs in the "+header)
	fl.StringVar(&o.Events, "events", "auto", "process exec/exit events with exit I/O from the kernel: auto, on or off (off: poll /proc only)")
	fl.StringVar(&o.EBPF, "ebpf", "auto", helptext.EBPFFlag)
	fl.DurationVar(&o.StallThreshold, "stall-threshold", 100*time.Millisecond, "record a stall onset when PSI memory some reaches this much stall within --stall-window (0: off)")
	fl.DurationVar(&o.StallWindow, "stall-window", time.Second, "moving window of --stall-threshold (500ms..10s)")
}

// checkEventsAndStall is session.Options.CheckModes of o's flags.
func (o *watchOptions) checkEventsAndStall() error {
	if err := o.CheckModes(); err != nil {
		return &usageError{Err: errors.Unwrap(err)}
	}
	return nil
}

// sessionOptions are the session.Options of o's flags with the
// factory's root, clock, logger and streams, and the JMeter columns read
// when latency is measured.
func (o *watchOptions) sessionOptions() (session.Options, error) {
	f := o.F
	so := o.Options
	so.Root, so.Now, so.Logger, so.Version = f.Root, f.Now, f.Logger, versionString()
	so.Stdin, so.Stdout, so.Stderr = f.IO.In, f.IO.Out, f.IO.ErrOut
	if o.ProbeURL != "" || o.LatencyFile != "" {
		js, err := jmeterSave(o.LatencyColumns, o.LatencyProps)
		if err != nil {
			return so, err
		}
		so.JMeter = js
	}
	return so, nil
}

func runWatch(ctx context.Context, o *watchOptions) error {
	f := o.F
	stopProfile, err := startCPUProfile(o.CPUProfile, o.Mode)
	if err != nil {
		return err
	}
	defer stopProfile()
	if o.Out == "" {
		o.Out = record.DefaultName(f.Now())
	}
	// A closed stdout (watch | head -5) makes writes fail with EPIPE
	// instead of killing memdiag with SIGPIPE: the live rows stop, the
	// recording goes on. The wrapped command keeps the default action.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)

	// Everything that can fail on bad input fails before the first sample.
	s, err := o.startSession(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	w, abs, err := o.create()
	if err != nil {
		return err
	}
	s.SayWarnings()
	live := report.NewLiveRows(f.IO.Out, f.IO.ErrOut, s.Header, !o.Quiet, report.LiveOptions{Width: f.IO.Width(), Color: f.IO.ColorEnabled()})
	if !o.Quiet {
		live.Forecast = report.ForecastOf(s.Exporter())
	}
	s.Observe(live.Row)
	out, err := s.Run(ctx, w)
	if errors.As(err, new(*session.CommandStartError)) {
		// The same rule as gate: a command that cannot start failed
		// (exit 4), like a shell's 127. Nothing was recorded.
		os.Remove(o.Out)
		return &exitCodeError{Code: exitCommand, Err: fmt.Errorf("the wrapped command failed: %w", err)}
	} else if err != nil {
		return err
	}
	if live.Broken {
		fmt.Fprintln(f.IO.ErrOut, "memdiag: stdout was closed (broken pipe): live rows stopped after", live.Rows, "rows; the recording went on")
	}
	watchSummary(f, o.Out, abs, s.Summary, out.Err == nil && s.Summary.Samples >= 2 && !live.Broken)
	if out.Err != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("recording stopped: %w; %d of %d samples are readable in %s",
			out.Err, w.ReadBack(), w.Samples(), abs)}
	}
	if out.Command != nil && out.Command.Failed() {
		return &exitCodeError{Code: exitCommand, Err: fmt.Errorf("the wrapped command failed: %s: %s", o.Command[0], out.Command.Describe())}
	}
	return nil
}

// startSession starts watch's recording session and its /metrics
// listener (--listen).
func (o *watchOptions) startSession(ctx context.Context) (*session.Session, error) {
	so, err := o.sessionOptions()
	if err != nil {
		return nil, err
	}
	so.DelayAcctLeftover, so.Summarize = true, true
	s, err := session.Start(ctx, so)
	if err != nil {
		return nil, err
	}
	s.SayMetrics()
	return s, nil
}

// create creates the recording --out names and says where it goes.
func (o *watchOptions) create() (w *record.Writer, abs string, err error) {
	w, err = record.CreateMode(o.Out, o.Force, o.Mode)
	if err != nil {
		return nil, "", &exitCodeError{Code: exitError, Err: fmt.Errorf("cannot record: %w", err)}
	}
	abs, _ = filepath.Abs(o.Out)
	fmt.Fprintf(o.F.IO.ErrOut, "memdiag: recording to %s every %s (Ctrl-C to stop)\n", abs, o.Interval)
	return w, abs, nil
}

// webConfigFlag adds --web.config.file, the exporter-toolkit flag that
// node_exporter and the other Prometheus exporters read.
func webConfigFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "web.config.file", "", "TLS and basic auth for --listen: an exporter-toolkit web configuration file, as node_exporter reads (docs/fleet.md)")
}

// checkWebConfig refuses --web.config.file without --listen.
func checkWebConfig(listen, webConfig string) error {
	if webConfig != "" && listen == "" {
		return flagErrorf("--web.config.file needs --listen")
	}
	return nil
}

// startCPUProfile starts the hidden --cpuprofile (bench/) of watch and analyze.
var startCPUProfile = cpuprofile.Start

// watchSummary writes the end summary and, when ok (a whole recording of
// at least two samples, stdout not closed), the timeline and verdict. The
// summary lists the processes by I/O with the verdict's culprit first, so
// it is written once the recording is analysed, just before the timeline
// and verdict.
func watchSummary(f *factory, path, abs string, sm *record.Summary, ok bool) {
	summarised := false
	summary := func(res *correlate.Result) {
		so := report.SummaryOptions{TopN: 5, Width: f.IO.Width()}
		so.SetCulprit(res)
		report.WriteSummaryWith(f.IO.ErrOut, sm, abs, so)
		summarised = true
	}
	if !ok {
		summary(nil)
		return
	}
	err := watchVerdict(f, path, func(res *correlate.Result) { summary(res); fmt.Fprintln(f.IO.Out) })
	if !summarised {
		summary(nil)
	}
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "memdiag: analysing the recording: %v\n", err)
	}
}

// watchVerdict prints the timeline and verdict of the recording just
// written, exactly as `memdiag analyze FILE` with its default flags would:
// the options come from the analyze command itself, so they cannot drift.
// before, if not nil, sees the analysis before it is printed.
func watchVerdict(f *factory, path string, before func(*correlate.Result)) error {
	var opts *analyzeOptions
	c := newAnalyzeCmd(f, func(o *analyzeOptions) error { opts = o; return nil })
	c.SetArgs([]string{path})
	c.SetOut(f.IO.ErrOut)
	c.SetErr(f.IO.ErrOut)
	if err := c.Execute(); err != nil {
		return err
	}
	opts.BeforeRender = before
	return runAnalyze(opts)
}
