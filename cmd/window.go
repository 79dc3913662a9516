package cmd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
)

// recInput is a recording analyze, compare and gate --recording read:
// one file (or - for stdin) as always, or several segments and store
// directories joined into one continuous recording, kept to a window.
type recInput struct {
	Paths    []string
	From, To string // --from, --to as given; "" for none
	// WindowFlag names the flag From came from when it is not --from
	// (compare --before-window), for messages.
	WindowFlag string
	Now        func() time.Time
	// NoRedact (--no-redact) reads command lines as the recording holds
	// them; otherwise analyze and compare redact them (analysis.Options.Redact).
	NoRedact bool
}

// windowFlags adds --from and --to to a command that reads recordings;
// side names what they apply to ("" for the one recording).
func windowFlags(fl *pflag.FlagSet, from, to *string, side string) {
	if side != "" {
		side = " of " + side
	}
	fl.StringVar(from, "from", "", "read the samples"+side+" from this time: 2026-12-01T06:00:00Z, '2026-12-01 06:00', 06:00, 'yesterday 06:00', -6h, now; or a range 'yesterday 06:00..07:00' (docs/service.md)")
	fl.StringVar(to, "to", "", "... up to this time (same forms, or +2h after --from)")
}

// joined reports whether in needs the joining reader: several inputs, a
// directory, a window, or the segment a recorder is writing (read up to
// its last sample and said to be live). One plain file without a window
// keeps the single-file reader (progress bar, stdin).
func (in recInput) joined() bool {
	if len(in.Paths) != 1 || in.From != "" || in.To != "" {
		return true
	}
	fi, err := os.Stat(in.Paths[0])
	return err == nil && (fi.IsDir() || store.IsLive(in.Paths[0]))
}

// name is what messages call the input.
func (in recInput) name() string { return strings.Join(in.Paths, " ") }

// open expands the inputs and joins them within the window
// (store.OpenWindow), with flag's wording for a path that cannot be read.
func (in recInput) open(flag string) (*store.Joined, store.Window, error) {
	for _, p := range in.Paths {
		if p == "-" {
			return nil, store.Window{}, flagErrorf("- (stdin) cannot be joined with other recordings or read with --from/--to")
		}
		if _, err := os.Stat(p); err != nil {
			return nil, store.Window{}, inputError(flag, p, err)
		}
	}
	segs, err := store.Expand(in.Paths)
	if err != nil {
		name := in.name()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			name = pe.Path // the one of several paths at fault, named once
		}
		return nil, store.Window{}, inputError(flag, name, err)
	}
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	j, w, err := store.OpenWindow(segs, in.From, in.To, now(), in.name())
	if we := (*store.WindowError)(nil); errors.As(err, &we) {
		if in.WindowFlag != "" {
			err = errors.New(strings.Replace(err.Error(), "--from", in.WindowFlag, 1))
		}
		return nil, w, &usageError{Err: err}
	}
	return j, w, err
}

// readJoined reads a joined input whole (gate --recording).
func readJoined(ctx context.Context, in recInput, flag string) (*record.Recording, error) {
	j, _, err := in.open(flag)
	if err != nil {
		return nil, err
	}
	return j.ReadAll(ctx)
}

// joinedSource adapts a joined input to the reader analyze reduces.
type joinedSource struct {
	ctx context.Context
	j   *store.Joined
}

func (s joinedSource) Header() record.Header { return s.j.Header() }
func (s joinedSource) Each(fn func(*record.Sample)) (*record.Recording, error) {
	return s.j.Each(s.ctx, fn)
}
