package latency

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrOutside is wrapped by the error of [ImportReport.Check] when too few
// of a file's requests fall inside the recording.
var ErrOutside = errors.New("results outside the recording")

// Window is what [Imported.Within] found: the file's time range against
// the recording's, and what fell outside.
type Window struct {
	// FileFirst and FileLast are the earliest and latest request start
	// (interval-row end for Locust) in the file, in the zone the file
	// gave (UTC for epoch stamps).
	FileFirst, FileLast time.Time
	// From and To bound the recording: (From, To] is kept.
	From, To time.Time
	// Before and After count the rows that fell before From or after To.
	Before, After int
	// Kept counts the rows inside.
	Kept int
}

// Within keeps the requests that started in (from, to] — a recording's
// first and last sample — and the interval rows that end in it, and
// records in Report.Window how many fell before and after, with the
// file's time range. Every row is counted once: in Kept, Before or After.
func (imp *Imported) Within(from, to time.Time) {
	w := &Window{From: from, To: to}
	see := func(t time.Time) int {
		if w.FileFirst.IsZero() || t.Before(w.FileFirst) {
			w.FileFirst = t
		}
		if w.FileLast.IsZero() || t.After(w.FileLast) {
			w.FileLast = t
		}
		switch {
		case !t.After(from):
			w.Before++
			return -1
		case t.After(to):
			w.After++
			return 1
		}
		w.Kept++
		return 0
	}
	imp.Requests.keep(func(q Request) bool { return see(q.Start) == 0 })
	ivs := imp.Intervals[:0]
	for _, iv := range imp.Intervals {
		if see(iv.End) == 0 {
			ivs = append(ivs, iv)
		}
	}
	imp.Intervals = ivs
	imp.Report.Window = w
}

// Check returns an error when the import cannot stand for the load test:
// no row in the file, none inside the recording, or (after
// [Imported.Within]) less than minShare (0–1) of the rows inside. The
// error says what was read, the file's and the recording's time ranges
// and zones, and what to do.
func (r *ImportReport) Check(minShare float64) error {
	if r.Rows == 0 {
		msg := fmt.Sprintf("%s: no request in the file (%s format)", r.Name, r.Format)
		if err := r.Err(); err != nil {
			msg += ": " + err.Error()
		}
		return fmt.Errorf("%w: %s", ErrOutside, msg)
	}
	w := r.Window
	if w == nil {
		return nil
	}
	share := float64(w.Kept) / float64(r.Rows)
	if w.Kept > 0 && share >= minShare {
		return nil
	}
	var b strings.Builder
	if w.Kept == 0 {
		fmt.Fprintf(&b, "%s: none of its %d %s is inside the recording", r.Name, r.Rows, r.unit())
	} else {
		fmt.Fprintf(&b, "%s: only %d of its %d %s (%.1f%%) are inside the recording, under the %.0f%% asked (--latency-min-share)",
			r.Name, w.Kept, r.Rows, r.unit(), share*100, minShare*100)
	}
	fmt.Fprintf(&b, " (%s)", r.rangeText())
	switch {
	case r.Relative:
		b.WriteString("; hey writes only offsets and no start is known (standard input has no modification time): give the run's start with --latency-start")
	case strings.HasPrefix(r.StartFrom, StartMtime):
		b.WriteString("; hey writes only offsets, anchored at " + r.StartFrom + ": give the run's start with --latency-start")
	case r.StartFrom != "":
		b.WriteString("; hey's offsets were anchored at " + r.StartFrom)
	default:
		b.WriteString("; is it the file of this run? timestamps without a zone are read in --latency-tz")
	}
	return fmt.Errorf("%w: %s", ErrOutside, b.String())
}

func (r *ImportReport) unit() string {
	if r.Format == formatLocust {
		return "rows"
	}
	return "requests"
}

// rangeText is "file 21:42:53.033–21:49:10.410 +01:00, recording
// 20:43:00–20:49:00 UTC; 2 before, 1 after".
func (r *ImportReport) rangeText() string {
	w := r.Window
	layout := "2006-01-02 15:04:05.000 -07:00"
	rec := func(t time.Time) string { return t.Format(layout) }
	recLoc := w.From.Location()
	return fmt.Sprintf("file %s to %s, recording %s to %s; %d before, %d after",
		w.FileFirst.Format(layout), w.FileLast.Format(layout), rec(w.From.In(recLoc)), rec(w.To.In(recLoc)), w.Before, w.After)
}

// abNote says what ab's -g file cannot hold, and what ab's standard
// output counted when it was given: totals for the run that no interval
// can take, so the failure figures of the analysis leave them out.
func (r *ImportReport) abNote() string {
	s := r.AB
	if s == nil {
		return "ab -g writes no status: ab's failed and non-2xx requests are counted only in its standard output (give it with --latency-ab-output); every row imports as a success"
	}
	return s.TotalsNote(r.ABName)
}

// Describe is one line on what the import read and kept, for the report:
// rows read and imported, outside the recording, bad rows with their
// first line, rows excluded, how a relative format was anchored and what
// the format cannot tell.
func (r *ImportReport) Describe() string {
	var parts []string
	if w := r.Window; w != nil {
		p := fmt.Sprintf("%d %s read, %d imported", r.Rows+r.Bad, r.unit(), w.Kept)
		if w.Before+w.After > 0 {
			p += fmt.Sprintf(", %d outside the recording (%s)", w.Before+w.After, r.rangeText())
		}
		parts = append(parts, p)
	} else {
		parts = append(parts, fmt.Sprintf("%d %s read, %d imported", r.Rows+r.Bad, r.unit(), r.Rows))
	}
	if r.Bad > 0 {
		lines := make([]string, 0, 5)
		for _, l := range r.BadLines[:min(5, len(r.BadLines))] {
			lines = append(lines, fmt.Sprint(l.Line))
		}
		more := ""
		if r.Bad > len(lines) {
			more = ", …"
		}
		parts = append(parts, fmt.Sprintf("%d bad (line %s%s)", r.Bad, strings.Join(lines, ", "), more))
	}
	if r.Columns != "" {
		parts = append(parts, "columns from "+r.Columns)
	}
	if r.Transactions > 0 {
		parts = append(parts, fmt.Sprintf("%d Transaction Controller rows excluded (they repeat their samples)", r.Transactions))
	}
	if r.Truncated > 0 {
		parts = append(parts, fmt.Sprintf("line %d cut short, not read", r.Truncated))
	}
	if r.Resolution > 0 {
		parts = append(parts, fmt.Sprintf("timestamps to %s, read as the middle of it", r.Resolution))
	}
	if r.StartFrom != "" {
		parts = append(parts, "offsets anchored at "+r.StartFrom)
	}
	switch r.Format {
	case formatAB:
		parts = append(parts, r.abNote())
	case formatHey:
		parts = append(parts, "hey writes no row for a request that got no response: memdiag cannot know how many failed that way (see hey's own summary)")
	case formatLocust:
		parts = append(parts, "Locust's stats history is coarse: counts per row, percentiles over its ~10 s window; use the request hook in docs/latency.md for exact per-request rows")
	}
	return fmt.Sprintf("%s (%s): %s", r.Name, r.Format, strings.Join(parts, "; "))
}
