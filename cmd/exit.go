package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/redact"
	"github.com/memdiag/memdiag/session"
)

// Exit codes, one meaning each. `memdiag gate` documents its own in its help.
const (
	exitOK        = 0 // success (gate: every threshold held)
	exitError     = 1 // runtime failure; `timers --strict` with problems
	exitUsage     = 2 // bad flags or arguments
	exitBreach    = 3 // gate: a threshold was breached
	exitCommand   = 4 // gate/watch -- CMD: the wrapped command failed (its own code is printed)
	exitEnv       = 5 // environment: a needed kernel feature or file is missing (no PSI, unreadable cgroup)
	exitInterrupt = 130
)

// usageError is a usage problem: the message is followed by the usage line.
type usageError struct{ Err error }

func (e *usageError) Error() string { return e.Err.Error() }
func (e *usageError) Unwrap() error { return e.Err }

// flagErrorf builds a *usageError.
func flagErrorf(format string, a ...any) error { return &usageError{Err: fmt.Errorf(format, a...)} }

// exitCodeError ends the process with Code after printing Err, if any.
type exitCodeError struct {
	Code int
	Err  error // nil: nothing more to print
}

func (e *exitCodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.Err }

// exitCode maps an error to the process exit code, printing it once.
func exitCode(f *factory, root *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	code, msg := classify(err)
	if !f.NoRedact {
		// An error may quote a command line, a crontab line or a URL.
		msg = redact.String(msg)
	}
	if msg != "" {
		fmt.Fprintln(f.IO.ErrOut, "memdiag:", msg)
	}
	if code == exitUsage {
		fmt.Fprintln(f.IO.ErrOut, "Run 'memdiag --help' or 'memdiag <command> --help' for usage.")
	}
	return code
}

// classify is memdiag's one table from an error to an exit code, and the
// message to print ("" for none). The first kind in err's chain wins, in
// this order:
//
//	*exitCodeError       its Code (gate's breach 3, a wrapped command 4, ...)
//	*usageError           2  usage: bad flag, value or argument, unknown command
//	*session.UsageError   2  the same, found while wiring a recording session
//	*hostenv.Unavailable 5  environment: a kernel feature, file or privilege
//	                        the host lacks (no PSI, not a cgroup v2 directory)
//	context.Canceled     130 interrupted
//	anything else        1  runtime error, including a file the user named
//	                        that cannot be read (*inputFileError)
func classify(err error) (code int, msg string) {
	var fe *usageError
	var se *session.UsageError
	var ce *exitCodeError
	switch {
	case errors.As(err, &ce):
		if ce.Err != nil {
			msg = ce.Err.Error()
		}
		return ce.Code, msg
	case errors.As(err, &fe):
		return exitUsage, fe.Err.Error()
	case errors.As(err, &se):
		return exitUsage, se.Err.Error()
	case hostenv.As(err) != nil:
		return exitEnv, err.Error()
	case errors.Is(err, context.Canceled):
		return exitInterrupt, "interrupted"
	default:
		return exitError, err.Error()
	}
}

// noArgs is cobra.NoArgs whose error is a usage error (exit 2, with the
// usage hint), like a bad flag.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{Err: fmt.Errorf("%s takes no arguments, got %q", subPath(cmd), strings.Join(args, " "))}
	}
	return nil
}

// exactArgs is cobra.ExactArgs whose error is a usage error (exit 2, with
// the usage hint), like a bad flag.
func exactArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.ExactArgs(n)) }

// minArgs is cobra.MinimumNArgs whose error is a usage error (exit 2, with
// the usage hint), like a bad flag.
func minArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.MinimumNArgs(n)) }

// usageArgs makes check's error a usage error naming the command.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{Err: fmt.Errorf("%s: %w", subPath(cmd), err)}
		}
		return nil
	}
}

// subPath is the command's path without the program's name ("analyze",
// "gate"), since exitCode already prefixes every message with "memdiag:".
func subPath(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}
