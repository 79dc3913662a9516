// Package stopsig ends a memdiag command the way Ctrl-C does, on any of
// the signals that mean "stop": watch takes its final sample, writes the
// end line and the summary; gate stops the command it wraps. A terminal
// closing (SIGHUP) and a service manager or CI timeout (SIGTERM) are ends
// like any other, except where a command asks for SIGHUP itself
// ([Hangup]: memdiag record starts a new segment).
package stopsig

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Signals end every command.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Hangup, when set, is what SIGHUP does instead of ending the command:
// `memdiag record` reopens (starts a new segment) and goes on, as daemons
// do on SIGHUP.
var Hangup atomic.Pointer[func()]

// Error is the cause of a run ended by a signal. It is a
// context.Canceled, so an interrupted command exits 130.
type Error struct{ Signal syscall.Signal }

func (e *Error) Error() string        { return "interrupted by " + unix.SignalName(e.Signal) }
func (e *Error) Is(target error) bool { return target == context.Canceled }

// StopSignal is the signal, for session.StoppedBy.
func (e *Error) StopSignal() syscall.Signal { return e.Signal }

// Context returns a context cancelled by the first of Signals, with an
// *Error as its cause (context.Cause), and the func that stops listening.
func Context(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, Signals...)
	go func() {
		for {
			select {
			case sig := <-ch:
				if h := Hangup.Load(); sig == syscall.SIGHUP && h != nil {
					(*h)() // memdiag record: start a new segment, go on
					continue
				}
				cancel(&Error{Signal: sig.(syscall.Signal)})
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}
