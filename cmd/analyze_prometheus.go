package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/internal/english"
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

// fleetJSON is analyze --prometheus --format json.
type fleetJSON struct {
	Prometheus string          `json:"prometheus"`
	From       time.Time       `json:"from"`
	To         time.Time       `json:"to"`
	StepS      float64         `json:"step_s"`
	ScrapeS    float64         `json:"scrape_interval_s,omitempty"`
	Resolution string          `json:"resolution"`
	Hosts      []fleetHostJSON `json:"hosts"`
	Fleet      []fleetLineJSON `json:"fleet"`
	Warnings   []string        `json:"warnings,omitempty"`
}

type fleetHostJSON struct {
	Host     string          `json:"host"`
	Sources  []string        `json:"sources"`
	Lacks    []string        `json:"lacks"`
	Memdiag  bool            `json:"memdiag_metrics"`
	Analysis json.RawMessage `json:"analysis"`
}

type fleetLineJSON struct {
	fleet.Aligned
	Line string `json:"line"`
}

func runAnalyzePrometheus(opts *analyzeOptions) error {
	p := &opts.Prom
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return flagErrorf("--prometheus %q: want an http:// or https:// URL of a Prometheus server", p.URL)
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
	results, hosts, err := analysis.Fleet(d, analysisOptions(opts.IO, opts.LatencyFile, lo, co, false))
	if err != nil {
		return err
	}
	fo := fleetOutput{d: d, start: start, end: end, results: results, hosts: hosts, aligned: fleet.Align(results, p.Align), align: p.Align}
	fo.ro = report.Options{Values: opts.Values, Color: opts.IO.ColorEnabled(), Width: opts.IO.Width()}
	return writeOutput(opts.IO, opts.Output, opts.Mode, &fo.ro, func(w io.Writer) error {
		if f == format.JSON {
			return fo.writeJSON(w)
		}
		return fo.writeText(w, f == format.Markdown)
	})
}

// fleetOutput is what `analyze --prometheus` writes: each host's
// analysis, then the fleet's aligned episodes.
type fleetOutput struct {
	d          *fleet.Data
	start, end time.Time
	results    []fleet.HostResult
	hosts      []*fleet.Host
	aligned    []fleet.Aligned
	align      time.Duration
	ro         report.Options
}

// writeJSON writes the fleet as one JSON document.
func (fo *fleetOutput) writeJSON(w io.Writer) error {
	d, ro, hosts := fo.d, fo.ro, fo.hosts
	out := fleetJSON{Prometheus: d.URL, From: fo.start.UTC(), To: fo.end.UTC(), StepS: d.Step.Seconds(), ScrapeS: d.Scrape.Seconds(),
		Resolution: resolutionNote(d), Warnings: d.Warnings, Fleet: []fleetLineJSON{}}
	for i, r := range fo.results {
		var b bytes.Buffer
		if err := report.Render(&b, r.Res, format.JSON, ro); err != nil {
			return err
		}
		out.Hosts = append(out.Hosts, fleetHostJSON{Host: r.Host, Sources: hosts[i].Sources, Lacks: hosts[i].Lacks,
			Memdiag: hosts[i].Memdiag, Analysis: json.RawMessage(bytes.TrimSpace(b.Bytes()))})
	}
	for _, a := range fo.aligned {
		out.Fleet = append(out.Fleet, fleetLineJSON{a, a.Line(time.UTC, fo.align)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeText writes each host's report and the fleet's lines as a table
// or markdown.
func (fo *fleetOutput) writeText(w io.Writer, md bool) error {
	f := format.Table
	if md {
		f = format.Markdown
	}
	d, ro, hosts, results := fo.d, fo.ro, fo.hosts, fo.results
	for i, r := range results {
		if md {
			fmt.Fprintf(w, "## %s\n\nSources: %s.\n\n", r.Host, strings.Join(hosts[i].Sources, ", "))
		} else {
			fmt.Fprintf(w, "== %s (from %s) ==\n\n", r.Host, strings.Join(hosts[i].Sources, ", "))
		}
		if err := report.Render(w, r.Res, f, ro); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if md {
		fmt.Fprintf(w, "## Fleet: %s, %s .. %s\n\n", english.Count(len(results), "host"), fo.start.UTC().Format("2006-01-02 15:04:05"), fo.end.UTC().Format("15:04:05 MST"))
	} else {
		fmt.Fprintf(w, "FLEET: %s, %s .. %s\n\n", english.Count(len(results), "host"), fo.start.UTC().Format("2006-01-02 15:04:05"), fo.end.UTC().Format("15:04:05 MST"))
	}
	if len(fo.aligned) == 0 {
		fmt.Fprintln(w, "No host had an episode in the window.")
	}
	bullet := "  "
	if md {
		bullet = "- "
	}
	for _, a := range fo.aligned {
		fmt.Fprintln(w, bullet+a.Line(time.UTC, fo.align))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, resolutionNote(d))
	for _, wn := range d.Warnings {
		fmt.Fprintln(w, "Note:", wn)
	}
	return nil
}

// resolutionNote says what reading Prometheus loses against a recording.
func resolutionNote(d *fleet.Data) string {
	scrape := "not measured (no `up` samples); assumed " + d.Step.String()
	if d.Scrape > 0 {
		scrape = d.Scrape.String()
	}
	return fmt.Sprintf("Resolution: Prometheus scraped every %s and was read at %s steps. Counters are known only at the scrapes, so a stall or "+
		"I/O burst shorter than about two steps (%s) is averaged into its neighbours or missed, every time above is known to one step, and "+
		"PSI shares are per step (from the *_seconds_total counters), not per second. Per-process attribution is not in Prometheus: "+
		"with memdiag's own metrics a job is credited through its unit's I/O (memdiag_unit_*_bytes_total); without them no job or "+
		"process can be shown to have run or caused an episode.", scrape, d.Step, 2*d.Step)
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
