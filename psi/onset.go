package psi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Onset is the moment a stall threshold was crossed: Stall or more of
// stall time ("some" or "full") within the moving Window.
type Onset struct {
	Time   time.Time
	Path   string        // the pressure file
	Kind   string        // "some" or "full"
	Stall  time.Duration // the threshold
	Window time.Duration
	Mode   string // "trigger" (kernel PSI trigger) or "poll" (user-space polling of total)
}

// OnsetWatcher reports stall onsets on one pressure file. It uses a
// kernel PSI trigger where the kernel allows one with the requested
// window; otherwise it polls the file's total every PollEvery and applies
// the same rule in user space, so the onset is still known to PollEvery.
//
// Kernel triggers need CAP_SYS_RESOURCE for windows that are not a
// multiple of 2 s (kernel >= 6.5; before 6.5 any trigger needs it), and
// unprivileged triggers are evaluated only every 2 s, which blurs a short
// stall: without the capability memdiag polls instead.
type OnsetWatcher struct {
	Path          string
	Kind          string
	Stall, Window time.Duration
	PollEvery     time.Duration
	// Fallback says why polling is used instead of a kernel trigger
	// ("" when a trigger is in use); print it once.
	Fallback string
	trig     *Trigger
}

// NewOnsetWatcher sets up a watcher on path. It fails only for bad
// arguments or a missing file (an *UnavailableError).
func NewOnsetWatcher(path, kind string, stall, window, pollEvery time.Duration) (*OnsetWatcher, error) {
	if pollEvery <= 0 {
		pollEvery = 50 * time.Millisecond
	}
	w := &OnsetWatcher{Path: path, Kind: kind, Stall: stall, Window: window, PollEvery: pollEvery}
	if !hasCapSysResource() {
		w.Fallback = fmt.Sprintf("PSI triggers on %s: this process lacks CAP_SYS_RESOURCE, so the kernel allows only 2 s-multiple windows evaluated every 2 s; polling total every %s instead", path, pollEvery)
	} else {
		t, err := NewTrigger(path, kind, stall, window)
		switch {
		case err == nil:
			w.trig = t
			return w, nil
		case errors.Is(err, os.ErrNotExist):
			return nil, err
		default:
			var ue *UnavailableError
			if !errors.As(err, &ue) {
				return nil, err
			}
			w.Fallback = fmt.Sprintf("%v; polling total every %s instead", err, pollEvery)
		}
	}
	if _, err := ReadFile(path); err != nil {
		return nil, err
	}
	if kind != "some" && kind != "full" {
		return nil, fmt.Errorf("psi onset: kind %q: want some or full", kind)
	}
	if stall <= 0 || stall > window {
		return nil, fmt.Errorf("psi onset: stall %s must be in (0, window %s]", stall, window)
	}
	return w, nil
}

// Mode is "trigger" or "poll".
func (w *OnsetWatcher) Mode() string {
	if w.trig != nil {
		return "trigger"
	}
	return "poll"
}

// Run calls fn for each onset until ctx ends. Like the kernel, it reports
// at most one onset per window.
func (w *OnsetWatcher) Run(ctx context.Context, fn func(Onset)) error {
	if w.trig != nil {
		defer w.trig.Close()
		for {
			at, err := w.trig.Wait(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			fn(Onset{Time: at, Path: w.Path, Kind: w.Kind, Stall: w.Stall, Window: w.Window, Mode: "trigger"})
		}
	}
	return w.poll(ctx, fn)
}

type point struct {
	t     time.Time
	total time.Duration
}

func (w *OnsetWatcher) poll(ctx context.Context, fn func(Onset)) error {
	tk := time.NewTicker(w.PollEvery)
	defer tk.Stop()
	var hist []point
	var quietUntil time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
		}
		r, err := ReadFile(w.Path)
		if err != nil {
			return err
		}
		now := time.Now()
		total := r.Some.Total
		if w.Kind == "full" {
			if r.Full == nil {
				return fmt.Errorf("%s: no full line", w.Path)
			}
			total = r.Full.Total
		}
		hist = append(hist, point{now, total})
		// Drop points older than the window, keeping one at or before its start.
		cut := 0
		for cut+1 < len(hist) && !hist[cut+1].t.After(now.Add(-w.Window)) {
			cut++
		}
		hist = hist[cut:]
		if now.Before(quietUntil) || len(hist) < 2 {
			continue
		}
		if total-hist[0].total >= w.Stall && total >= hist[0].total {
			fn(Onset{Time: now, Path: w.Path, Kind: w.Kind, Stall: w.Stall, Window: w.Window, Mode: "poll"})
			quietUntil = now.Add(w.Window)
		}
	}
}

// hasCapSysResource reports whether this process has CAP_SYS_RESOURCE in
// its effective set, which the kernel requires for unrestricted triggers.
func hasCapSysResource() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const capSysResource = 24
	return data[0].Effective&(1<<capSysResource) != 0
}
