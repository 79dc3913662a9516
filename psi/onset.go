package psi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/rootfs"
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
	trig     *trigger
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
		t, err := newTrigger(path, kind, stall, window)
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
	tr, err := openTotalReader(w.Path, w.Kind)
	if err != nil {
		return err
	}
	defer tr.Close()
	// Each wake-up costs far more than the read (~150 µs of scheduler
	// and timer work per wake-up against 3 µs for the pread on the
	// project's 2-vCPU VM), so the poller sleeps longer while it can:
	// when the window holds no stall at all, the threshold cannot be
	// reached before Stall of wall time has passed (stall time grows at
	// most as fast as the clock), so the next poll is Stall later and
	// the onset is still seen within PollEvery of the crossing. At the
	// default 100 ms threshold that halves the wake-ups of a calm host.
	tm := time.NewTimer(w.PollEvery)
	defer tm.Stop()
	// The points of one window, oldest first; the slice is compacted in
	// place so that polling allocates nothing once it holds a window.
	hist := make([]point, 0, int(w.Window/w.PollEvery)+2)
	var quietUntil time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tm.C:
		}
		total, err := tr.Total()
		if err != nil {
			return err
		}
		now := time.Now()
		hist = append(hist, point{now, total})
		// Drop points older than the window, keeping one at or before its start.
		cut := 0
		for cut+1 < len(hist) && !hist[cut+1].t.After(now.Add(-w.Window)) {
			cut++
		}
		if cut > 0 {
			hist = hist[:copy(hist, hist[cut:])]
		}
		next := w.PollEvery
		if total == hist[0].total && !hist[0].t.After(now.Add(-w.Window)) && w.Stall > next {
			next = w.Stall // a calm window: see the comment above
		}
		tm.Reset(next)
		if now.Before(quietUntil) || len(hist) < 2 {
			continue
		}
		if total-hist[0].total >= w.Stall && total >= hist[0].total {
			fn(Onset{Time: now, Path: w.Path, Kind: w.Kind, Stall: w.Stall, Window: w.Window, Mode: "poll"})
			quietUntil = now.Add(w.Window)
		}
	}
}

// totalReader re-reads one stall total ("some" or "full") of a pressure
// file many times a second for the onset poller: the file stays open and
// each read is one pread(2) at offset 0 into a fixed buffer (seq_file
// regenerates the text for a read at offset 0), parsed without
// allocating. Opening and parsing the whole file with [ReadFile] each
// time cost about 5x the CPU (BenchmarkOnsetPoll).
type totalReader struct {
	path string
	f    *os.File
	fd   int
	want []byte // "some " or "full "
	buf  [512]byte
}

func openTotalReader(path, kind string) (*totalReader, error) {
	if kind != "some" && kind != "full" {
		return nil, fmt.Errorf("psi onset: kind %q: want some or full", kind)
	}
	f, err := rootfs.OpenPath(path) // regular files only, never blocking
	if err != nil {
		return nil, err
	}
	return &totalReader{path: path, f: f, fd: int(f.Fd()), want: []byte(kind + " ")}, nil
}

func (r *totalReader) Close() error { return r.f.Close() }

// Total returns the cumulative stall time of the reader's kind.
func (r *totalReader) Total() (time.Duration, error) {
	var n int
	var err error
	for {
		n, err = unix.Pread(r.fd, r.buf[:], 0)
		if err != unix.EINTR { //nolint:errorlint // a bare Errno from a syscall
			break
		}
	}
	if err != nil {
		return 0, &os.PathError{Op: "pread", Path: r.path, Err: err}
	}
	return parseTotal(r.buf[:n], r.want, r.path)
}

// parseTotal finds the line starting with want ("some " or "full ") and
// returns its total= field (microseconds) as a duration.
func parseTotal(b, want []byte, path string) (time.Duration, error) {
	for line := 1; len(b) > 0; line++ {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !bytes.HasPrefix(l, want) {
			continue
		}
		// The field, not a field ending in "total" ("0total="): it
		// follows a space, as every field but the first does.
		i := bytes.Index(l, []byte(" total="))
		if i++; i <= 0 {
			return 0, fmt.Errorf("%s:%d: %w: no total= in %q", path, line, errParse, l)
		}
		var v uint64
		digits := l[i+len("total="):]
		if len(digits) == 0 || len(digits) > 19 {
			return 0, fmt.Errorf("%s:%d: %w: bad total in %q", path, line, errParse, l)
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("%s:%d: %w: bad total in %q", path, line, errParse, l)
			}
			v = v*10 + uint64(c-'0')
		}
		if v > math.MaxInt64/uint64(time.Microsecond) { // as parse refuses it
			return 0, fmt.Errorf("%s:%d: %w: total=%d µs: past 292 years, more than a Duration holds", path, line, errParse, v)
		}
		return time.Duration(v) * time.Microsecond, nil
	}
	return 0, fmt.Errorf("%s: %w: no %q line", path, errParse, bytes.TrimSpace(want))
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
