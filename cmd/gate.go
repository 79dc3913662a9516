package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/outfile"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/report/gatereport"
	"github.com/memdiag/memdiag/session"
)

// gateOptions are the inputs of `memdiag gate`.
type gateOptions struct {
	IO       *iostreams.IOStreams
	Getenv   func(string) string // GITHUB_STEP_SUMMARY
	Location *time.Location      // zone of the times in reports
	// Options are the live run's session settings, bound to gate's flags
	// (--interval, --duration, --cgroup, --victim, the command after
	// --); RunE adds the factory's root, clock, logger and --no-redact
	// (KeepCmdline), runGate the version and streams.
	session.Options
	// Judging holds --suspect-psi, --out (the recording of a sampled
	// run, "off": none, so that `memdiag analyze` can explain a red gate
	// later), --mode (of --out, --output and --junit) and
	// --abort-on-fail; runGate reads its Thresholds from Exprs and
	// ThresholdsFile.
	session.Judging

	Exprs          []string // --threshold EXPR, in order
	ThresholdsFile string
	Recording      string
	// MoreRecordings are the --recording values after the first (segments,
	// store directories), judged with it as one recording; From and To
	// keep a window of them.
	MoreRecordings []string
	From, To       string
	Format         format.Format
	Output         string
	JUnit          string
	Force          bool // --force: --output and --junit may overwrite existing files
	// ExitCode is whose exit code gate ends with when no threshold
	// failed: "memdiag" (4 when the command failed) or "command" (the
	// command's own).
	ExitCode string
}

// gateLong is the long help of newGateCmd; its %[N]d are the exit codes.
var gateLong = fmt.Sprintf(helptext.Long("gate"), exitOK, exitBreach, exitCommand, exitEnv, exitUsage, exitError, exitInterrupt)

// gateExample is the Example section of newGateCmd's help.
var gateExample = helptext.Examples("gate")

func newGateCmd(f *factory, runF func(*gateOptions) error) *cobra.Command {
	opts := &gateOptions{IO: f.IO, Getenv: os.Getenv, Location: time.Local}
	cmd := &cobra.Command{
		Use:     "gate -t EXPR... (-- CMD... | --duration D | --recording FILE)",
		Short:   "Fail a CI job when memory pressure crosses a threshold",
		Long:    gateLong,
		Example: gateExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Root, opts.Now, opts.Logger, opts.KeepCmdline = f.Root, f.Now, f.Logger, f.NoRedact
			if err := opts.complete(cmd, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runGate(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Exprs, "threshold", "t", nil, "threshold `EXPR`, e.g. 'memory.full.stall<1%' (repeatable)")
	fl.StringVar(&opts.ThresholdsFile, "thresholds", "", "read thresholds from a YAML or JSON `FILE` (a list, or a \"thresholds\" list; a regular file or a pipe, at most 1 MiB)")
	fl.DurationVar(&opts.Interval, "interval", time.Second, "sampling interval (at least 10ms)")
	flagvalue.MinDuration(fl, "interval", 10*time.Millisecond)
	longDurationVar(fl, &opts.Duration, "duration", 0, "sample for this long instead of wrapping a command, e.g. 5m, 2h, 1d")
	fl.Var(flagvalue.Paths{First: &opts.Recording, Rest: &opts.MoreRecordings}, "recording", "judge this recording (from memdiag watch), or store directory of memdiag record, instead of sampling; repeat it for several segments")
	windowFlags(fl, &opts.From, &opts.To, "--recording")
	fl.StringVar(&opts.Cgroup, "cgroup", "", "judge this cgroup v2 group instead of the host: "+helptext.CgroupValue)
	fl.StringVar(&opts.Victim, "victim", "", "judge the cgroup of this `PID`, UNIT (web.service) or CGROUP instead of the host (recorded as the victim)")
	formatFlag(cmd, &opts.Format, format.Table, gate.Formats, "")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the report to `FILE` instead of stdout")
	fl.StringVar(&opts.Out, "out", "", "record the sampled run to `FILE` for memdiag analyze (default memdiag-YYYYMMDD-HHMMSS.jsonl.gz here, as watch; off: no recording)")
	fl.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	modeFlag(fl, &opts.Mode)
	forceFlag(fl, &opts.Force, "--output and --junit")
	fl.BoolVar(&opts.AbortOnFail, "abort-on-fail", false, "stop the wrapped command (SIGTERM, as on Ctrl-C) as soon as a threshold is breached over the run so far, then judge the run (k6's abortOnFail)")
	fl.StringVar(&opts.ExitCode, "exit-code", "memdiag", fmt.Sprintf("when no threshold failed, exit with memdiag's code (memdiag: %d when the command failed) or the wrapped command's own (command); a breach still exits %d", exitCommand, exitBreach))
	fl.Var(&opts.Suspect, "suspect-psi", "what to do when the judged PSI contradicts itself (averages against total, stall with no reclaim/refault/swap activity): warn (judge, and say so in every format), fail (thresholds on that PSI are not judged: exit 5), ignore")
	return cmd
}

// complete takes the command after -- from args and checks that one
// way of judging is given, with what it needs.
func (o *gateOptions) complete(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.ArgsLenAtDash() != 0 {
			return flagErrorf("put the command to wrap after --, e.g. memdiag gate --threshold 'memory.full.stall<1%%' -- %s", strings.Join(args, " "))
		}
		o.Command = args
	}
	modes := 0
	for _, on := range []bool{len(o.Command) > 0, cmd.Flags().Changed("duration"), o.Recording != ""} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return flagErrorf("give exactly one of: a command after --, --duration, or --recording")
	}
	if cmd.Flags().Changed("duration") && o.Duration <= 0 {
		return flagErrorf("--duration must be positive")
	}
	if o.Recording == "" && (o.From != "" || o.To != "") {
		return flagErrorf("--from and --to apply to --recording only")
	}
	if o.Recording != "" && (o.Cgroup != "" || o.Victim != "") {
		return flagErrorf("--cgroup and --victim do not apply to --recording: a recording is judged in the scope it was made in")
	}
	if (o.AbortOnFail || cmd.Flags().Changed("exit-code")) && len(o.Command) == 0 {
		return flagErrorf("--abort-on-fail and --exit-code apply to a command after -- only")
	}
	if o.ExitCode != "memdiag" && o.ExitCode != "command" {
		return flagErrorf("--exit-code %q: want memdiag or command", o.ExitCode)
	}
	if len(o.Exprs) == 0 && o.ThresholdsFile == "" {
		return flagErrorf("no thresholds: give --threshold EXPR (e.g. 'memory.full.stall<1%%') or --thresholds FILE")
	}
	return nil
}

