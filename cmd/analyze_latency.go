package cmd

import (
	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/analysis"
	"github.com/memdiag/memdiag/latency"
)

// latencyFlags adds the --latency-* flags shared by analyze and compare
// (not --latency-format and --latency-tz, which each command declares).
func latencyFlags(fl *pflag.FlagSet, l *analysis.LatencyFlags) {
	fl.StringVar(&l.Unit, "latency-unit", "", "`unit` of bare latency numbers in a generic CSV whose header names none: ns, us, ms or s")
	fl.StringVar(&l.Start, "latency-start", "", "start `time` of a run whose file holds only offsets from it (hey), RFC 3339 or Unix seconds (default: the file's modification time minus its last request's end, when that lies within 2 s after the start of the command watch wrapped (hey's start-up); else that command's start; without one, the modification time's)")
	fl.Float64Var(&l.MinShare, "latency-min-share", 0, "fail when less than this `share` (0-1) of the file's requests lies inside the recording (a file with none inside always fails)")
	fl.BoolVar(&l.WithFailed, "latency-with-failed", false, "include failed requests in the latency statistics (default: successful requests only; failures are counted apart)")
	fl.StringVar(&l.ABOutput, "latency-ab-output", "", "ab's standard output saved to a `FILE`, for an ab -g --latency file: ab counts failed and non-2xx requests only there (said as totals; ab -g cannot place them in time)")
	addJMeterFlags(fl, &l.Columns, &l.Properties)
}

// addJMeterFlags adds --latency-columns and --latency-properties (analyze,
// compare and watch).
func addJMeterFlags(fl *pflag.FlagSet, columns, props *string) {
	fl.StringVar(columns, "latency-columns", "", "`columns` of a JMeter CSV without header line, as JMeter names them in a header (timeStamp,elapsed,label,…)")
	fl.StringVar(props, "latency-properties", "", "JMeter properties `file` (user.properties, or what -q/-p gave) whose jmeter.save.saveservice.* settings say the columns, delimiter and timestamp format of a JMeter CSV without header line")
}

// jmeterSave is analysis.JMeterSave with its bad flags as usage errors
// (watch's --latency-columns and --latency-properties).
func jmeterSave(columns, props string) (*latency.JMeterSave, error) {
	js, err := analysis.JMeterSave(columns, props)
	return js, asUsage(err)
}
