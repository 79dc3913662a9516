package latency

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// jmeter parses a JMeter JTL results file in CSV form (jmeter -n -t
// plan.jmx -l results.jtl). With jmeter.save.saveservice.print_field_names
// (default true since JMeter 3.0, false in 2.x) the first line names the
// columns; the parser finds timeStamp, elapsed, responseCode and success
// by name. Without it the default column order is assumed, whose first
// eight columns are the same in JMeter 2.13 and 5.x:
//
//	timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,…
//	1795988650410,3,hello,200,OK,probe 1-1,text,true,…
//
// timeStamp is epoch milliseconds, or a date in the format set by
// jmeter.save.saveservice.timestamp_format (read in ImportOptions.Location,
// since it has no zone). It is the sample start: JMeter's shipped
// jmeter.properties sets sampleresult.timestamp.start=true. elapsed is
// milliseconds from just before the request to the end of the response.
// A non-numeric responseCode ("Non HTTP response code: …") gives Status 0;
// success=false sets Request.Err. Tab-separated files
// (default_delimiter=\t) are read too. Sub-results (a redirect's "label-0"
// rows) are imported as separate requests.
type jmeter struct {
	loc                             *time.Location
	rep                             *ImportReport
	save                            *JMeterSave // columns, delimiter and date format of a header-less file; nil: JMeter's defaults
	init                            bool
	sep                             rune
	ts, elapsed, code, success, msg int
	width                           int
	hdrErr                          error // a header naming no timeStamp or elapsed: every row is bad
}

func (*jmeter) multiline() {}

// jmeterSep picks the separator of a JTL's first record: JMeter's
// jmeter.save.saveservice.default_delimiter is "," by default, often set
// to ";" or "\t" (the value "\t" means a tab).
func jmeterSep(rec string) rune {
	counts := map[rune]int{',': strings.Count(rec, ","), ';': strings.Count(rec, ";"), '\t': strings.Count(rec, "\t")}
	best := ','
	for _, r := range []rune{'\t', ';'} {
		if counts[r] > counts[best] {
			best = r
		}
	}
	return best
}

// transactionPrefix starts the responseMessage of a Transaction
// Controller's own sample (JMeter TransactionController, "Number of
// samples in transaction : 3, number of failing samples : 0"). Such a row
// repeats its children's time and errors: counting it would count the
// requests twice.
const transactionPrefix = "Number of samples in transaction"

// maxElapsedMs is the largest elapsed (ms) a Duration holds.
const maxElapsedMs = math.MaxInt64 / int64(time.Millisecond)

func (j *jmeter) parse(rec string) (row, bool, bool, error) {
	if !j.init {
		j.init = true
		j.sep = jmeterSep(rec)
		if j.save != nil && j.save.Delimiter != 0 {
			j.sep = j.save.Delimiter
		}
		j.ts, j.elapsed, j.code, j.success, j.msg, j.width = 0, 1, 3, 7, 4, 8
		if f, err := splitCSV(rec, j.sep); err == nil && (indexOf(f, "timeStamp") >= 0 || indexOf(f, "elapsed") >= 0) {
			j.columns(f)
			if j.hdrErr != nil {
				return row{}, false, false, j.hdrErr
			}
			if j.save != nil && j.rep != nil {
				j.rep.Columns = "the file's header (" + j.save.From + " not needed)"
			}
			return row{}, false, false, nil
		}
		if j.save != nil {
			j.saved(rec)
		}
	}
	if j.hdrErr != nil {
		return row{}, false, false, j.hdrErr
	}
	f, err := splitCSV(rec, j.sep)
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if err := need(f, j.width); err != nil {
		return row{}, false, false, err
	}
	if j.msg >= 0 && strings.HasPrefix(f[j.msg], transactionPrefix) {
		if j.rep != nil {
			j.rep.Transactions++
		}
		return row{}, false, false, nil
	}
	var t time.Time
	if j.save != nil && j.save.DateLayout != "" {
		t, err = parseLayout(j.save.DateLayout, f[j.ts], j.loc)
	} else {
		t, err = parseTime(f[j.ts], j.loc)
	}
	if err != nil {
		return row{}, false, false, bad("timeStamp", err)
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(f[j.elapsed]), 10, 64)
	switch {
	case err != nil:
		return row{}, false, false, bad("elapsed", fmt.Errorf("not an integer: %q", f[j.elapsed]))
	case ms < 0:
		return row{}, false, false, bad("elapsed", fmt.Errorf("negative: %d", ms))
	case ms > maxElapsedMs:
		return row{}, false, false, bad("elapsed", fmt.Errorf("%d ms is beyond 292 years", ms))
	}
	q := Request{Start: t, Latency: time.Duration(ms) * time.Millisecond}
	if j.code >= 0 {
		q.Status, _ = strconv.Atoi(f[j.code]) // "Non HTTP response code: …" → 0
	}
	if j.success >= 0 {
		switch f[j.success] {
		case "true":
		case "false":
			q.Err = true
		default:
			return row{}, false, false, bad("success", fmt.Errorf("want true or false, got %q", f[j.success]))
		}
	}
	return row{req: q}, true, false, nil
}

