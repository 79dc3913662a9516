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
	if code != ExitError {
		t.Fatalf("exit %d, want %d; stdout %s", code, ExitError, out)
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
	if code != ExitOK {
		t.Fatalf("half inside: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "7199 requests read, 3599 imported, 3600 outside the recording") {
		t.Errorf("report lacks the import counts:\n%s", out)
	}
	code, _, errOut = runCmd(t, "analyze", unionRec, "--latency", p, "--latency-min-share", "0.9")
	if code != ExitError || !strings.Contains(errOut, "only 3599 of its 7199 requests (50.0%)") {
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
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Failures: 600 of 7199 requests failed (8.3%)") {
		t.Errorf("analyze does not report the failures:\n%s", out)
	}
	if !strings.Contains(out, "failed") {
		t.Errorf("timeline marks no failure:\n%s", out)
	}
	code, out, errOut = runCmd(t, "analyze", unionRec, "--latency", bad, "--format", "json")
	if code != ExitOK {
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
	if code != ExitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Not an improvement: failed requests rose from 0.0% to 8.3%") {
		t.Errorf("compare does not call out the failures:\n%s", out)
	}
}
