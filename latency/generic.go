package latency

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// generic parses a plain CSV (comma or tab) of one request per row:
//
//	timestamp,latency_ms,status
//	2026-11-29T22:00:00.250+01:00,12.5,200
//
// or, without a header, timestamp,latency[,status] with the unit on each
// latency ("12.5ms", "800us", "1.2s").
//
// A header is recognised when its columns name a time (timestamp, time,
// ts, start, start_time, date, datetime) and a latency (latency,
// duration, elapsed, response_time, rt); the latency column's unit comes
// from a suffix of its name (_ns, _us, _µs, _ms, _s, or "(ms)", "[ms]")
// or, failing that, from the values or ImportOptions.LatencyUnit. Optional
// columns: status (status, code, status_code, http_status; 0 or ≥ 400
// sets Request.Err, as vegeta counts 200–399 as success) and error
// (error or err: non-empty and not "false"/"0" sets Request.Err; success
// or ok: "false"/"0" sets it). Timestamps are the request start (see
// [parseTime] for the accepted forms).
type generic struct {
	loc  *time.Location
	unit time.Duration
	init bool
	sep  rune
	cols genericCols
}

type genericCols struct {
	ts, lat, status, errc, ok, width int
}

func (*generic) multiline() {}

var (
	genericTime   = []string{"timestamp", "time", "ts", "start", "start_time", "date", "datetime"}
	genericLat    = []string{"latency", "duration", "elapsed", "response_time", "rt"}
	genericStatus = []string{"status", "code", "status_code", "http_status"}
	unitSuffix    = []struct {
		s string
		d time.Duration
	}{{"ns", time.Nanosecond}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}}
)

// splitUnit splits a column name like "latency_ms" or "latency (ms)" into
// "latency" and its unit.
func splitUnit(name string) (string, time.Duration) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, u := range unitSuffix {
		for _, form := range []string{"_" + u.s, " (" + u.s + ")", "(" + u.s + ")", " [" + u.s + "]", "[" + u.s + "]", " " + u.s} {
			if base, ok := strings.CutSuffix(name, form); ok && base != "" {
				return strings.TrimSpace(base), u.d
			}
		}
	}
	return name, 0
}

// genericHeader maps a header record to columns; ok is false when it does
// not name both a time and a latency column.
func genericHeader(f []string) (genericCols, time.Duration, bool) {
	c := genericCols{ts: -1, lat: -1, status: -1, errc: -1, ok: -1}
	var unit time.Duration
	for i, name := range f {
		base, u := splitUnit(name)
		switch {
		case c.ts < 0 && slices.Contains(genericTime, base):
			c.ts = i
		case c.lat < 0 && slices.Contains(genericLat, base):
			c.lat, unit = i, u
		case c.status < 0 && slices.Contains(genericStatus, base):
			c.status = i
		case c.errc < 0 && (base == "error" || base == "err"):
			c.errc = i
		case c.ok < 0 && (base == "success" || base == "ok"):
			c.ok = i
		}
	}
	if c.ts < 0 || c.lat < 0 {
		return c, 0, false
	}
	c.width = max(c.ts, c.lat, c.status, c.errc, c.ok) + 1
	return c, unit, true
}

func (g *generic) parse(rec string) (row, bool, bool, error) {
	if !g.init {
		g.init = true
		g.sep = ','
		if strings.Contains(rec, "\t") && !strings.Contains(rec, ",") {
			g.sep = '\t'
		}
		g.cols = genericCols{ts: 0, lat: 1, status: -1, errc: -1, ok: -1, width: 2}
		if f, err := splitCSV(rec, g.sep); err == nil {
			if c, u, ok := genericHeader(f); ok {
				g.cols = c
				if u > 0 {
					g.unit = u
				}
				return row{}, false, false, nil
			}
			if len(f) >= 3 {
				g.cols.status = 2
			}
		}
	}
	f, err := splitCSV(rec, g.sep)
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if err := need(f, g.cols.width); err != nil {
		return row{}, false, false, err
	}
	t, err := parseTime(f[g.cols.ts], g.loc)
	if err != nil {
		return row{}, false, false, bad("timestamp", err)
	}
	lat, err := parseLatency(f[g.cols.lat], g.unit)
	if err != nil {
		return row{}, false, false, bad("latency", err)
	}
	q := Request{Start: t, Latency: lat}
	if c := g.cols.status; c >= 0 && c < len(f) && strings.TrimSpace(f[c]) != "" {
		if q.Status, err = atoiField("status", f[c]); err != nil {
			return row{}, false, false, err
		}
		q.Err = q.Status == 0 || q.Status >= 400
	}
	if c := g.cols.errc; c >= 0 && c < len(f) {
		v := strings.ToLower(strings.TrimSpace(f[c]))
		q.Err = q.Err || (v != "" && v != "false" && v != "0")
	}
	if c := g.cols.ok; c >= 0 && c < len(f) {
		v, err := strconv.ParseBool(strings.TrimSpace(f[c]))
		if err != nil {
			return row{}, false, false, bad("success", errors.New("want true/false"))
		}
		q.Err = q.Err || !v
	}
	return row{req: q}, true, false, nil
}
