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
		j.ts, j.elapsed, j.code, j.success, j.msg, j.width = 0, 1, 3, 7, 4, 8
		if f, err := splitCSV(rec, j.sep); err == nil && (indexOf(f, "timeStamp") >= 0 || indexOf(f, "elapsed") >= 0) {
			j.ts, j.elapsed, j.code, j.success = indexOf(f, "timeStamp"), indexOf(f, "elapsed"), indexOf(f, "responseCode"), indexOf(f, "success")
			j.msg = indexOf(f, "responseMessage")
			switch {
			case j.elapsed < 0:
				j.hdrErr = fmt.Errorf("%w: JTL header has no elapsed column (JMeter ran with jmeter.save.saveservice.time=false): no latency in this file", ErrParse)
			case j.ts < 0:
				j.hdrErr = fmt.Errorf("%w: JTL header has no timeStamp column (jmeter.save.saveservice.timestamp_format=none): requests cannot be placed in time", ErrParse)
			}
			if j.hdrErr != nil {
				return row{}, false, false, j.hdrErr
			}
			j.width = max(j.ts, j.elapsed, j.code, j.success, j.msg) + 1
			return row{}, false, false, nil
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
	t, err := parseTime(f[j.ts], j.loc)
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
