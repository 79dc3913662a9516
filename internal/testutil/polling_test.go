package testutil

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// TestPollingOnStdinRead: a read of rootfs.Stdin on a silent pipe and
// terminal, in this process, is seen waiting on that descriptor and on
// no other; after ctx's end it is not.
func TestPollingOnStdinRead(t *testing.T) {
	other, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for name, f := range SilentStdins(t) {
		t.Run(name, func(t *testing.T) {
			fd := FdOf(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := rootfs.Stdin(ctx, f, 1<<20)
			defer r.Close()
			done := make(chan error, 1)
			go func() {
				_, err := r.Read(make([]byte, 64))
				done <- err
			}()
			WaitPollingOn(t, os.Getpid(), fd, 2*time.Minute, nil)
			if ok, err := PollingOn(os.Getpid(), FdOf(t, other)); ok || err != nil {
				t.Errorf("PollingOn(self, %s) = %v, %v while the read waits on fd %d; want false", os.DevNull, ok, err, fd)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("read after cancel: %v", err)
			}
			if ok, err := PollingOn(os.Getpid(), fd); ok || err != nil {
				t.Errorf("PollingOn(self, %d) = %v, %v after the read ended; want false", fd, ok, err)
			}
		})
	}
}

// TestPollingOnNoProcess: a PID above the kernel's largest (pid_max is
// at most 4194304, 2^22) is no process.
func TestPollingOnNoProcess(t *testing.T) {
	if ok, err := PollingOn(1<<30, 0); ok || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("PollingOn(2^30, 0) = %v, %v; want false, fs.ErrNotExist", ok, err)
	}
}
