package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdiag/memdiag/fleet"
	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/internal/format"
)

// Fleet is what `analyze --prometheus` shows (fleet.Report).
type Fleet = fleet.Report

// RenderFleet writes fl as a table, markdown or JSON; each host's report
// is Render's in that format.
func RenderFleet(w io.Writer, fl Fleet, f format.Format, o Options) error {
	switch f {
	case format.Table, "":
		return renderFleetText(w, fl, o, false)
	case format.Markdown:
		return renderFleetText(w, fl, o, true)
	case format.JSON:
		return renderFleetJSON(w, fl, o)
	}
	return fmt.Errorf("a fleet is written as table, markdown or json, not %s", f)
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

// renderFleetJSON writes the fleet as one JSON document.
func renderFleetJSON(w io.Writer, fl Fleet, o Options) error {
	d, hosts := fl.Data, fl.Hosts
	out := fleetJSON{Prometheus: d.URL, From: fl.From.UTC(), To: fl.To.UTC(), StepS: d.Step.Seconds(), ScrapeS: d.Scrape.Seconds(),
		Resolution: resolutionNote(d), Warnings: d.Warnings, Fleet: []fleetLineJSON{}}
	for i, r := range fl.Results {
		var b bytes.Buffer
		if err := Render(&b, r.Res, format.JSON, o); err != nil {
			return err
		}
		out.Hosts = append(out.Hosts, fleetHostJSON{Host: r.Host, Sources: hosts[i].Sources, Lacks: hosts[i].Lacks,
			Memdiag: hosts[i].Memdiag, Analysis: json.RawMessage(bytes.TrimSpace(b.Bytes()))})
	}
	for _, a := range fl.Aligned {
		out.Fleet = append(out.Fleet, fleetLineJSON{a, a.Line(time.UTC, fl.Align)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// renderFleetText writes each host's report and the fleet's lines as a
// table or markdown.
func renderFleetText(w io.Writer, fl Fleet, o Options, md bool) error {
	o.scraped = true
	f := format.Table
	if md {
		f = format.Markdown
	}
	for i, r := range fl.Results {
		if md {
			fmt.Fprintf(w, "## %s\n\nSources: %s.\n\n", r.Host, strings.Join(fl.Hosts[i].Sources, ", "))
		} else {
			fmt.Fprintf(w, "== %s (from %s) ==\n\n", r.Host, strings.Join(fl.Hosts[i].Sources, ", "))
		}
		if err := Render(w, r.Res, f, o); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	head := "FLEET: %s, %s .. %s\n\n"
	if md {
		head = "## Fleet: %s, %s .. %s\n\n"
	}
	fmt.Fprintf(w, head, english.Count(len(fl.Results), "host"), fl.From.UTC().Format("2006-01-02 15:04:05"), fl.To.UTC().Format("15:04:05 MST"))
	if len(fl.Aligned) == 0 {
		fmt.Fprintln(w, "No host had an episode in the window.")
	}
	bullet := "  "
	if md {
		bullet = "- "
	}
	for _, a := range fl.Aligned {
		fmt.Fprintln(w, bullet+a.Line(time.UTC, fl.Align))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, resolutionNote(fl.Data))
	for _, wn := range fl.Data.Warnings {
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
