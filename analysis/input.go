package analysis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
)

// Input is a recording analyze, compare and gate --recording read:
// one file (or - for stdin) as always, or several segments and store
// directories joined into one continuous recording, kept to a window.
type Input struct {
	Paths    []string
	From, To string // --from, --to as given; "" for none
	// WindowFlag names the flag From came from when it is not --from
	// (compare --before-window), for messages.
	WindowFlag string
	Now        func() time.Time
	// NoRedact (--no-redact) reads command lines as the recording holds
	// them; otherwise analyze and compare redact them (Options.Redact).
	NoRedact bool
}

// Joined reports whether in needs the joining reader: several inputs, a
// directory, a window, or the segment a recorder is writing (read up to
// its last sample and said to be live). One plain file without a window
// keeps the single-file reader (progress bar, stdin).
func (in Input) Joined() bool {
	if len(in.Paths) != 1 || in.From != "" || in.To != "" {
		return true
	}
	fi, err := os.Stat(in.Paths[0])
	return err == nil && (fi.IsDir() || store.IsLive(in.Paths[0]))
}

// name is what messages call the input.
func (in Input) name() string { return strings.Join(in.Paths, " ") }

// open expands the inputs and joins them within the window
// (store.OpenWindow), with flag's wording for a path that cannot be read
// (*rootfs.NamedError); stdin among them and a bad window are
// *usage.Error.
func (in Input) open(flag string) (*store.Joined, error) {
	for _, p := range in.Paths {
		if p == "-" {
			return nil, usage.Errorf("- (stdin) cannot be joined with other recordings or read with --from/--to")
		}
		if _, err := os.Stat(p); err != nil {
			return nil, &rootfs.NamedError{Flag: flag, Path: p, Err: err}
		}
	}
	segs, err := store.Expand(in.Paths)
	if err != nil {
		name := in.name()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			name = pe.Path // the one of several paths at fault, named once
		}
		return nil, &rootfs.NamedError{Flag: flag, Path: name, Err: err}
	}
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	j, _, err := store.OpenWindow(segs, in.From, in.To, now(), in.name())
	if we := (*store.WindowError)(nil); errors.As(err, &we) {
		if in.WindowFlag != "" {
			err = errors.New(strings.Replace(err.Error(), "--from", in.WindowFlag, 1))
		}
		return nil, &usage.Error{Err: err}
	}
	return j, err
}

// Read reads the input whole (gate --recording): the one file the user
// named, standard input for "-", or the joined segments; flag names it
// in errors.
func (in Input) Read(ctx context.Context, ios *iostreams.IOStreams, flag string) (*record.Recording, error) {
	if in.Joined() {
		j, err := in.open(flag)
		if err != nil {
			return nil, err
		}
		return j.ReadAll(ctx)
	}
	f, name, err := rootfs.OpenNamed(ctx, ios.In, flag, in.Paths[0], rootfs.RecordingLimit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return record.ReadAll(f, name)
}

// Analyze analyzes the input with the latency of latFile ("": the
// recording's) read with lo, and returns, when trace is set, the
// per-interval data behind the result (correlate.Series.Trace) for the
// HTML report's charts. One plain file is read with a progress bar on a
// terminal's stderr; Ctrl-C (ctx, nil: never) ends the read.
func (in Input) Analyze(ctx context.Context, ios *iostreams.IOStreams, latFile string, lo LatencyFlags, co correlate.Options, trace bool) (correlate.Result, *correlate.Trace, error) {
	o := NewOptions(ctx, ios, latFile, lo, co, trace)
	o.Redact = !in.NoRedact
	if !in.Joined() {
		return analyzeFile(ctx, ios, in.Paths[0], o)
	}
	j, err := in.open("")
	if err != nil {
		return correlate.Result{}, nil, err
	}
	return Recording(joinedSource{ctx, j}, j.Name(), func() {}, o)
}

// analyzeFile analyzes the one recording file path (or standard input
// for "-") with o.
func analyzeFile(ctx context.Context, ios *iostreams.IOStreams, path string, o Options) (correlate.Result, *correlate.Trace, error) {
	f, name, err := rootfs.OpenNamed(ctx, ios.In, "", path, rootfs.RecordingLimit)
	if err != nil {
		return correlate.Result{}, nil, err
	}
	defer f.Close()
	pr, done := ios.Progress(f, name)
	// Ctrl-C ends a long read at the next 64 KiB, not at the end, and a
	// read blocked on a FIFO or stdin by closing it.
	pr = iostreams.CtxReader{Ctx: ctx, R: pr}
	if ctx != nil {
		defer context.AfterFunc(ctx, func() { f.Close() })()
	}
	r, err := record.NewReader(pr, name)
	if err != nil {
		done()
		return correlate.Result{}, nil, err
	}
	return Recording(r, path, done, o)
}

// NewOptions are the Options of the latency flags lo for the results
// file latFile ("": the recording's latency), with the problems of the
// results file said on ios's stderr.
func NewOptions(ctx context.Context, ios *iostreams.IOStreams, latFile string, lo LatencyFlags, co correlate.Options, trace bool) Options {
	return Options{
		Correlate: co, MinShare: lo.MinShare, WithFailed: lo.WithFailed, Trace: trace,
		Import: func(h *record.Header) (*latency.Imported, error) { return lo.Import(ctx, ios.In, h, latFile) },
		Warn:   func(err error) { fmt.Fprintf(ios.ErrOut, "memdiag: warning: %v\n", err) },
	}
}

// joinedSource adapts a joined input to the Source Recording reduces.
type joinedSource struct {
	ctx context.Context
	j   *store.Joined
}

func (s joinedSource) Header() record.Header { return s.j.Header() }
func (s joinedSource) Each(fn func(*record.Sample)) (*record.Recording, error) {
	return s.j.Each(s.ctx, fn)
}
