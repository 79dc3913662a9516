package latency

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// k6 metric holding per-request latency: sending + waiting + receiving, in
// milliseconds; it excludes DNS, connect and TLS time (k6 docs, "Built-in
// metrics").
const k6Duration = "http_req_duration"

// k6JSON parses `k6 run --out json=FILE`: one JSON object per line, either
// a metric declaration or a sample point:
//
//	{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time",…},"metric":"http_req_duration"}
//	{"type":"Point","data":{"time":"2026-11-29T22:10:01.123456+01:00","value":12.34,"tags":{"status":"200",…}},"metric":"http_req_duration"}
//
// Only http_req_duration points become requests; other lines are counted
// as Skipped. k6 stamps an HTTP sample with the end of the request, so
// Start is time minus value (value in ms); DNS/connect time, not part of
// http_req_duration, is not covered. Status comes from the "status" tag
// (0 for a failed request); Err is set when the "expected_response" tag
// is "false" or, without that tag (k6 < 0.31), when status is 0 or ≥ 400.
type k6JSON struct{}

type k6Line struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  *time.Time        `json:"time"`
		Value *float64          `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

func (k6JSON) parse(rec string) (row, bool, bool, error) {
	var l k6Line
	if err := json.Unmarshal([]byte(rec), &l); err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	switch {
	case l.Type == "Metric":
		return row{}, false, true, nil
	case l.Type != "Point":
		return row{}, false, false, fmt.Errorf("%w: type %q, want Point or Metric", ErrParse, l.Type)
	case l.Metric != k6Duration:
		return row{}, false, true, nil
	case l.Data.Time == nil || l.Data.Value == nil:
		return row{}, false, false, fmt.Errorf("%w: point without time or value", ErrParse)
	}
	lat, err := scaled(*l.Data.Value, time.Millisecond)
	if err != nil {
		return row{}, false, false, bad("value", err)
	}
	q, err := k6Request(l.Data.Time.Add(-lat), lat, l.Data.Tags["status"], l.Data.Tags["expected_response"])
	return row{req: q}, err == nil, false, err
}

func k6Request(start time.Time, lat time.Duration, status, expected string) (Request, error) {
	q := Request{Start: start, Latency: lat}
	if status != "" {
		s, err := strconv.Atoi(status)
		if err != nil {
			return q, bad("status", fmt.Errorf("not an integer: %q", status))
		}
		q.Status = s
	}
	switch expected {
	case "true":
	case "false":
		q.Err = true
	default:
		q.Err = q.Status == 0 || q.Status >= 400
	}
	return q, nil
}

// k6CSV parses `k6 run --out csv=FILE`. The header names the columns; k6
// v0.3x–0.5x write
//
//	metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata
//	http_req_duration,1795990201,12.345600,,,,true,,GET,http://127.0.0.1:8080/,HTTP/1.1,default,,200,,,http://127.0.0.1:8080/,,
//
// The parser finds metric_name, timestamp, metric_value, status and
// expected_response by name. timestamp is Unix seconds by default
// (csv.timeFormat=unix), or ms/µs/ns or RFC 3339 with other timeFormat
// values; all are read. As in [k6JSON], it is the end of the request, so
// with whole-second stamps the start is only known to ±1 s.
type k6CSV struct {
	loc                                      *time.Location
	rep                                      *ImportReport
	init                                     bool
	name, ts, value, status, expected, width int
	hdrErr                                   error
}

func (*k6CSV) multiline() {}

func (k *k6CSV) parse(rec string) (row, bool, bool, error) {
	if k.hdrErr != nil {
		return row{}, false, false, k.hdrErr
	}
	f, err := splitCSV(rec, ',')
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if !k.init {
		k.init = true
		k.name, k.ts, k.value = indexOf(f, "metric_name"), indexOf(f, "timestamp"), indexOf(f, "metric_value")
		k.status, k.expected = indexOf(f, "status"), indexOf(f, "expected_response")
		switch {
		case k.name < 0:
			k.hdrErr = fmt.Errorf("%w: k6 CSV must start with its header (metric_name,timestamp,metric_value,…)", ErrParse)
		case k.ts < 0 || k.value < 0:
			k.hdrErr = fmt.Errorf("%w: k6 CSV header lacks timestamp or metric_value", ErrParse)
		}
		if k.hdrErr != nil {
			return row{}, false, false, k.hdrErr
		}
		k.width = max(k.name, k.ts, k.value, k.status, k.expected) + 1
		return row{}, false, false, nil
	}
	if err := need(f, k.name+1); err != nil {
		return row{}, false, false, err
	}
	if f[k.name] != k6Duration {
		return row{}, false, true, nil
	}
	if err := need(f, k.width); err != nil {
		return row{}, false, false, err
	}
	end, err := parseTime(f[k.ts], k.loc)
	if err != nil {
		return row{}, false, false, bad("timestamp", err)
	}
	if s := strings.TrimSpace(f[k.ts]); isDigits(s) && len(s) <= 11 {
		// k6's default timeFormat "unix" writes sample.Time.Unix(): the
		// end truncated to the second, so it lies in [ts, ts+1 s). The
		// midpoint halves the error and removes the 0.5 s early bias.
		end = end.Add(k6WholeSecond / 2)
		if k.rep != nil {
			k.rep.Resolution = max(k.rep.Resolution, k6WholeSecond)
		}
	}
	lat, err := parseFloatUnit(f[k.value], time.Millisecond)
	if err != nil {
		return row{}, false, false, bad("metric_value", err)
	}
	var status, expected string
	if k.status >= 0 {
		status = f[k.status]
	}
	if k.expected >= 0 {
		expected = f[k.expected]
	}
	q, err := k6Request(end.Add(-lat), lat, status, expected)
	return row{req: q}, err == nil, false, err
}

// k6WholeSecond is the resolution of k6 CSV's default timestamps.
const k6WholeSecond = time.Second
