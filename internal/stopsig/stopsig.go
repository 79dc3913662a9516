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
	"sync"
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
type Error struct {
	Signal syscall.Signal
	again  chan struct{} // closed by the next of Signals
}

func (e *Error) Error() string        { return "interrupted by " + unix.SignalName(e.Signal) }
func (e *Error) Is(target error) bool { return target == context.Canceled }

// StopSignal is the signal, for session.StoppedBy.
func (e *Error) StopSignal() syscall.Signal { return e.Signal }

// Again is closed when one of Signals comes after the first (a second
// Ctrl-C: stop now whatever is being waited for); nil for an Error not
// made by Context.
func (e *Error) Again() <-chan struct{} { return e.again }

// Context returns a context cancelled by the first of Signals, with an
// *Error as its cause (context.Cause), and the func that stops listening.
func Context(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{}) // closed by the func returned
	var stopOnce sync.Once
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, Signals...)
	go func() {
		var first *Error
		ended := ctx.Done()
		for {
			select {
			case sig := <-ch:
				if h := Hangup.Load(); sig == syscall.SIGHUP && h != nil {
					(*h)() // memdiag record: start a new segment, go on
					continue
				}
				if first != nil {
					close(first.again) // the second: Again
					return
				}
				first = &Error{Signal: sig.(syscall.Signal), again: make(chan struct{})}
				cancel(first)
				ended = nil // listen for a second until stop is called
			case <-ended: // the parent ended
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil); stopOnce.Do(func() { close(done) }) }
}
