package latency

import (
	"fmt"
	"time"
)

// hey parses `hey -o csv` output (rakyll/hey, requester/print.go):
//
//	response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset
//	0.0026,0.0004,0.0000,0.0001,0.0014,0.0007,200,0.2010
//
// response-time is the request's total time and offset its start, both in
// seconds with four decimals (100 µs resolution); offset counts from the
// start of the run, which hey does not write (see ImportOptions.Start).
// hey writes no row for a request that failed without a response (its
// errors appear only in the summary), so Request.Err is set only for
// status ≥ 400, and failed requests are missing from the import.
type hey struct {
	start                  time.Time
	init                   bool
	rt, status, off, width int
}

func (*hey) multiline() {}

func (h *hey) parse(rec string) (row, bool, bool, error) {
	f, err := splitCSV(rec, ',')
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if !h.init {
		h.rt, h.status, h.off = indexOf(f, "response-time"), indexOf(f, "status-code"), indexOf(f, "offset")
		if h.rt < 0 || h.off < 0 {
			return row{}, false, false, fmt.Errorf("%w: hey CSV must start with its header (response-time,…,offset)", ErrParse)
		}
		h.init = true
		h.width = max(h.rt, h.status, h.off) + 1
		if h.start.IsZero() {
			h.start = time.Unix(0, 0).UTC()
		}
		return row{}, false, false, nil
	}
	if err := need(f, h.width); err != nil {
		return row{}, false, false, err
	}
	lat, err := parseFloatUnit(f[h.rt], time.Second)
	if err != nil {
		return row{}, false, false, bad("response-time", err)
	}
	off, err := parseFloatUnit(f[h.off], time.Second)
	if err != nil {
		return row{}, false, false, bad("offset", err)
	}
	q := Request{Start: h.start.Add(off), Latency: lat}
	if h.status >= 0 {
		if q.Status, err = atoiField("status-code", f[h.status]); err != nil {
			return row{}, false, false, err
		}
		q.Err = q.Status >= 400
	}
	return row{req: q}, true, false, nil
}
