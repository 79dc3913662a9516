package latency

import (
	"fmt"
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
	loc                        *time.Location
	init                       bool
	sep                        rune
	ts, elapsed, code, success int
	width                      int
}

func (*jmeter) multiline() {}

func (j *jmeter) parse(rec string) (row, bool, bool, error) {
	if !j.init {
		j.init = true
		j.sep = ','
		if strings.Contains(rec, "\t") && !strings.Contains(rec, ",") {
			j.sep = '\t'
		}
		j.ts, j.elapsed, j.code, j.success, j.width = 0, 1, 3, 7, 8
		if f, err := splitCSV(rec, j.sep); err == nil && indexOf(f, "timeStamp") >= 0 {
			j.ts, j.elapsed, j.code, j.success = indexOf(f, "timeStamp"), indexOf(f, "elapsed"), indexOf(f, "responseCode"), indexOf(f, "success")
			if j.elapsed < 0 {
				return row{}, false, false, fmt.Errorf("%w: JTL header has no elapsed column", ErrParse)
			}
			j.width = max(j.ts, j.elapsed, j.code, j.success) + 1
			return row{}, false, false, nil
		}
	}
	f, err := splitCSV(rec, j.sep)
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if err := need(f, j.width); err != nil {
		return row{}, false, false, err
	}
	t, err := parseTime(f[j.ts], j.loc)
	if err != nil {
		return row{}, false, false, bad("timeStamp", err)
	}
	ms, err := atoiField("elapsed", f[j.elapsed])
	if err != nil {
		return row{}, false, false, err
	}
	if ms < 0 {
		return row{}, false, false, bad("elapsed", fmt.Errorf("negative: %d", ms))
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
