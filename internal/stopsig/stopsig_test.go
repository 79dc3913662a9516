package stopsig

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// SIGTERM to this process ends the context with an *Error naming it,
// which counts as context.Canceled; SIGHUP with Hangup set does not end
// it but calls Hangup.
func TestContext(t *testing.T) {
	ctx, stop := Context(context.Background())
	defer stop()
	hup := make(chan struct{}, 1)
	h := func() { hup <- struct{}{} }
	Hangup.Store(&h)
	defer Hangup.Store(nil)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hup:
	case <-time.After(2 * time.Minute): // a hang bound: at once unless starved of CPU
		t.Fatal("SIGHUP did not call Hangup")
	}
	if ctx.Err() != nil {
		t.Fatalf("SIGHUP with Hangup set ended the context: %v", context.Cause(ctx))
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("SIGTERM did not end the context")
	}
	var se *Error
	cause := context.Cause(ctx)
	if !errors.As(cause, &se) || se.Signal != syscall.SIGTERM || !errors.Is(cause, context.Canceled) || cause.Error() != "interrupted by SIGTERM" {
		t.Errorf("cause = %T %v", cause, cause)
	}
}

// TestContextAgain: the first signal ends the context; its cause's Again
// is closed by the second (a second Ctrl-C), not before.
func TestContextAgain(t *testing.T) {
	ctx, stop := Context(context.Background())
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Minute): // a hang's bound
		t.Fatal("SIGINT did not end the context")
	}
	var se *Error
	if !errors.As(context.Cause(ctx), &se) || se.Signal != syscall.SIGINT {
		t.Fatalf("cause %v, want an *Error of SIGINT", context.Cause(ctx))
	}
	select {
	case <-se.Again():
		t.Fatal("Again closed before a second signal")
	default:
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-se.Again():
	case <-time.After(2 * time.Minute):
		t.Fatal("a second SIGINT did not close Again")
	}
}
