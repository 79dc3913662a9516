package cmd

import (
	"context"
	"io"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/report"
	"github.com/memdiag/memdiag/store"
)

// promOptions are analyze's --prometheus flags.
type promOptions struct {
	URL          string
	Match        string
	HostLabel    string
	LatencyQuery string
	Step         time.Duration
	Align        time.Duration
	Timeout      time.Duration
}

// addPrometheusFlags adds --prometheus and its companions to analyze;
// the window is analyze's --from/--to (default: the last hour).
func addPrometheusFlags(c *cobra.Command, p *promOptions) {
	fl := c.Flags()
	fl.StringVar(&p.URL, "prometheus", "", "read node_exporter's and memdiag's series from this Prometheus server (http://HOST:9090) instead of a recording (docs/fleet.md)")
	fl.StringVar(&p.Match, "match", "", "with --prometheus: label matchers selecting the hosts, e.g. 'instance=~\"web-.*\"' (default: every host)")
	fl.StringVar(&p.HostLabel, "host-label", "instance", "with --prometheus: the label naming a host (its node_exporter and memdiag targets must share it)")
	fl.StringVar(&p.LatencyQuery, "latency-query", "", "with --prometheus: PromQL giving latency in seconds, per host or one series for all, e.g. 'histogram_quantile(0.99, sum by (le, instance) (rate(http_request_duration_seconds_bucket[1m])))'")
	fl.DurationVar(&p.Step, "step", 0, "with --prometheus: resolution to read at (default: the scrape interval, measured)")
	fl.DurationVar(&p.Align, "align", time.Minute, "with --prometheus: episodes of different hosts starting within this of each other are one fleet event")
	fl.DurationVar(&p.Timeout, "timeout", 2*time.Minute, "with --prometheus: give up on the server after this long")
}

// promWindow is the window --prometheus reads: --from/--to in the grammar
// of recordings (store.ParseWindow, times without a zone in the local
// one), the last hour by default, ending now.
func promWindow(from, to string, now time.Time) (time.Time, time.Time, error) {
	w, err := store.ParseWindow(from, to, now, time.Local)
	if err != nil {
		return w.From, w.To, &usageError{Err: err}
	}
	if w.To.IsZero() {
		w.To = now
	}
	if w.From.IsZero() {
		w.From = w.To.Add(-time.Hour)
	}
	if !w.From.Before(w.To) {
		return w.From, w.To, flagErrorf("--from %s is not before --to %s", w.From.Format(time.RFC3339), w.To.Format(time.RFC3339))
	}
	return w.From, w.To, nil
}

func runAnalyzePrometheus(opts *analyzeOptions) error {
	p := &opts.Prom
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return flagErrorf("--prometheus %q: want an http:// or https:// URL of a Prometheus server", p.URL)
	}
	if err := checkOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	f := opts.Format
	if f != format.Table && f != format.Markdown && f != format.JSON {
		return flagErrorf("--format %s: --prometheus writes table, markdown or json", f)
	}
	start, end, err := promWindow(opts.From, opts.To, opts.now())
	if err != nil {
		return err
	}
	co, err := opts.correlateOptions()
	if err != nil {
		return err
	}
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	d, err := fleet.Fetch(ctx, fleet.Query{
		URL: p.URL, Match: p.Match, HostLabel: p.HostLabel, From: start, To: end,
		Step: p.Step, LatencyQuery: p.LatencyQuery,
	})
	if err != nil {
		return &exitCodeError{Code: exitError, Err: err}
	}
	lo := opts.LatencyIn
	lo.Format, lo.TZ = opts.LatencyFormat, opts.LatencyTZ
	results, hosts, err := analysis.Fleet(d, analysisOptions(opts.Ctx, opts.IO, opts.LatencyFile, lo, co, false))
	if err != nil {
		return err
	}
	fl := report.Fleet{Data: d, From: start, To: end, Results: results, Hosts: hosts, Aligned: fleet.Align(results, p.Align), Align: p.Align}
	ro := report.Options{Values: opts.Values, Color: opts.IO.ColorEnabled(), Width: opts.IO.Width()}
	return writeOutput(opts.IO, opts.Output, opts.Mode, opts.Force, &ro, func(w io.Writer) error { return report.RenderFleet(w, fl, f, ro) })
}

// analyzeArgs is one recording, or none with --prometheus.
func analyzeArgs(p *promOptions) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if p.URL != "" {
			if len(args) > 0 {
				return flagErrorf("--prometheus reads a Prometheus server: give no recording (got %q)", args[0])
			}
			return nil
		}
		return minArgs(1)(c, args)
	}
}

func (opts *analyzeOptions) now() time.Time {
	if opts.Now != nil {
		return opts.Now()
	}
	return time.Now()
}
