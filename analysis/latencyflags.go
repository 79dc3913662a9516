package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/latency"
	"github.com/memdiag/memdiag/record"
)

// LatencyFlags say how analyze and compare read a load-test results file
// (the --latency-* flags).
type LatencyFlags struct {
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
	// ABOutput is ab's standard output saved to a file
	// (--latency-ab-output), for an ab -g --latency file: the only place
	// ab counts its failed and non-2xx requests. "" when not given.
	ABOutput string
}

// Import imports the results file path ("-": stdin) for a recording
// with header h; nil, nil when path is "". Bad flag values are
// *usage.Error, a file that cannot be read a *rootfs.NamedError.
//
// Its reads stop once ctx is done (Ctrl-C); a nil ctx never ends them.
func (l LatencyFlags) Import(ctx context.Context, stdin io.Reader, h *record.Header, path string) (*latency.Imported, error) {
	if path == "" {
		return nil, nil
	}
	o, from, err := l.ImportOptions(h)
	if err != nil {
		return nil, err
	}
	imp, err := importFile(ctx, stdin, path, o)
	if err != nil {
		return nil, err
	}
	if imp.Report.StartFrom != "" && imp.Report.StartFrom != latency.StartMtime && from != "" {
		imp.Report.StartFrom = from
	}
	AnchorAtCommand(imp, h.CommandStart)
	if err := l.readABOutput(ctx, imp); err != nil {
		return nil, err
	}
	return imp, nil
}

// readABOutput reads --latency-ab-output into imp's report: ab's
// standard output (at most 16 MiB), for a --latency file ab -g wrote.
func (l LatencyFlags) readABOutput(ctx context.Context, imp *latency.Imported) error {
	if l.ABOutput == "" {
		return nil
	}
	if l.ABOutput == "-" {
		return usage.Errorf("--latency-ab-output: give ab's saved standard output as a file, not - (stdin)")
	}
	if imp.Report.Format != "ab" {
		return usage.Errorf("--latency-ab-output: the --latency file %s is %s, not ab -g", imp.Report.Name, imp.Report.Format)
	}
	rc, name, err := rootfs.OpenNamed(ctx, nil, "--latency-ab-output", l.ABOutput, 16<<20)
	if err != nil {
		return err
	}
	defer rc.Close()
	s, err := latency.ParseABSummary(rc, name)
	if err != nil {
		return usage.Flag("--latency-ab-output", err)
	}
	imp.Report.AB, imp.Report.ABName = &s, name
	return nil
}

// importFile reads a load-test results file, or stdin for "-", until
// ctx is done.
func importFile(ctx context.Context, stdin io.Reader, path string, o latency.ImportOptions) (*latency.Imported, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var imp *latency.Imported
	var err error
	if path == "-" {
		in := rootfs.Stdin(ctx, stdin, rootfs.LatencyLimit)
		imp, err = latency.Import(in, rootfs.StdinName, o)
		in.Close()
	} else if err = rootfs.CheckNamed("--latency", path); err == nil {
		imp, err = latency.ImportFileContext(ctx, path, o)
	}
	if errors.Is(err, latency.ErrFormat) {
		return nil, &usage.Error{Err: fmt.Errorf("%w (use --latency-format to name it: %v)", err, latency.Formats)}
	}
	return imp, err
}

var latencyUnits = map[string]time.Duration{"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond, "ms": time.Millisecond, "s": time.Second}

// ImportOptions are the import options of the flags for a recording with
// header h, and what --latency-start says the start came from ("" when
// not given); the results' zone-less timestamps are read in the
// recording's zone unless --latency-tz says otherwise.
func (l LatencyFlags) ImportOptions(h *record.Header) (latency.ImportOptions, string, error) {
	o := latency.ImportOptions{Format: l.Format, Location: correlate.Location(h, nil)}
	if l.TZ != "" {
		loc, err := time.LoadLocation(l.TZ)
		if err != nil {
			return o, "", usage.Flag("--latency-tz", err)
		}
		o.Location = loc
	}
	if l.Unit != "" {
		u, ok := latencyUnits[strings.ToLower(l.Unit)]
		if !ok {
			return o, "", usage.Errorf("--latency-unit: want ns, us, ms or s, got %q", l.Unit)
		}
		o.LatencyUnit = u
	}
	js, err := JMeterSave(l.Columns, l.Properties)
	if err != nil {
		return o, "", err
	}
	o.JMeter = js
	if l.MinShare < 0 || l.MinShare > 1 {
		return o, "", usage.Errorf("--latency-min-share: want a share from 0 to 1, got %g", l.MinShare)
	}
	if l.Start == "" {
		return o, "", nil
	}
	t, err := ParseStart(l.Start)
	if err != nil {
		return o, "", usage.Flag("--latency-start", err)
	}
	o.Start = t
	return o, latency.StartOption + " (--latency-start)", nil
}

// ParseStart reads --latency-start: RFC 3339 or Unix seconds.
func ParseStart(s string) (time.Time, error) {
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

// JMeterSave reads --latency-columns or --latency-properties (nil, nil
// when neither is given).
func JMeterSave(columns, props string) (*latency.JMeterSave, error) {
	switch {
	case columns != "" && props != "":
		return nil, usage.Errorf("--latency-columns and --latency-properties: give one (the columns, or the properties JMeter ran with)")
	case columns != "":
		s, err := latency.ParseJMeterColumns(columns)
		if err != nil {
			return nil, usage.Flag("--latency-columns", err)
		}
		return s, nil
	case props != "":
		if err := rootfs.CheckNamed("--latency-properties", props); err != nil {
			return nil, err
		}
		f, err := os.Open(props)
		if err != nil {
			return nil, usage.Flag("--latency-properties", err)
		}
		defer f.Close()
		s, err := latency.ParseJMeterProperties(f, props)
		if err != nil {
			return nil, usage.Flag("--latency-properties", err)
		}
		return s, nil
	}
	return nil, nil
}