func runGate(ctx context.Context, opts *gateOptions) error {
	if err := rootfs.OneStdin([]string{"--recording", "--thresholds"}, opts.Recording, opts.ThresholdsFile); err != nil {
		return err
	}
	// Refused before the run, not after a load test of an hour.
	if err := checkOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	if err := outfile.Check("--junit", opts.JUnit, opts.Force); err != nil {
		return err
	}
	var err error
	if opts.Thresholds, err = gate.Load(ctx, opts.IO.In, opts.Exprs, opts.ThresholdsFile); err != nil {
		return err
	}

	if opts.Recording != "" {
		rep, err := judgeRecording(ctx, opts)
		if err != nil {
			return err
		}
		return writeGateReport(opts, rep)
	}
	so := opts.Options
	so.Version, so.Stdin, so.Stdout, so.Stderr = versionString(), opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	rep, err := session.JudgeLive(ctx, so, opts.Judging)
	if err != nil {
		// A failed preflight's report is still written (JUnit, step
		// summary, annotations) so CI shows why; the exit is 5.
		if rep != nil {
			if werr := writeGateReport(opts, rep); werr != nil && !isExitCode(werr, exitEnv) {
				return werr
			}
		}
		return err
	}
	return writeGateReport(opts, rep)
}

// judgeRecording reads --recording (one file, or segments and store
// directories joined within --from/--to) and judges it, each breach
// beside the culprit analyze credits at its worst moment.
func judgeRecording(ctx context.Context, opts *gateOptions) (*gate.Report, error) {
	in := analysis.Input{Paths: append([]string{opts.Recording}, opts.MoreRecordings...), From: opts.From, To: opts.To}
	rec, err := in.Read(ctx, opts.IO, "--recording")
	if err != nil {
		return nil, err
	}
	rep, err := gate.JudgeRecording(rec, opts.Recording, opts.Thresholds, opts.Suspect)
	if err == nil {
		gate.NoteCulprits(rep, analysis.Verdict(rec))
	}
	return rep, err
}

// gateExit is the exit code of each outcome of a judged run.
var gateExit = map[gate.Outcome]int{gate.OutcomePass: exitOK, gate.OutcomeCommandFailed: exitCommand, gate.OutcomeNoData: exitEnv, gate.OutcomeBreach: exitBreach}

// writeGateReport writes the report, the JUnit file and the GitHub step
// summary, and maps the outcome to an exit code.
func writeGateReport(opts *gateOptions, rep *gate.Report) error {
	if err := writeGateFiles(opts, rep); err != nil {
		return err
	}
	oc := rep.Outcome()
	if opts.ExitCode == "command" {
		// The command's failure is passed through, not judged: the
		// thresholds decide.
		oc = rep.ThresholdOutcome()
		if oc == gate.OutcomePass && rep.Command != nil {
			// The command's own code, as if memdiag were not there;
			// 127 when it could not start (as a shell says).
			if c := rep.Command.ExitCode; c != 0 {
				return &exitCodeError{Code: c, Err: fmt.Errorf("the wrapped command %s (--exit-code command)", gatereport.CommandText(rep.Command))}
			}
			return nil
		}
	}
	if code := gateExit[oc]; code != exitOK {
		return &exitCodeError{Code: code, Err: errors.New(gatereport.OutcomeAs(rep, oc))}
	}
	return nil
}

// writeGateFiles writes the report (--output or stdout), --junit and the
// markdown step summary GITHUB_STEP_SUMMARY names.
func writeGateFiles(opts *gateOptions, rep *gate.Report) error {
	return gatereport.Outputs{
		Stdout: opts.IO.Out, Format: opts.Format, Output: opts.Output, JUnit: opts.JUnit, Mode: opts.Mode, Force: opts.Force,
		Render:      gatereport.RenderOptions{Location: opts.Location, Width: opts.IO.Width(), Color: opts.IO.ColorEnabled()},
		StepSummary: opts.Getenv("GITHUB_STEP_SUMMARY"),
	}.Write(rep)
}

func isExitCode(err error, code int) bool {
	var ce *exitCodeError
	return errors.As(err, &ce) && ce.Code == code
}
