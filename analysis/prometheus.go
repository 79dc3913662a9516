package analysis

import (
	"context"
	"net/url"
	"time"

	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/store"
)

// PromFlags are analyze's --prometheus flags (docs/fleet.md).
type PromFlags struct {
	URL          string
	Match        string
	HostLabel    string
	LatencyQuery string
	Step         time.Duration
	Align        time.Duration // episodes starting this close on different hosts are one fleet event
	Timeout      time.Duration // give up on the server after this long
}

// Query checks the flags for a report in format f and returns fleet's
// query of the window from..to (analyze's --from/--to); bad flags are
// *usage.Error.
func (p PromFlags) Query(f format.Format, from, to string, now time.Time) (fleet.Query, error) {
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fleet.Query{}, usage.Errorf("--prometheus %q: want an http:// or https:// URL of a Prometheus server", p.URL)
	}
	if f != format.Table && f != format.Markdown && f != format.JSON {
		return fleet.Query{}, usage.Errorf("--format %s: --prometheus writes table, markdown or json", f)
	}
	start, end, err := PromWindow(from, to, now)
	if err != nil {
		return fleet.Query{}, err
	}
	return fleet.Query{URL: p.URL, Match: p.Match, HostLabel: p.HostLabel, From: start, To: end,
		Step: p.Step, LatencyQuery: p.LatencyQuery}, nil
}

// PromWindow is the window --prometheus reads: --from/--to in the grammar
// of recordings (store.ParseWindow, times without a zone in the local
// one), the last hour by default, ending now.
func PromWindow(from, to string, now time.Time) (time.Time, time.Time, error) {
	w, err := store.ParseWindow(from, to, now, time.Local)
	if err != nil {
		return w.From, w.To, &usage.Error{Err: err}
	}
	if w.To.IsZero() {
		w.To = now
	}
	if w.From.IsZero() {
		w.From = w.To.Add(-time.Hour)
	}
	if !w.From.Before(w.To) {
		return w.From, w.To, usage.Errorf("--from %s is not before --to %s", w.From.Format(time.RFC3339), w.To.Format(time.RFC3339))
	}
	return w.From, w.To, nil
}

// FetchError is a Prometheus server that could not be read.
type FetchError struct{ Err error }

func (e *FetchError) Error() string { return e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// Prometheus reads q from the server within p.Timeout (a failure is a
// *FetchError), analyzes each host (Fleet) and aligns their episodes
// into the fleet report.
func Prometheus(ctx context.Context, p PromFlags, q fleet.Query, o Options) (fleet.Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	d, err := fleet.Fetch(ctx, q)
	if err != nil {
		return fleet.Report{}, &FetchError{Err: err}
	}
	results, hosts, err := Fleet(d, o)
	if err != nil {
		return fleet.Report{}, err
	}
	return fleet.Report{Data: d, From: q.From, To: q.To, Results: results, Hosts: hosts,
		Aligned: fleet.Align(results, p.Align), Align: p.Align}, nil
}
