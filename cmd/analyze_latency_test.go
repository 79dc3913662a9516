package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeResults writes a generic results CSV of one request a second over
// the first 2 h of unionRec (2026-03-15 12:00 UTC), from offset s0 on,
// each 100 ms, failed (status 503, 1 ms) where fail says so.
func writeResults(t *testing.T, name string, shift time.Duration, fail func(s int) bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,latency_ms,status\n")
	start := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC).Add(shift)
	for s := 1; s < 7200; s++ {
		ts := start.Add(time.Duration(s)*time.Second + 100*time.Millisecond)
		if fail(s) {
			fmt.Fprintf(&b, "%s,1,503\n", ts.Format(time.RFC3339Nano))
		} else {
			fmt.Fprintf(&b, "%s,100,200\n", ts.Format(time.RFC3339Nano))
		}
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A results file from another day (or read in the wrong zone) imports
// nothing: an error with both time ranges, never "none given".
func TestAnalyzeLatencyOutsideRecording(t *testing.T) {
	p := writeResults(t, "other-day.csv", 24*time.Hour, func(int) bool { return false })
	code, out, errOut := runCmd(t, "analyze", unionRec, "--latency", p)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stdout %s", code, exitError, out)
	}
	for _, want := range []string{"none of its 7199 requests is inside the recording", "file 2026-03-16 12:00:01.100 +00:00 to 2026-03-16 13:59:59.100 +00:00", "7199 after"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(out+errOut, "none given") {
		t.Errorf("says none given:\n%s%s", out, errOut)
	}
	// Half inside: fine by default, reported; an error under --latency-min-share 0.9.
	p = writeResults(t, "half.csv", time.Hour, func(int) bool { return false })
	code, out, errOut = runCmd(t, "analyze", unionRec, "--latency", p)
	if code != exitOK {
		t.Fatalf("half inside: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "7199 requests read, 3599 imported, 3600 outside the recording") {
		t.Errorf("report lacks the import counts:\n%s", out)
	}
	code, _, errOut = runCmd(t, "analyze", unionRec, "--latency", p, "--latency-min-share", "0.9")
	if code != exitError || !strings.Contains(errOut, "only 3599 of its 7199 requests (50.0%)") {
		t.Errorf("min share: exit %d, stderr %s", code, errOut)
	}
}

// The service down for 10 minutes (12:30-12:40, every request refused
// in 1 ms): analyze counts the failures and flags them as spikes; compare
// of a healthy run against it is no improvement, although its mean
// latency fell.
func TestAnalyzeCompareServiceDown(t *testing.T) {
	down := func(s int) bool { return s >= 1800 && s < 2400 }
	bad := writeResults(t, "down.csv", 0, down)
	good := writeResults(t, "up.csv", 0, func(int) bool { return false })
	code, out, errOut := runCmd(t, "analyze", unionRec, "--latency", bad)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Failures: 600 of 7199 requests failed (8.3%)") {
		t.Errorf("analyze does not report the failures:\n%s", out)
	}
	if !strings.Contains(out, "failed") {
		t.Errorf("timeline marks no failure:\n%s", out)
	}
	code, out, errOut = runCmd(t, "analyze", unionRec, "--latency", bad, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Totals struct {
			Requests int      `json:"requests"`
			Errors   int      `json:"errors"`
			MeanMS   *float64 `json:"mean_ms"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// The mean is of the 6599 successful requests: 100 ms, not pulled
	// down by 600 refusals of 1 ms.
	if doc.Totals.Requests != 7199 || doc.Totals.Errors != 600 || doc.Totals.MeanMS == nil || *doc.Totals.MeanMS != 100 {
		t.Errorf("totals = %+v (mean %v), want 7199 requests, 600 errors, mean 100 ms", doc.Totals, doc.Totals.MeanMS)
	}
	code, out, errOut = runCmd(t, "compare", unionRec, unionRec, "--latency-before", good, "--latency-after", bad)
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Not an improvement: failed requests rose from 0.0% to 8.3%") {
		t.Errorf("compare does not call out the failures:\n%s", out)
	}
}

// calmRec is a calm 60 s recording (2026-03-15 12:00:00–12:01:00 UTC, 1 s
// intervals, no pressure, no latency of its own).
const calmRec = "../correlate/testdata/scenarios/01-calm-host.jsonl.gz"

// writeFailing writes, in format f, 4 requests a second over calmRec's
// minute (from 12:00:00.1), each failed unless ok(i) says it succeeded:
// failures are refused connections (status 0) or, for hey, which writes
// no row without a response, status 503.
func writeFailing(t *testing.T, f string, ok func(i int) bool) string {
	t.Helper()
	var b strings.Builder
	t0 := time.Date(2026, 3, 15, 12, 0, 0, 100e6, time.UTC)
	switch f {
	case "k6.csv":
		b.WriteString("metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n")
	case "jmeter.jtl":
		b.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,bytes,grpThreads,allThreads,Latency\n")
	case "jmeter.xml":
		b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testResults version=\"1.2\">\n")
	case "hey.csv":
		b.WriteString("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n")
	case "generic.csv":
		b.WriteString("timestamp,latency_ms,status,error\n")
	}
	for i := range 240 {
		ts := t0.Add(time.Duration(i) * 250 * time.Millisecond)
		good := ok(i)
		code, lat, msg := 0, time.Millisecond, "connection refused"
		if good {
			code, lat, msg = 200, 20*time.Millisecond, ""
		}
		switch f {
		case "vegeta.csv":
			fmt.Fprintf(&b, "%d,%d,%d,0,0,%s,,,%d,GET,http://127.0.0.1:18939/,\n", ts.UnixNano(), code, lat, msg, i)
		case "vegeta.jsonl":
			fmt.Fprintf(&b, `{"attack":"","seq":%d,"code":%d,"timestamp":%q,"latency":%d,"bytes_out":0,"bytes_in":0,"error":%q,"body":null,"method":"GET","url":"http://127.0.0.1:18939/","headers":null}`+"\n",
				i, code, ts.Format(time.RFC3339Nano), lat, msg)
		case "k6.json":
			fmt.Fprintf(&b, `{"metric":"http_req_duration","type":"Point","data":{"time":%q,"value":%g,"tags":{"expected_response":"%t","method":"GET","status":"%d"}}}`+"\n",
				ts.Add(lat).Format(time.RFC3339Nano), float64(lat)/1e6, good, code)
		case "k6.csv":
			fmt.Fprintf(&b, "http_req_duration,%d,%f,,%s,,%t,,GET,u,HTTP/1.1,default,,%d,,,u,,\n", ts.Add(lat).Unix(), float64(lat)/1e6, map[bool]string{false: "dial: connection refused"}[good], good, code)
		case "jmeter.jtl":
			fmt.Fprintf(&b, "%d,%d,probe,%s,%s,t 1-1,text,%t,0,1,1,0\n", ts.UnixMilli(), lat.Milliseconds(),
				map[bool]string{true: "200", false: "Non HTTP response code: java.net.ConnectException"}[good], map[bool]string{true: "OK", false: "Connection refused"}[good], good)
		case "jmeter.xml":
			fmt.Fprintf(&b, "<httpSample t=\"%d\" ts=\"%d\" s=\"%t\" lb=\"probe\" rc=\"%d\" rm=\"%s\" tn=\"t 1-1\"/>\n", lat.Milliseconds(), ts.UnixMilli(), good, code, msg)
		case "hey.csv":
			if !good {
				code = 503
			}
			fmt.Fprintf(&b, "%.4f,0.0001,0.0000,0.0000,%.4f,0.0000,%d,%.4f\n", lat.Seconds(), lat.Seconds(), code, ts.Sub(t0).Seconds()+0.1)
		case "generic.csv":
			fmt.Fprintf(&b, "%s,%d,%d,%s\n", ts.Format(time.RFC3339Nano), lat.Milliseconds(), code, msg)
		}
	}
	if f == "jmeter.xml" {
		b.WriteString("</testResults>\n")
	}
	p := filepath.Join(t.TempDir(), f)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A service failing the whole run, in every results format: analyze says
// the load was failing (text, Markdown, HTML and JSON), never "no latency
// spike"; nearly every request failing is the same. A short outage
// stays a spike (TestAnalyzeCompareServiceDown).
func TestAnalyzeFailingThroughout(t *testing.T) {
	never := func(int) bool { return false }
	for _, f := range []string{"vegeta.csv", "vegeta.jsonl", "k6.json", "k6.csv", "jmeter.jtl", "jmeter.xml", "hey.csv", "generic.csv"} {
		t.Run(f, func(t *testing.T) {
			p := writeFailing(t, f, never)
			args := []string{"analyze", calmRec, "--latency", p}
			if f == "hey.csv" {
				args = append(args, "--latency-start", "2026-03-15T12:00:00Z")
			}
			code, out, errOut := runCmd(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, want := range []string{"Failures: 240 of 240 requests failed (100.0%)", "FAILING: at least half failed in 60 of 60 intervals",
				"The load was failing: 240 of 240 requests failed (100.0%); at least half failed in 60 of 60 intervals with requests, from 12:00:00 to 12:01:00."} {
				if !strings.Contains(out, want) {
					t.Errorf("text lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "no latency spike") {
				t.Errorf("a failing run read as calm:\n%s", out)
			}
			code, out, errOut = runCmd(t, append(args, "--format", "json")...)
			if code != exitOK {
				t.Fatalf("json: exit %d: %s", code, errOut)
			}
			var doc struct {
				Verdict string `json:"verdict"`
				Failing *struct {
					Intervals int `json:"intervals"`
					Failing   int `json:"intervals_failing"`
					Requests  int `json:"requests"`
					Errors    int `json:"errors"`
				} `json:"failing"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Verdict != "load failing; no episode" || doc.Failing == nil || *doc.Failing != struct {
				Intervals int `json:"intervals"`
				Failing   int `json:"intervals_failing"`
				Requests  int `json:"requests"`
				Errors    int `json:"errors"`
			}{60, 60, 240, 240} {
				t.Errorf("json verdict %q, failing %+v; want load failing, 60 of 60 intervals, 240 of 240 requests", doc.Verdict, doc.Failing)
			}
		})
	}
	// Nearly every request: 1 in 20 succeeded (12 of 240).
	p := writeFailing(t, "generic.csv", func(i int) bool { return i%20 == 0 })
	for _, format := range []string{"table", "markdown", "html"} {
		code, out, errOut := runCmd(t, "analyze", calmRec, "--latency", p, "--format", format)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		if !strings.Contains(out, "The load was failing: 228 of 240 requests failed (95.0%); at least half failed in 60 of 60 intervals") || strings.Contains(out, "no latency spike") {
			t.Errorf("%s: 228 of 240 failed not said plainly:\n%s", format, out)
		}
	}
}

