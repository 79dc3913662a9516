package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
)

// latencyInput is how analyze and compare read a load-test results file.
type latencyInput struct {
	Format string // --latency-format; "" detects
	TZ     string // --latency-tz: zone of timestamps written without one; "" = the recording's
	Unit   string // --latency-unit: unit of bare latency numbers (generic CSV)
	Start  string // --latency-start: start of a run whose file holds offsets only (hey)
	// MinShare is the share (0–1) of the file's requests that must fall
	// inside the recording (--latency-min-share); under it is an error.
	// Whatever it is, a file none of whose requests is inside is an error.
	MinShare float64
	// WithFailed puts failed requests into the latency statistics
	// (--latency-with-failed); by default they are counted apart.
	WithFailed bool
	// Columns and Properties give the columns of a header-less JMeter
	// CSV: a list in JMeter's header spelling (--latency-columns), or
	// the properties file JMeter ran with (--latency-properties).
	Columns, Properties string
}

// addJMeterFlags adds --latency-columns and --latency-properties (analyze,
// compare and watch).
func addJMeterFlags(fl *pflag.FlagSet, columns, props *string) {
	fl.StringVar(columns, "latency-columns", "", "`columns` of a JMeter CSV without header line, as JMeter names them in a header (timeStamp,elapsed,label,responseCode,responseMessage,success,…)")
	fl.StringVar(props, "latency-properties", "", "JMeter properties `file` (user.properties, or what -q/-p gave) whose jmeter.save.saveservice.* settings say the columns, delimiter and timestamp format of a JMeter CSV without header line")
}

// jmeterSave reads --latency-columns or --latency-properties (nil, nil
// when neither is given).
func jmeterSave(columns, props string) (*latency.JMeterSave, error) {
	switch {
	case columns != "" && props != "":
		return nil, flagErrorf("--latency-columns and --latency-properties: give one (the columns, or the properties JMeter ran with)")
	case columns != "":
		s, err := latency.ParseJMeterColumns(columns)
		if err != nil {
			return nil, &usageError{Err: fmt.Errorf("--latency-columns: %w", err)}
		}
		return s, nil
	case props != "":
		if err := checkInput("--latency-properties", props); err != nil {
			return nil, err
		}
		f, err := os.Open(props)
		if err != nil {
			return nil, &usageError{Err: fmt.Errorf("--latency-properties: %w", err)}
		}
		defer f.Close()
		s, err := latency.ParseJMeterProperties(f, props)
		if err != nil {
			return nil, &usageError{Err: fmt.Errorf("--latency-properties: %w", err)}
		}
		return s, nil
	}
	return nil, nil
}

// addFlags adds the flags shared by analyze and compare (not --latency-format
// and --latency-tz, which each command declares).
func (l *latencyInput) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&l.Unit, "latency-unit", "", "`unit` of bare latency numbers in a generic CSV whose header names none: ns, us, ms or s")
	fl.StringVar(&l.Start, "latency-start", "", "start `time` of a run whose file holds only offsets from it (hey), RFC 3339 or Unix seconds (default: the wrapped command's start recorded by watch, else the file's modification time minus its last request's end)")
	fl.Float64Var(&l.MinShare, "latency-min-share", 0, "fail when less than this `share` (0-1) of the file's requests lies inside the recording (a file with none inside always fails)")
	fl.BoolVar(&l.WithFailed, "latency-with-failed", false, "include failed requests in the latency statistics (default: successful requests only; failures are counted apart)")
	addJMeterFlags(fl, &l.Columns, &l.Properties)
}

var latencyUnits = map[string]time.Duration{"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond, "ms": time.Millisecond, "s": time.Second}

// importOptions turns the flags into import options for a recording with
// header h; the results' zone-less timestamps are read in the
// recording's zone unless --latency-tz says otherwise.
func (l latencyInput) importOptions(h *record.Header) (latency.ImportOptions, string, error) {
	o := latency.ImportOptions{Format: l.Format, Location: correlate.Location(h, nil)}
	if l.TZ != "" {
		loc, err := time.LoadLocation(l.TZ)
		if err != nil {
			return o, "", &usageError{Err: fmt.Errorf("--latency-tz: %w", err)}
		}
		o.Location = loc
	}
	if l.Unit != "" {
		u, ok := latencyUnits[strings.ToLower(l.Unit)]
		if !ok {
			return o, "", flagErrorf("--latency-unit: want ns, us, ms or s, got %q", l.Unit)
		}
		o.LatencyUnit = u
	}
	js, err := jmeterSave(l.Columns, l.Properties)
	if err != nil {
		return o, "", err
	}
	o.JMeter = js
	if l.MinShare < 0 || l.MinShare > 1 {
		return o, "", flagErrorf("--latency-min-share: want a share from 0 to 1, got %g", l.MinShare)
	}
	from := ""
	switch {
	case l.Start != "":
		t, err := parseStartFlag(l.Start)
		if err != nil {
			return o, "", &usageError{Err: fmt.Errorf("--latency-start: %w", err)}
		}
		o.Start, from = t, latency.StartOption+" (--latency-start)"
	}
	return o, from, nil
}

func parseStartFlag(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	// Unix seconds up to time.Duration's limit since the epoch (year
	// 2262): past it, f*1e9 wraps to a time before 1970.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < math.MaxInt64/1e9 {
		return time.Unix(0, int64(f*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("want RFC 3339 (2026-11-29T21:43:00+01:00) or Unix seconds, got %q", s)
}

// importFor imports the results file latFile for a recording with header
// h (nil, nil when latFile is "").
func importFor(ctx context.Context, ios *iostreams.IOStreams, h *record.Header, latFile string, lo latencyInput) (*latency.Imported, error) {
	if latFile == "" {
		return nil, nil
	}
	o, from, err := lo.importOptions(h)
	if err != nil {
		return nil, err
	}
	imp, err := importLatency(ctx, ios, latFile, o)
	if err != nil {
		return nil, err
	}
	if imp.Report.StartFrom != "" && imp.Report.StartFrom != latency.StartMtime && from != "" {
		imp.Report.StartFrom = from
	}
	analysis.AnchorAtCommand(imp, h.CommandStart)
	return imp, nil
}

// importLatency reads a load-test results file, or standard input for
// "-"; its reads stop once ctx is done (Ctrl-C).
func importLatency(ctx context.Context, ios *iostreams.IOStreams, path string, o latency.ImportOptions) (*latency.Imported, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var imp *latency.Imported
	var err error
	if path == "-" {
		imp, err = latency.Import(ctxReader{ctx, ios.In}, stdinName, o)
	} else if err = checkInput("--latency", path); err == nil {
		imp, err = latency.ImportFileContext(ctx, path, o)
	}
	if err != nil {
		if errors.Is(err, latency.ErrFormat) {
			return nil, &usageError{Err: fmt.Errorf("%w (use --latency-format to name it: %v)", err, latency.Formats)}
		}
		return nil, err
	}
	return imp, nil
}
