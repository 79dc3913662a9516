// Package usage holds the one error type a package returns for a flag
// value it cannot use (--stat median, --latency-tz Mars/Base): the command
// line is wrong, not the host or the files. cmd prints it with the usage
// hint and exits 2, as it does its own flag errors (cmd/exit.go).
package usage

import "fmt"

// Error is a bad flag value; its message names the flag.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf is an *Error of fmt.Errorf(format, a...).
func Errorf(format string, a ...any) error { return &Error{Err: fmt.Errorf(format, a...)} }

// Flag is an *Error "FLAG: err".
func Flag(flag string, err error) error { return &Error{Err: fmt.Errorf("%s: %w", flag, err)} }
