package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/memdiag/memdiag/record"
)

// LiveRows writes `memdiag watch`'s live rows as the samples come: a row
// per interval to out, the legend once to errOut before the first row,
// the column header every 20 rows. When a write to out fails with EPIPE
// (the reader went away: watch | head) it stops writing (Broken); the
// recording goes on.
type LiveRows struct {
	out, errOut io.Writer
	hdr         *record.Header
	view        *LiveView
	on          bool
	prev        *record.Sample
	// Rows is how many rows were written; Broken, whether out was closed.
	Rows   int
	Broken bool
	// Forecast, when set, is asked at each row for the forecast line
	// (ForecastLine): it is written above the column header, and as soon
	// as its job or its firings change.
	Forecast func(at time.Time) (Forecast, bool)
	width    int
	lastFc   string // the job and firings of the last forecast line written
}

// NewLiveRows returns the live rows of a recording with header hdr; off
// (watch --quiet) writes none. The view has the latency columns when hdr
// records a probe or a results file and the cgroup's when it has one,
// whatever o says.
func NewLiveRows(out, errOut io.Writer, hdr *record.Header, on bool, o LiveOptions) *LiveRows {
	o.Latency = hdr.Probe != "" || hdr.LatencyFile != ""
	o.Cgroup = hdr.Cgroup != ""
	return &LiveRows{out: out, errOut: errOut, hdr: hdr, on: on, view: NewLiveView(o), width: o.Width}
}

// Row writes the row of the interval that ends with s; final marks the
// last, partial interval (the sample taken after the run ended).
func (l *LiveRows) Row(s *record.Sample, final bool) {
	prev := l.prev
	l.prev = s
	if prev == nil || !l.on || l.Broken {
		return
	}
	var b strings.Builder
	if l.Rows == 0 {
		// What the columns hold, and which did not fit, once.
		fmt.Fprintln(l.errOut, l.view.Legend())
	}
	l.forecast(&b, s.Time, l.Rows%20 == 0)
	if l.Rows%20 == 0 {
		fmt.Fprintln(&b, l.view.Header())
	}
	if final {
		fmt.Fprintln(&b, l.view.FinalRow(record.Between(l.hdr, prev, s), s))
	} else {
		fmt.Fprintln(&b, l.view.Row(record.Between(l.hdr, prev, s), s))
	}
	if _, err := io.WriteString(l.out, b.String()); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			l.Broken = true
		}
		return
	}
	l.Rows++
}

// forecast writes the forecast line to b when there is one and header
// is true (a column header follows) or it names another job or other
// firings than the last one written.
func (l *LiveRows) forecast(b *strings.Builder, at time.Time, header bool) {
	if l.Forecast == nil {
		return
	}
	f, ok := l.Forecast(at)
	if !ok {
		l.lastFc = ""
		return
	}
	key := fmt.Sprintf("%s %d/%d", f.Job, f.Stalled, f.Of)
	if !header && key == l.lastFc {
		return
	}
	l.lastFc = key
	fmt.Fprintln(b, ForecastLine(f, l.width))
}