func indexOf(f []string, name string) int {
	for i, s := range f {
		if strings.TrimSpace(s) == name {
			return i
		}
	}
	return -1
}

// columns takes the positions of the fields from a header (or the
// columns the user gave), in JMeter's spelling.
func (j *jmeter) columns(f []string) {
	j.ts, j.elapsed, j.code, j.success = indexOf(f, "timeStamp"), indexOf(f, "elapsed"), indexOf(f, "responseCode"), indexOf(f, "success")
	j.msg = indexOf(f, "responseMessage")
	switch {
	case j.elapsed < 0:
		j.hdrErr = fmt.Errorf("%w: JTL header has no elapsed column (JMeter ran with jmeter.save.saveservice.time=false): no latency in this file", ErrParse)
	case j.ts < 0:
		j.hdrErr = fmt.Errorf("%w: JTL header has no timeStamp column (jmeter.save.saveservice.timestamp_format=none): requests cannot be placed in time", ErrParse)
	}
	j.width = max(j.ts, j.elapsed, j.code, j.success, j.msg) + 1
}

// saved sets the columns of a header-less file from j.save, choosing
// between JMeter 3.1+'s and 2.x's defaults by the first row's field
// count when the properties left that open.
func (j *jmeter) saved(rec string) {
	f, err := splitCSV(rec, j.sep)
	n := len(f)
	cols, which := j.save.Columns, ""
	switch {
	case err != nil:
		// The row is bad by itself; read the rest with Columns.
	case j.save.Alt != nil && n == len(j.save.Alt) && n != len(cols):
		cols, which = j.save.Alt, ", with JMeter 2.x's defaults for the columns it does not set"
	case j.save.Alt != nil && n == len(cols):
		which = ", with JMeter 3.1+'s defaults for the columns it does not set"
	case n != len(cols):
		alt := ""
		if j.save.Alt != nil {
			alt = fmt.Sprintf(" (%d with JMeter 2.x's defaults)", len(j.save.Alt))
		}
		j.hdrErr = fmt.Errorf("%w: the first row has %d fields, %s gives %d columns%s: %s", ErrParse, n, j.save.From, len(cols), alt, strings.Join(cols, ","))
		return
	}
	j.columns(cols)
	if j.hdrErr == nil && j.rep != nil {
		j.rep.Columns = fmt.Sprintf("%s%s: %s", j.save.From, which, strings.Join(cols, ","))
		if j.msg < 0 {
			j.rep.Columns += " (without responseMessage, Transaction Controller rows cannot be told from samples and count as requests)"
		}
	}
}

// parseLayout parses s with a layout from a JMeter timestamp_format; a
// layout without a zone reads s in loc (nil: an error, memdiag never
// guesses a zone).
func parseLayout(layout, s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(layout, "MST") || strings.Contains(layout, "-07") {
		return time.Parse(layout, s)
	}
	if loc == nil {
		return time.Time{}, errNoZone
	}
	return time.ParseInLocation(layout, s, loc)
}