// A header-less JMeter CSV with custom columns reads with
// --latency-columns or with the properties file JMeter ran with; a
// misspelt column is a usage error naming the flag.
func TestAnalyzeJMeterColumns(t *testing.T) {
	var b strings.Builder
	t0 := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	for i := range 50 {
		fmt.Fprintf(&b, "%d,%d,home,200,true,3\n", t0.Add(time.Duration(i)*time.Second+500*time.Millisecond).UnixMilli(), 20+i)
	}
	p := filepath.Join(t.TempDir(), "r.jtl")
	props := filepath.Join(t.TempDir(), "user.properties")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	err := os.WriteFile(props, []byte("jmeter.save.saveservice.print_field_names=false\njmeter.save.saveservice.response_message=false\n"+
		"jmeter.save.saveservice.thread_name=false\njmeter.save.saveservice.data_type=false\njmeter.save.saveservice.assertion_results_failure_message=false\n"+
		"jmeter.save.saveservice.bytes=false\njmeter.save.saveservice.sent_bytes=false\njmeter.save.saveservice.thread_counts=false\njmeter.save.saveservice.url=false\n"+
		"jmeter.save.saveservice.latency=false\njmeter.save.saveservice.idle_time=false\njmeter.save.saveservice.connect_time=true\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range [][]string{{"--latency-columns", "timeStamp,elapsed,label,responseCode,success,Connect", "--latency-columns"}, {"--latency-properties", props, props}} {
		code, out, errOut := runCmd(t, "analyze", calmRec, "--latency", p, flag[0], flag[1], "--format", "json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", flag[0], code, errOut)
		}
		var doc struct {
			Totals struct {
				Requests int     `json:"requests"`
				MeanMS   float64 `json:"mean_ms"`
			} `json:"totals"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		// 50 requests of 20..69 ms: mean 44.5 ms.
		if doc.Totals.Requests != 50 || doc.Totals.MeanMS != 44.5 || !strings.Contains(strings.Join(doc.Warnings, "\n"), "columns from "+flag[2]+": timeStamp,elapsed,label,responseCode,success,Connect") {
			t.Errorf("%s: totals %+v, notes %q", flag[0], doc.Totals, doc.Warnings)
		}
	}
	code, _, errOut := runCmd(t, "analyze", calmRec, "--latency", p, "--latency-columns", "timestamp,elapsed")
	if code != exitUsage || !strings.Contains(errOut, `--latency-columns: bad JMeter save settings: column 1 "timestamp" is not one of JMeter's`) {
		t.Errorf("bad column: exit %d: %s", code, errOut)
	}
}
