package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/confirm"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/session"
	"github.com/memdiag/memdiag/timers"
)

// confirmOptions are the inputs of `memdiag confirm`.
type confirmOptions struct {
	IO       *iostreams.IOStreams
	Now      func() time.Time
	Root     string
	Location *time.Location

	// Request is what is confirmed, and how (--job or --recording, --with,
	// the load after --, --pairs, --block, --min-effect), or --restore.
	confirm.Request
	Probe         string
	ProbeInterval time.Duration
	SpikeOver     time.Duration
	State         string
	Yes           bool
	Format        format.Format

	// StdinTTY says whether stdin is a terminal (tests replace it).
	StdinTTY func() bool
	// Units connects to systemd (tests replace it); nil off the live root.
	Units func(ctx context.Context) (confirm.UnitControl, error)
}

// confirmLong is the long help of newConfirmCmd.
var confirmLong = helptext.Long("confirm")

// confirmExample is the Example section of newConfirmCmd's help.
var confirmExample = helptext.Examples("confirm")

func newConfirmCmd(f *factory, runF func(*confirmOptions) error) *cobra.Command {
	opts := &confirmOptions{IO: f.IO, Now: f.Now, Location: time.Local,
		StdinTTY: func() bool { return isatty.IsTerminal(os.Stdin.Fd()) }, Units: confirm.SystemUnits}
	cmd := &cobra.Command{
		Use:     "confirm (--job NAME... | --recording FILE) [--with FIX] -- LOAD\n  memdiag confirm --restore",
		Short:   "Prove a culprit: the load with and without the job, alternately",
		Long:    confirmLong,
		Example: confirmExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Root, opts.KeepSecrets = f.Root, f.NoRedact
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return flagErrorf("put the load command after --, e.g. memdiag confirm --job NAME -- %s", strings.Join(args, " "))
			}
			if len(args) > 0 {
				opts.Command = args
			}
			if err := opts.Check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runConfirm(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Jobs, "job", nil, "the job to hold off, by its `NAME` in memdiag timers; repeat it to hold several off together")
	fl.StringVar(&opts.Recording, "recording", "", "hold off the jobs this recording's verdict names, together (`FILE` from memdiag watch); an undecided verdict is refused: give each of its jobs with --job")
	fl.StringVar(&opts.With, "with", "", "instead of holding the job off, put this proposed fix in place for B blocks: a drop-in (`FILE` with [Service] or [Timer]) for a timer, the replacement line for a cron job")
	fl.IntVar(&opts.Pairs, "pairs", 5, "pairs of blocks (A and B); 5 is the fewest that can confirm at p ≤ 0.05")
	longDurationVar(fl, &opts.Block, "block", 0, "length of each block (at least the time between firings of the jobs held off, so each A block can see one); 0: one run of the load")
	fl.StringVar(&opts.Probe, "probe", "", "GET this `URL` during each block; its p99 latency is what is compared (without it: PSI memory stall)")
	fl.DurationVar(&opts.ProbeInterval, "probe-interval", 200*time.Millisecond, "time between probe requests")
	fl.DurationVar(&opts.SpikeOver, "spike", 0, "a probe request slower than this is a spike (default 3 × the A blocks' median)")
	fl.Float64Var(&opts.MinEffect, "min-effect", 10, "the smallest effect that matters, in percent of A")
	fl.StringVar(&opts.State, "state", confirm.DefaultStatePath, "the state `FILE` where every change is written before it is made")
	fl.BoolVar(&opts.Yes, "yes", false, "change the host without asking (needed when stdin is not a terminal)")
	fl.BoolVar(&opts.Restore, "restore", false, "undo what a killed run left in the state file, and exit")
	formatFlag(cmd, &opts.Format, format.Table, []format.Format{format.Table, format.JSON}, "")
	return cmd
}

func (o *confirmOptions) env() confirm.Env {
	env := confirm.Env{Root: o.Root}
	if filepath.Clean(o.Root) == "/" {
		env.Units = o.Units
	}
	return env
}

func runConfirm(ctx context.Context, o *confirmOptions) error {
	if o.Restore {
		return runRestore(o)
	}
	// The state file first: a killed run's changes are put back before
	// anything else is read (its held cron line is no job until then).
	st, err := confirm.OpenState(o.State, o.env(), o.Now())
	if err != nil {
		return err
	}
	st.Now = o.Now
	jobs, changes, load, err := o.prepare(ctx)
	if err != nil {
		return errors.Join(err, confirm.CloseState(ctx, st))
	}
	names := confirm.JobNames(jobs)
	blocks, _ := confirm.Plan(o.Pairs)
	exp := &confirm.Experiment{Blocks: blocks, Changes: changes, State: st, RunBlock: load.RunBlock, Undo: confirm.UndoTimeout,
		Running: confirm.JobsRunning(jobs, o.env()), SettleMax: confirm.SettleMax(o.Block),
		Waiting: confirm.SayWaiting(o.IO.ErrOut, names, len(blocks)),
		Progress: func(m confirm.Measurement) {
			fmt.Fprintf(o.IO.ErrOut, "memdiag: block %d/%d (%s) done: %s\n", m.Index+1, len(blocks), m.Arm, m.Wall.Round(time.Second/10))
		}}
	done, runErr := exp.RunAndClose(ctx, o.State)
	if runErr != nil && st.Pending() == 0 {
		// Stopped early (Ctrl-C, SIGTERM, the load failing): say that the
		// host is as it was, before the error says why it stopped.
		fmt.Fprintf(o.IO.ErrOut, "memdiag: stopped early; %s back as it was\n", english.List(names, "and"))
	}
	return o.report(names, changes, done, runErr)
}

