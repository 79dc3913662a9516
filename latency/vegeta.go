package latency

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// vegetaCSV parses `vegeta encode --to csv` output (vegeta v12,
// lib/results.go NewCSVEncoder). It has no header; the columns are:
//
//	timestamp,code,latency,bytes_out,bytes_in,error,body,attack,seq,method,url,headers
//	1795988650410552652,200,2968143,0,3,,aGkK,,0,GET,http://127.0.0.1:18931/hello.txt,Q29u…
//
// timestamp is the request start in Unix nanoseconds, latency nanoseconds
// to the end of the response body, code 0 when no response came. error is
// vegeta's error text, set also for statuses outside 200–399; such rows
// have Request.Err set. body and headers are base64 and are not decoded.
type vegetaCSV struct{}

func (vegetaCSV) multiline() {}

func (vegetaCSV) parse(rec string) (row, bool, bool, error) {
	f, err := splitCSV(rec, ',')
	if err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	if err := need(f, 6); err != nil {
		return row{}, false, false, err
	}
	if !isDigits(f[0]) {
		return row{}, false, false, bad("timestamp", fmt.Errorf("want Unix ns, got %q", f[0]))
	}
	t, err := parseEpoch(f[0])
	if err != nil {
		return row{}, false, false, bad("timestamp", err)
	}
	code, err := atoiField("code", f[1])
	if err != nil {
		return row{}, false, false, err
	}
	lat, err := parseFloatUnit(f[2], time.Nanosecond)
	if err != nil {
		return row{}, false, false, bad("latency", err)
	}
	return row{req: Request{Start: t, Latency: lat, Status: code, Err: code == 0 || f[5] != ""}}, true, false, nil
}

// vegetaJSON parses `vegeta encode --to json` output: one JSON object per
// line with "timestamp" (RFC 3339, request start), "latency" (ns), "code"
// and "error" (see [vegetaCSV]).
type vegetaJSON struct{}

type vegetaResult struct {
	Code      *int       `json:"code"`
	Timestamp *time.Time `json:"timestamp"`
	Latency   *int64     `json:"latency"`
	Error     string     `json:"error"`
}

func (vegetaJSON) parse(rec string) (row, bool, bool, error) {
	var v vegetaResult
	if err := json.Unmarshal([]byte(rec), &v); err != nil {
		return row{}, false, false, fmt.Errorf("%w: %w", ErrParse, err)
	}
	var missing []string
	if v.Timestamp == nil {
		missing = append(missing, "timestamp")
	}
	if v.Latency == nil {
		missing = append(missing, "latency")
	}
	if v.Code == nil {
		missing = append(missing, "code")
	}
	if missing != nil {
		return row{}, false, false, fmt.Errorf("%w: missing %s", ErrParse, strings.Join(missing, ", "))
	}
	if *v.Latency < 0 {
		return row{}, false, false, bad("latency", errors.New("negative"))
	}
	return row{req: Request{Start: *v.Timestamp, Latency: time.Duration(*v.Latency), Status: *v.Code, Err: *v.Code == 0 || v.Error != ""}}, true, false, nil
}
