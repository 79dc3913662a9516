package cmd

import (
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/report"
)

// promOptions are analyze's --prometheus flags.
type promOptions = analysis.PromFlags

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

func runAnalyzePrometheus(opts *analyzeOptions) error {
	q, err := opts.Prom.Query(opts.Format, opts.From, opts.To, opts.now())
	if err != nil {
		return err
	}
	if err := checkOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	co, err := opts.Correlate()
	if err != nil {
		return err
	}
	fl, err := analysis.Prometheus(opts.Ctx, opts.Prom, q, analysis.NewOptions(opts.Ctx, opts.IO, opts.LatencyFile, opts.LatencyIn, co, false))
	var fe *analysis.FetchError
	if errors.As(err, &fe) {
		return &exitCodeError{Code: exitError, Err: fe.Err}
	}
	if err != nil {
		return err
	}
	ro := report.Options{Values: opts.Values, Color: opts.IO.ColorEnabled(), Width: opts.IO.Width()}
	return writeOutput(opts.IO, opts.Output, opts.Mode, opts.Force, &ro, func(w io.Writer) error { return report.RenderFleet(w, fl, opts.Format, ro) })
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