// prepare finds the jobs, reads how to hold each off, builds the load and
// asks the user; it changes nothing.
func (o *confirmOptions) prepare(ctx context.Context) ([]timers.Job, []confirm.Change, *confirm.Load, error) {
	jobs, err := o.culprits()
	if err != nil {
		return nil, nil, nil, err
	}
	if o.With != "" && len(jobs) > 1 {
		return jobs, nil, nil, flagErrorf("--with puts one job's fix in place, and %s names %s: give the job with --job NAME",
			o.Recording, english.List(confirm.JobNames(jobs), "and"))
	}
	changes, err := confirm.PrepareAll(ctx, jobs, o.With, o.env(), o.Now())
	if err != nil {
		return jobs, changes, nil, err
	}
	load, err := o.load()
	if err != nil {
		return jobs, changes, nil, err
	}
	o.FiringGap, o.GapWhat = confirm.FiringGap(jobs, o.Now(), o.Location)
	o.WarnShortBlock(o.IO.ErrOut)
	return jobs, changes, load, o.agree(ctx, changes)
}

// culprits are the jobs to hold off, from --job or the recording's
// verdict.
func (o *confirmOptions) culprits() ([]timers.Job, error) {
	jobs, err := session.HostJobs(o.Root, false)
	if err != nil && len(jobs) == 0 {
		return nil, err
	}
	return confirm.Culprits(jobs, o.Jobs, o.Recording)
}

// agree asks before changing the host, unless --yes. Ctrl-C at the
// prompt ends the wait for an answer (exit 130).
func (o *confirmOptions) agree(ctx context.Context, cs []confirm.Change) error {
	if o.Yes {
		return nil
	}
	what := confirm.Describe(cs)
	if !o.StdinTTY() {
		return flagErrorf("memdiag confirm changes the host (%s); stdin is not a terminal to ask, so give --yes", strings.Join(what, "; "))
	}
	yes, err := confirm.Ask(ctx, o.IO.In, o.IO.ErrOut, what, o.State)
	if err != nil || yes {
		return err
	}
	return &exitCodeError{Code: exitError, Err: errors.New("nothing changed: you did not answer yes")}
}

func (o *confirmOptions) load() (*confirm.Load, error) {
	// With --format json, stdout is the report's alone: the load writes
	// to stderr.
	out := o.IO.Out
	if o.Format == format.JSON {
		out = o.IO.ErrOut
	}
	l := &confirm.Load{Command: o.Command, Block: o.Block, Stdin: os.Stdin, Stdout: out, Stderr: o.IO.ErrOut,
		ProcRoot: filepath.Join(o.Root, "proc"), Now: o.Now}
	if o.Probe != "" {
		p, err := latency.NewProbe(o.Probe, latency.ProbeOptions{Interval: o.ProbeInterval})
		if err != nil {
			return nil, flagErrorf("--probe: %v", err)
		}
		l.Probe = p
	}
	return l, nil
}

// report analyses the blocks that ran and renders the report; runErr
// (the load failing, an interruption) decides the exit code after it.
func (o *confirmOptions) report(jobs []string, cs []confirm.Change, done []confirm.Measurement, runErr error) error {
	rep := confirm.Report{Job: jobs[0], Jobs: jobs, Command: o.ShownCommand(), Block: o.Block, Pairs: o.Pairs, Fix: cs[0].Fix, FiringGap: o.FiringGap}
	rep.Change = confirm.Describe(cs)
	rep, runErr = confirm.Conclude(rep, done, runErr, confirm.Options{MinRelative: o.MinEffect / 100, SpikeOver: o.SpikeOver})
	if len(done) > 0 {
		if err := confirm.Render(o.IO.Out, rep, o.Format, o.IO.Width(), o.Location); err != nil {
			return err
		}
	}
	if errors.Is(runErr, confirm.ErrLoadFailed) {
		return &exitCodeError{Code: exitCommand, Err: runErr}
	}
	return runErr
}

func runRestore(o *confirmOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), confirm.UndoTimeout)
	defer cancel()
	_, statErr := os.Stat(o.State)
	undone, err := confirm.Restore(ctx, o.State, o.env())
	if err != nil {
		return err
	}
	confirm.WriteRestored(o.IO.Out, o.State, statErr == nil, undone, o.Location)
	return nil
}
