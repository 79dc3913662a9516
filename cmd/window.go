package cmd

import (
	"context"
	"errors"
	"fmt"
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

// open expands the inputs, parses the window in the first recording's
// time zone (the zone its timeline is shown in) and selects the
// segments that overlap it.
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
		return nil, store.Window{}, inputError(flag, in.name(), err)
	}
	loc := time.Local
	for _, s := range segs { // the first readable one (a damaged segment is skipped)
		if r, err := record.Open(s.Path); err == nil {
			loc = recordingZone(r.Header())
			r.Close()
			break
		}
	}
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	w, err := store.ParseWindow(in.From, in.To, now(), loc)
	if err != nil {
		if in.WindowFlag != "" {
			err = errors.New(strings.Replace(err.Error(), "--from", in.WindowFlag, 1))
		}
		return nil, w, &usageError{Err: err}
	}
	sel := store.Select(segs, w)
	if len(sel) == 0 {
		first, last := segs[0].Start, segs[len(segs)-1].Last
		return nil, w, &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: no recording overlaps %s: they span %s .. %s",
			in.name(), describeWindow(w, loc), first.In(loc).Format(time.RFC3339), last.In(loc).Format(time.RFC3339))}
	}
	j, err := store.Join(sel, w)
	if err != nil {
		return nil, w, err
	}
	return j, w, nil
}

// recordingZone is the zone a recording's header names, else its UTC
// offset at start, else the local zone.
func recordingZone(h record.Header) *time.Location {
	if h.TimeZone != "" {
		if loc, err := time.LoadLocation(h.TimeZone); err == nil {
			return loc
		}
	}
	if h.TimeZone != "" || h.UTCOffset != 0 {
		return time.FixedZone(h.TimeZone, h.UTCOffset)
	}
	return time.Local
}

func describeWindow(w store.Window, loc *time.Location) string {
	show := func(t time.Time) string {
		if t.IsZero() {
			return "…"
		}
		return t.In(loc).Format(time.RFC3339)
	}
	return show(w.From) + " .. " + show(w.To)
}

// readJoined reads a joined input whole (gate --recording).
func readJoined(ctx context.Context, in recInput, flag string) (*record.Recording, error) {
	j, _, err := in.open(flag)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	rec, err := j.Each(ctx, func(s *record.Sample) { samples = append(samples, *s) })
	if err != nil {
		return nil, err
	}
	rec.Samples = samples
	return rec, nil
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

// pathsValue is a repeatable path flag (gate --recording): the first
// value goes to first, the others to rest.
type pathsValue struct {
	first *string
	rest  *[]string
}

func (v pathsValue) String() string {
	if v.first == nil {
		return ""
	}
	return strings.Join(append([]string{*v.first}, *v.rest...), ",")
}

func (v pathsValue) Set(s string) error {
	if s == "" {
		return errors.New("empty path")
	}
	if *v.first == "" {
		*v.first = s
	} else {
		*v.rest = append(*v.rest, s)
	}
	return nil
}

func (v pathsValue) Type() string { return "path" }
