package analysis

import (
	"context"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/iostreams"
)

// Side is one recording of `memdiag compare`: Path (a file, or - for
// standard input), the load-test results file its latency is taken from
// (--latency-before, --latency-after; "": the recording's) and, when not
// "", its own window FROM..TO (--before-window, --after-window) instead
// of the pair's --from/--to.
type Side struct {
	Path, Latency, Window string
}

// Pair is compare's two recordings and the window of both (--from and
// --to as given; "" for none).
type Pair struct {
	Before, After Side
	From, To      string
	// NoRedact (--no-redact) reads command lines as the recordings hold
	// them (Input.NoRedact).
	NoRedact bool
}

// windowFlags name each side's Window in messages.
var windowFlags = [2]string{"--before-window", "--after-window"}

// Analyze analyzes Before, then After, as Input.Analyze does one
// recording, with the latency flags lo and co, and returns both results
// and, when trace is set, the traces of the sides that have one, in that
// order. The first error ends it.
func (p Pair) Analyze(ctx context.Context, ios *iostreams.IOStreams, lo LatencyFlags, co correlate.Options, trace bool) (res [2]correlate.Result, traces []*correlate.Trace, err error) {
	for i, s := range [2]Side{p.Before, p.After} {
		in := Input{Paths: []string{s.Path}, From: p.From, To: p.To, NoRedact: p.NoRedact}
		if s.Window != "" {
			in.From, in.To, in.WindowFlag = s.Window, "", windowFlags[i]
		}
		var t *correlate.Trace
		if res[i], t, err = in.Analyze(ctx, ios, s.Latency, lo, co, trace); err != nil {
			return res, nil, err
		}
		if t != nil {
			traces = append(traces, t)
		}
	}
	return res, traces, nil
}
