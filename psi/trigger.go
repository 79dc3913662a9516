package psi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// trigger is a PSI trigger: the kernel wakes a poller with POLLPRI as soon
// as the stall time of one kind ("some" or "full") reaches Stall within a
// moving Window, so the onset of a stall is known to the millisecond
// instead of being averaged into a sampling interval.
//
// Source: https://docs.kernel.org/accounting/psi.html ("Monitoring for
// pressure thresholds"). The window must be 500 ms to 10 s; unprivileged
// users may create triggers only on kernels >= 6.5 and only with windows
// that are multiples of 2 s. The kernel fires a trigger at most once per
// window.
type trigger struct {
	Path   string        // the pressure file: /proc/pressure/memory or <cgroup>/memory.pressure
	Kind   string        // "some" or "full"
	Stall  time.Duration // threshold within Window
	Window time.Duration
	f      *os.File
}

// newTrigger registers a trigger on path. A kernel or privilege that does
// not allow it yields an *UnavailableError saying why.
func newTrigger(path, kind string, stall, window time.Duration) (*trigger, error) {
	if kind != "some" && kind != "full" {
		return nil, fmt.Errorf("psi trigger: kind %q: want some or full", kind)
	}
	if window < 500*time.Millisecond || window > 10*time.Second {
		return nil, fmt.Errorf("psi trigger: window %s out of the kernel's range 500ms..10s", window)
	}
	if stall <= 0 || stall > window {
		return nil, fmt.Errorf("psi trigger: stall %s must be in (0, window %s]", stall, window)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &UnavailableError{Path: path, Need: "pressure stall information (kernel >= 4.20 with CONFIG_PSI=y)", Err: err}
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, &UnavailableError{Path: path, Need: "permission to create PSI triggers",
				Hint: "run as root, or use kernel >= 6.5 where unprivileged triggers with 2 s windows are allowed", Err: err}
		}
		return nil, err
	}
	spec := fmt.Sprintf("%s %d %d", kind, stall.Microseconds(), window.Microseconds())
	if _, err := f.Write(append([]byte(spec), 0)); err != nil {
		f.Close()
		hint := "check the threshold and window"
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			hint = "unprivileged triggers need kernel >= 6.5 and a window that is a multiple of 2 s; run as root"
		}
		return nil, &UnavailableError{Path: path, Need: "a PSI trigger \"" + spec + "\": " + err.Error(), Hint: hint, Err: err}
	}
	return &trigger{Path: path, Kind: kind, Stall: stall, Window: window, f: f}, nil
}

// Spec is the trigger as written to the kernel ("some 150000 1000000").
func (t *trigger) Spec() string {
	return fmt.Sprintf("%s %d %d", t.Kind, t.Stall.Microseconds(), t.Window.Microseconds())
}

// Wait blocks until the trigger fires and returns the time poll returned,
// or returns ctx's error. It polls in slices of 250 ms to notice ctx.
func (t *trigger) Wait(ctx context.Context) (time.Time, error) {
	fds := []unix.PollFd{{Fd: int32(t.f.Fd()), Events: unix.POLLPRI}}
	for {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		n, err := unix.Poll(fds, 250)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return time.Time{}, fmt.Errorf("%s: poll: %w", t.Path, err)
		}
		if n == 0 {
			continue
		}
		if fds[0].Revents&unix.POLLERR != 0 {
			return time.Time{}, fmt.Errorf("%s: trigger gone (POLLERR): the cgroup was removed?", t.Path)
		}
		if fds[0].Revents&unix.POLLPRI != 0 {
			return time.Now(), nil
		}
	}
}

// Close removes the trigger.
func (t *trigger) Close() error { return t.f.Close() }
