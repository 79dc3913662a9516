package latency

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// gatling parses the text simulation.log of Gatling 3.0 to 3.12
// (results/<run>/simulation.log; 3.13 switched to a binary file). Records
// are tab-separated, one per line, the first field naming the record
// (gatling-core io.gatling.core.stats.writer.LogFileDataWriter and
// RawRecords, v3.9.0):
//
//	RUN	<simulation class>	<simulation id>	<start ms>	<description>	<Gatling version>
//	USER	<scenario>	START|END	<timestamp ms>
//	REQUEST	<groups>	<name>	<start ms>	<end ms>	OK|KO	<message or " ">
//	GROUP	<groups>	<start ms>	<end ms>	<cumulated response time ms>	OK|KO
//	ERROR	<message>	<timestamp ms>
//	ASSERTION	<base64>
//
// Gatling 3.0-3.3 wrote a user id after REQUEST, USER and GROUP
// (REQUEST	<user id>	<groups>	…: 8 fields, against 7 since 3.4).
// Each REQUEST is one request starting at <start>, its latency end −
// start (ms); KO sets Request.Err. Gatling records no HTTP status (a
// failed check's message names it), so Status is 0. GROUP rows repeat
// the time of the requests inside them and the other records carry no
// request: all are counted as Skipped.
type gatling struct{}

func (gatling) parse(rec string) (row, bool, bool, error) {
	f := strings.Split(rec, "\t")
	switch f[0] {
	case "REQUEST":
	case "RUN", "USER", "GROUP", "ERROR", "ASSERTION":
		return row{}, false, true, nil
	default:
		return row{}, false, false, fmt.Errorf("%w: record %.20q, want RUN, USER, REQUEST, GROUP, ERROR or ASSERTION", ErrParse, f[0])
	}
	var start, end, status string
	switch len(f) {
	case 7: // 3.4+: REQUEST groups name start end status message
		start, end, status = f[3], f[4], f[5]
	case 8: // 3.0-3.3: REQUEST userId groups name start end status message
		if !isDigits(f[1]) {
			return row{}, false, false, bad("user id", fmt.Errorf("not a number: %q", f[1]))
		}
		start, end, status = f[4], f[5], f[6]
	default:
		return row{}, false, false, fmt.Errorf("%w: REQUEST has %d fields, want 7 (Gatling 3.4+) or 8 (3.0-3.3)", ErrParse, len(f))
	}
	s, err := strconv.ParseInt(start, 10, 64)
	if err != nil || s < 0 {
		return row{}, false, false, bad("start", fmt.Errorf("not epoch milliseconds: %q", start))
	}
	e, err := strconv.ParseInt(end, 10, 64)
	switch {
	case err != nil:
		return row{}, false, false, bad("end", fmt.Errorf("not epoch milliseconds: %q", end))
	case e < s:
		// Gatling writes Long.MinValue for an unmatched incoming message
		// (WebSocket, SSE): no request with a latency.
		return row{}, false, false, bad("end", fmt.Errorf("%d is before the start %d", e, s))
	case e-s > maxElapsedMs:
		return row{}, false, false, bad("end", fmt.Errorf("%d ms after the start is beyond 292 years", e-s))
	}
	q := Request{Start: time.UnixMilli(s).UTC(), Latency: time.Duration(e-s) * time.Millisecond}
	switch status {
	case "OK":
	case "KO":
		q.Err = true
	default:
		return row{}, false, false, bad("status", fmt.Errorf("want OK or KO, got %q", status))
	}
	return row{req: q}, true, false, nil
}
