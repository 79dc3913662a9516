// Package analysis is the one pipeline of the commands that explain a
// recording (analyze, compare, analyze --prometheus, and watch's verdict
// through analyze): turn the flags into correlate's options ([Settings])
// and the results file's import ([LatencyFlags]), read the recording
// sample by sample ([Redacted] on the way) into a correlate.Series while
// the latency results are imported ([AnchorAtCommand] for a file of
// offsets), check that enough of it was recorded, join the latency and
// run correlate's analysis, with the trace the HTML report draws
// ([Recording]); each host of Prometheus data the same way ([Fleet],
// [Prometheus]). The recordings the user named are opened here too
// ([Input]: one file or stdin with a progress bar, or segments and store
// directories joined within a window). Bad flag values are *usage.Error.
// Writing the output stays in cmd; rendering is package report's.
package analysis

import (
	"slices"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// Source is a recording read sample by sample: one file (record.Reader)
// or joined segments of a store.
type Source interface {
	Header() record.Header
	Each(fn func(*record.Sample)) (*record.Recording, error)
}

// Options say how to analyze.
type Options struct {
	// Correlate are correlate's options; Project nil is timers.Project,
	// which recomputes each job's firings from the schedule stored in
	// the header.
	Correlate correlate.Options
	// Import imports the load-test results for a recording with header
	// h; nil (or a nil result) when latency comes from the recording.
	// Recording runs it while the samples are read.
	Import func(h *record.Header) (*latency.Imported, error)
	// MinShare is the share (0–1) of the results' rows that must fall
	// inside the recording (--latency-min-share).
	MinShare float64
	// WithFailed puts failed requests into the latency statistics.
	WithFailed bool
	// Trace asks for the result's trace (the HTML report's charts).
	Trace bool
	// Warn is told a problem of the results file that does not stop the
	// analysis (rows that could not be read); nil: not said.
	Warn func(error)
	// Redact has Recording read the source through Redacted (what
	// analyze and compare print, unless --no-redact).
	Redact bool
}

// Recording analyzes src as it is read, named name in errors; done ends
// the caller's progress display once the samples are read.
func Recording(src Source, name string, done func(), o Options) (correlate.Result, *correlate.Trace, error) {
	if o.Redact {
		src = Redacted(src)
	}
	h := src.Header()
	type imported struct {
		imp *latency.Imported
		err error
	}
	lat := make(chan imported, 1)
	go func() {
		var l imported
		if o.Import != nil {
			l.imp, l.err = o.Import(&h)
		}
		lat <- l
	}()
	sr := correlate.NewSeries(h)
	gaps := record.NewGaps(h)
	rec, err := src.Each(func(s *record.Sample) { gaps.Add(s); sr.Add(s) })
	done()
	if err != nil {
		return correlate.Result{}, nil, err
	}
	if err := record.NeedSamples(name, gaps.Samples(), rec.End, rec.Warnings); err != nil {
		return correlate.Result{}, nil, err
	}
	l := <-lat
	if l.err != nil {
		return correlate.Result{}, nil, l.err
	}
	ab, note := abCounts(rec.End, l.imp)
	warns := rec.Warnings
	if note != "" {
		warns = append(slices.Clone(warns), note)
	}
	res, t, err := Series(sr, warns, l.imp, o)
	res.AB = ab
	res.Lacks = gaps.Lines(rec.End, rec.Warnings)
	if gaps.PressureOnly() {
		res.Lacks = append(res.Lacks, record.PressureOnlyLine)
	}
	return res, t, err
}

// Series analyzes the samples added to sr, with the recording's warnings
// warns and the imported latency imp (nil: the recording's own). An
// import that cannot stand for the load test (latency.ErrOutside) is an
// error.
func Series(sr *correlate.Series, warns []string, imp *latency.Imported, o Options) (correlate.Result, *correlate.Trace, error) {
	co := o.Correlate
	if co.Project == nil {
		co.Project = timers.Project
	}
	co.LatencyWithFailed = o.WithFailed
	var notes []string
	if imp != nil {
		if err := imp.Report.Err(); err != nil && o.Warn != nil {
			o.Warn(err)
		}
		if from, to, ok := sr.Span(); ok {
			imp.Within(from, to)
		}
		if err := imp.Report.Check(o.MinShare); err != nil {
			return correlate.Result{}, nil, err
		}
		notes = append(notes, imp.Report.Describe())
		if imp.Requests.Len() > 0 {
			co.Requests = &imp.Requests
		} else {
			co.IntervalStats = imp.Intervals // Locust: per-interval rows only
		}
	}
	res := sr.Analyze(co)
	res.Warnings = append(correlate.Notes(append(warns, notes...)...), res.Warnings...)
	var t *correlate.Trace
	if o.Trace {
		t = sr.Trace(&res, co)
	}
	return res, t, nil
}

// capturedAB names where watch's copy of ab's report came from.
const capturedAB = "captured by watch"

// abCounts is what ab's report counted, for the analysis (Result.AB):
// an imported ab -g file's (--latency-ab-output), or, given none, the
// copy watch kept in the end line (record.End.AB) when it ran ab. The
// imported file takes that copy into its import line; the recording's
// own latency (watch --latency following ab -g) gets note, a line for
// the recording's warnings ("" when there is nothing to say).
func abCounts(end *record.End, imp *latency.Imported) (ab *latency.ABSummary, note string) {
	if imp != nil {
		if imp.Report.Format == "ab" && imp.Report.AB == nil && end != nil && end.AB != nil {
			s := end.AB.Summary()
			imp.Report.AB, imp.Report.ABName = &s, capturedAB
		}
		return imp.Report.AB, ""
	}
	if end == nil || end.AB == nil {
		return nil, ""
	}
	s := end.AB.Summary()
	return &s, s.TotalsNote(capturedAB)
}

// Verdict is what `memdiag analyze` concludes of a recording read whole
// with its default flags and no results file: the verdict gate's culprit
// notes and confirm --recording act on, so that they name what analyze
// names.
func Verdict(rec *record.Recording) correlate.Result {
	res, _, _ := Series(correlate.SeriesOf(rec), rec.Warnings, nil, Options{}) // no import: no error
	return res
}
