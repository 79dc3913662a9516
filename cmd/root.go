// Package cmd holds memdiag's cobra commands: flags, wiring and exit codes
// only. Anything another package's test would want to call lives in that
// package.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// factory carries what every command needs and tests replace.
type factory struct {
	IO     *iostreams.IOStreams
	Now    func() time.Time
	Logger *slog.Logger
	// Root is the filesystem root collectors and inventories read
	// (--root); "/" on a live host, a fixture tree in tests.
	Root string
	// NoRedact (--no-redact) turns memdiag's one redaction policy
	// (package redact) off: command lines, job commands, the probe URL
	// and error messages are written as they are.
	NoRedact bool
}

// Main runs memdiag with args (without the program name) on the real
// terminal and returns the process exit code.
func Main(args []string) int {
	f := &factory{IO: iostreams.System(), Now: time.Now, Root: "/"}
	ctx, stop := stopOnSignal(context.Background())
	defer stop()
	return execute(ctx, f, args)
}

// stopSignals end every command the way Ctrl-C does: watch takes its
// final sample, writes the end line and the summary; gate stops the
// command it wraps. A terminal closing (SIGHUP) and a service manager or
// CI timeout (SIGTERM) are ends like any other.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopOnSignal returns a context cancelled by the first of stopSignals,
// with a *signalError as its cause (context.Cause).
func stopOnSignal(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	go func() {
		for {
			select {
			case sig := <-ch:
				if h := onHangup.Load(); sig == syscall.SIGHUP && h != nil {
					(*h)() // memdiag record: start a new segment, go on
					continue
				}
				cancel(&signalError{Signal: sig.(syscall.Signal)})
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// onHangup, when set, is what SIGHUP does instead of ending the command:
// `memdiag record` reopens (starts a new segment) and goes on, as daemons
// do on SIGHUP.
var onHangup atomic.Pointer[func()]

// signalError is the cause of a run ended by a signal. It is a
// context.Canceled, so an interrupted command exits 130.
type signalError struct{ Signal syscall.Signal }

func (e *signalError) Error() string        { return "interrupted by " + unix.SignalName(e.Signal) }
func (e *signalError) Is(target error) bool { return target == context.Canceled }

// StopSignal is the signal, for session.StoppedBy.
func (e *signalError) StopSignal() syscall.Signal { return e.Signal }

// execute executes the command line against f and maps the outcome to an exit
// code (see exit.go).
func execute(ctx context.Context, f *factory, args []string) int {
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	_ = f.IO.Flush()
	return exitCode(f, root, err)
}

// rootLong is the long help of newRootCmd.
var rootLong = heredoc.Doc(`
	memdiag records the kernel's memory-pressure signals — PSI, the file LRU
	(page cache), reclaim and refaults, swap, disk I/O per device and per
	process — lines latency spikes up with them and with every periodic job
	on the host (systemd timers, cron, anacron), and names the culprit.

	Typical use during a load test:
	  memdiag timers                                     every periodic job and its next firings
	  memdiag watch --out run.jsonl -- ./load-test.sh    record while the test runs
	  memdiag analyze run.jsonl                          timeline table and verdict
	  memdiag compare before.jsonl after.jsonl           before/after a change
	  memdiag mem                                        what holds memory, who was OOM-killed
	  memdiag gate -t 'memory.full.stall<1%' -- ./load-test.sh
	                                                     fail CI on memory pressure
`)

// setUp runs before every command: colour, paragraph wrapping, the
// logger (--debug), duration flags and --root.
func setUp(cmd *cobra.Command, f *factory, noColor, debug bool) error {
	if noColor {
		f.IO.DisableColor()
	}
	f.IO.WrapParagraphs()
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	if f.Logger == nil {
		f.Logger = slog.New(newWarnHandler(f.IO.ErrOut, level))
	}
	if err := checkDurations(cmd); err != nil {
		return err
	}
	if cmd.Flags().Changed("root") {
		if _, err := os.Stat(f.Root); err != nil {
			return inputError("--root", f.Root, err)
		}
	}
	return nil
}

// newRootCmd builds the command tree.
func newRootCmd(f *factory) *cobra.Command {
	var noColor, debug bool
	root := &cobra.Command{
		Use:           "memdiag <command> [flags]",
		Short:         "Find why latency spikes under memory pressure, and which periodic job causes it",
		Long:          rootLong,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       versionLine(),
		// Suggest "analyze" for "analyse" (cobra sets 2 only for its own message).
		SuggestionsMinimumDistance: 2,
		// The root takes no arguments: a word that is not a command is a
		// usage error (exit 2), like an unknown flag.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += fmt.Sprintf("; did you mean %q?", s[0])
				}
				return &usageError{Err: errors.New(msg)}
			}
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return setUp(cmd, f, noColor, debug)
		},
	}
	root.SetVersionTemplate("memdiag {{.Version}}\n")
	root.PersistentFlags().BoolVar(&noColor, "no-color", false, "never use colour (also: NO_COLOR set in the environment)")
	root.PersistentFlags().BoolVar(&debug, "debug", false, "log debug messages to stderr")
	root.PersistentFlags().BoolVar(&f.NoRedact, "no-redact", false, "write secrets in command lines, job commands, URLs and errors as they are (default: replaced by ***)")
	root.PersistentFlags().StringVar(&f.Root, "root", f.Root, "filesystem root to read /proc, /sys and /etc from (a fixture tree or a mounted host)")
	root.SetFlagErrorFunc(flagError)

	// Every command, in one place (as cli/cli's root.go lists them).
	root.AddCommand(
		newWatchCmd(f, nil),
		newRecordCmd(f, nil),
		newAnalyzeCmd(f, nil),
		newCompareCmd(f, nil),
		newGateCmd(f, nil),
		newMemCmd(f, nil),
		newTimersCmd(f, nil),
		newConfirmCmd(f, nil),
		newVersionCmd(f),
		newManCmd(f),
	)
	addCompletionCheck(root)
	return root
}

// addCompletionCheck makes cobra's default completion command reject a
// shell it has no script for (`memdiag completion tcsh`) as a usage error
// naming the shells it has; cobra alone prints the help and exits 0.
func addCompletionCheck(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sh := range c.Commands() {
			shells = append(shells, sh.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return flagErrorf("completion: unknown shell %q; want one of %s", args[0], strings.Join(shells, ", "))
		}
	}
}
