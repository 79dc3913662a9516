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
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/stopsig"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/internal/warnlog"
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
	ctx, stop := stopsig.Context(context.Background()) // Ctrl-C, SIGTERM, SIGHUP
	defer stop()
	return execute(ctx, f, args)
}

// onHangup, when set, is what SIGHUP does instead of ending the command
// (stopsig.Hangup): memdiag record starts a new segment.
var onHangup = &stopsig.Hangup

// execute executes the command line against f and maps the outcome to an exit
// code (see exit.go).
func execute(ctx context.Context, f *factory, args []string) int {
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	_ = f.IO.Flush()
	return exitCode(f, root, asUsage(err))
}

// asUsage makes a package's bad flag value (*usage.Error: analysis,
// timers) a *usageError, so that classify gives it exit 2 and the usage
// hint like cmd's own.
func asUsage(err error) error {
	var ue *usage.Error
	var fe *usageError
	if errors.As(err, &ue) && !errors.As(err, &fe) {
		return &usageError{Err: err}
	}
	return err
}

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
		f.Logger = slog.New(warnlog.New(f.IO.ErrOut, level))
	}
	if err := flagvalue.CheckDurations(cmd.Flags()); err != nil {
		return &usageError{Err: err}
	}
	if msg := flagvalue.GivenModeWarning(cmd.Flags()); msg != "" {
		fmt.Fprintf(f.IO.ErrOut, "memdiag: warning: %s\n", msg)
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
		Long:          helptext.Long("memdiag"),
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
	wrapFlagHelp(root, f)
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

// wrapFlagHelp makes root's usage template wrap flag descriptions to the
// terminal, 80 columns when stdout is not one (cobra prints each on one
// line, up to 548 columns, and pflag's own wrapping stops at the first
// word longer than a line).
func wrapFlagHelp(root *cobra.Command, f *factory) {
	helpFactory.Store(root, f)
	addWrapFlags.Do(func() {
		// cobra's template functions are global: one function for every
		// root, each finding its own factory (tests make many roots at
		// once).
		cobra.AddTemplateFunc("wrapFlags", func(c *cobra.Command, fs *pflag.FlagSet) string {
			w := 0
			if f, ok := helpFactory.Load(c.Root()); ok {
				w = f.(*factory).IO.Width()
			}
			if w <= 0 {
				w = 80
			}
			return helptext.WrapFlagUsages(fs.FlagUsagesWrapped(0), w)
		})
	})
	root.SetUsageTemplate(strings.NewReplacer(
		".LocalFlags.FlagUsages", "wrapFlags $ .LocalFlags",
		".InheritedFlags.FlagUsages", "wrapFlags $ .InheritedFlags").Replace(root.UsageTemplate()))
}

var (
	// addWrapFlags adds the wrapFlags template function once.
	addWrapFlags sync.Once
	// helpFactory is the factory of each root command (*cobra.Command →
	// *factory), whose terminal width its flag help is wrapped to.
	helpFactory sync.Map
)
