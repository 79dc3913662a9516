package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, one meaning each. `memdiag gate` documents its own in its help.
const (
	ExitOK        = 0 // success (gate: every threshold held)
	ExitError     = 1 // runtime failure; `timers --strict` with problems
	ExitUsage     = 2 // bad flags or arguments
	ExitBreach    = 3 // gate: a threshold was breached
	ExitCommand   = 4 // gate/watch --exec: the wrapped command failed (its own code is printed)
	ExitEnv       = 5 // environment: a needed kernel feature or file is missing (no PSI, unreadable cgroup)
	ExitInterrupt = 130
)

// FlagError is a usage problem: the message is followed by the usage line.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// flagErrorf builds a *FlagError.
func flagErrorf(format string, a ...any) error { return &FlagError{Err: fmt.Errorf(format, a...)} }

// ExitCodeError ends the process with Code after printing Err, if any.
type ExitCodeError struct {
	Code int
	Err  error // nil: nothing more to print
}

func (e *ExitCodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitCodeError) Unwrap() error { return e.Err }

// exitCode maps an error to the process exit code, printing it once.
func exitCode(f *Factory, root *cobra.Command, err error) int {
	if err == nil {
		return ExitOK
	}
	var fe *FlagError
	var ce *ExitCodeError
	switch {
	case errors.As(err, &ce):
		if ce.Err != nil {
			fmt.Fprintln(f.IO.ErrOut, "memdiag:", ce.Err)
		}
		return ce.Code
	case errors.As(err, &fe):
		fmt.Fprintln(f.IO.ErrOut, "memdiag:", fe.Err)
		fmt.Fprintln(f.IO.ErrOut, "Run 'memdiag --help' or 'memdiag <command> --help' for usage.")
		return ExitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(f.IO.ErrOut, "memdiag: interrupted")
		return ExitInterrupt
	default:
		// cobra reports unknown commands and missing arguments as plain errors.
		fmt.Fprintln(f.IO.ErrOut, "memdiag:", err)
		return ExitError
	}
}

// noArgs is cobra.NoArgs whose error is a usage error (exit 2, with the
// usage hint), like a bad flag.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &FlagError{Err: fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " "))}
	}
	return nil
}

// exactArgs is cobra.ExactArgs whose error is a usage error (exit 2, with
// the usage hint), like a bad flag.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return &FlagError{Err: fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
		}
		return nil
	}
}
