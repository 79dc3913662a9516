package timers

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/units"
)

// LiveTimeout bounds connecting to systemd and reading every timer's
// live state, so that a hung bus never stalls the listing.
const LiveTimeout = 5 * time.Second

// ListOptions say what `memdiag timers` lists; the time flags are as
// typed (see ParseWhen), bad ones are *usage.Error.
type ListOptions struct {
	Root        string
	All         bool // also the jobs that do not run, with why
	Users       bool // also systemd user units
	KeepSecrets bool // --no-redact
	TZ          string
	BaseTime    string // next firings after this time; "" = Now
	From, To    string // list the firings in this window; From "" = none
	Now         time.Time
	// Live connects to the running host's systemd (nil source and no
	// error when there is nothing to connect to); nil: never.
	Live func(ctx context.Context, root string) (LiveSource, error)
	// Warn is told, once, that the live state could not be read.
	Warn func(error)
}

// List is a listing ready to render: the jobs shown, or with a window
// their firings in it.
type List struct {
	Listing
	// View is how to show it (report/timersreport renders it).
	View     View
	Window   bool // From..To was given: Firings are the output
	From, To time.Time
	Firings  []Firing
}

// NewList reads every periodic job under o.Root, with systemd's live
// state (within LiveTimeout) and what runs now on the running host, and
// projects the firings of the window when one was given.
func NewList(ctx context.Context, o ListOptions) (*List, error) {
	// Jobs run in the root's zone; --tz only changes the zone times are
	// shown (and --from/--to/--base-time read) in.
	zone, err := RootZone(o.Root)
	if err != nil {
		return nil, fmt.Errorf("%w; memdiag does not guess one: fix or replace etc/localtime under %s", err, o.Root)
	}
	loc := zone.Loc
	if o.TZ != "" {
		if loc, err = time.LoadLocation(o.TZ); err != nil {
			return nil, usage.Errorf("--tz: %v", err)
		}
	}
	base := o.Now
	if o.BaseTime != "" {
		if base, err = ParseWhen(o.BaseTime, o.Now, loc); err != nil {
			return nil, usage.Errorf("--base-time: %v", err)
		}
	}
	// The window is read before the host is: a wrong --from/--to is a
	// usage error, said alone (not after the live state's warnings).
	var from, to time.Time
	if o.From != "" {
		if from, to, err = ParseWindow(o.From, o.To, base, loc); err != nil {
			return nil, err
		}
	}
	jobs, err := Inventory(o.Root, InventoryOptions{Users: o.Users, KeepSecrets: o.KeepSecrets})
	if err != nil {
		return nil, fmt.Errorf("reading periodic jobs under %s: %w", o.Root, err)
	}
	o.applyLive(ctx, jobs)
	if running, ok := ProbeRunning(o.Root); ok {
		ApplyRunning(jobs, running)
	}
	l := &List{Listing: NewListing(jobs, o.All, base, zone.Loc)}
	l.View = View{Base: base, Loc: loc, RunLoc: zone.Loc, ShowWhy: o.All}
	if o.From == "" {
		return l, nil
	}
	l.Window, l.From, l.To = true, from, to
	if l.Firings, err = ProjectContext(ctx, l.Jobs, l.From, l.To, zone.Loc); err != nil {
		return nil, err
	}
	return l, nil
}

// applyLive adds systemd's live state to jobs (ApplyLiveFrom), warning
// once when it cannot be read; the listing goes on from the unit files.
func (o ListOptions) applyLive(ctx context.Context, jobs []Job) {
	if o.Live == nil {
		return
	}
	if err := ApplyLiveFrom(ctx, o.Root, jobs, o.Live); err != nil && o.Warn != nil {
		o.Warn(err)
	}
}

// ApplyLiveFrom adds the live state probe reads for root (ProbeLiveSource
// on a host) to jobs, and returns probe's error: why it could not be read,
// nil when there is nothing to read (a root other than "/"). It runs after
// the unit files are read, so that LiveTimeout bounds only the D-Bus work:
// on a slow host reading them took more than 5 s and every timer's live
// state was lost.
func ApplyLiveFrom(ctx context.Context, root string, jobs []Job, probe func(context.Context, string) (LiveSource, error)) error {
	ctx, cancel := context.WithTimeout(ctx, LiveTimeout)
	defer cancel()
	live, err := probe(ctx, root)
	if c, ok := live.(io.Closer); ok {
		defer c.Close()
	}
	if live != nil {
		ApplyLive(jobs, live)
	}
	return err
}

// View is how a list is shown: from when, in which zone, and whether
// each job says why it is active or not.
type View struct {
	Base time.Time      // next firings are computed after this time
	Loc  *time.Location // zone the times are shown in (--tz)
	// RunLoc is the zone jobs that name none (Job.TimeZone) run in: the
	// root's ([RootZone]), never the zone they are shown in; nil: Loc.
	RunLoc  *time.Location
	ShowWhy bool // add the ACTIVE column (why each job is active or not)
}

// RunZone is the zone jobs that name none run in: RunLoc, else Loc.
func (v View) RunZone() *time.Location {
	if v.RunLoc != nil {
		return v.RunLoc
	}
	return v.Loc
}

// ParseWhen parses a time flag: RFC 3339, "YYYY-MM-DD HH:MM[:SS]" in loc,
// "YYYY-MM-DD" or "now".
func ParseWhen(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if s == "now" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse time %q (want RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or 'now')", s)
}

// ParseWindow reads --from and --to (a time, or a duration after
// --from), times without a zone in loc, "now" being base; bad values are
// *usage.Error.
func ParseWindow(fromFlag, toFlag string, base time.Time, loc *time.Location) (from, to time.Time, err error) {
	from, err = ParseWhen(fromFlag, base, loc)
	if err != nil {
		return from, to, usage.Errorf("--from: %v", err)
	}
	to, err = ParseWhen(toFlag, base, loc)
	if err != nil {
		d, derr := units.ParseDuration(toFlag)
		if derr != nil {
			return from, to, usage.Errorf("--to %q: want a time (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or 'now') or a duration after --from such as 2h, 2d or 1w", toFlag)
		}
		to = from.Add(d)
	}
	if !to.After(from) {
		return from, to, usage.Errorf("--to must be after --from")
	}
	return from, to, nil
}
