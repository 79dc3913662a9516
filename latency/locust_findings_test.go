package latency

import (
	"strings"
	"testing"
	"time"
)

// TestLocustFuzzFindings: what FuzzImportLocust found. A row whose
// cumulative average, taken over the requests since the row before,
// gives a mean past time.Duration's 292 years wrapped to a negative mean;
// "NaN" passed as an average. Both are bad rows naming the column now.
func TestLocustFuzzFindings(t *testing.T) {
	const header = "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,Total Max Response Time,Total Average Content Size\n"
	row := func(ts, n, avg string) string {
		return ts + ",1,GET,/a,1,0,5,5,5,5,5,5,5,5,5,5,5," + n + ",0,5," + avg + ",1,9,3\n"
	}
	for _, tc := range []struct{ name, body string }{
		{"mean past 292 years", row("1795988632", "1", "5") + row("1795988633", "2", "9000000000000")},
		{"NaN average", row("1795988632", "1", "NaN")},
	} {
		imp, err := Import(strings.NewReader(header+tc.body), "stats_history.csv", ImportOptions{Format: formatLocust, Location: time.UTC})
		if err == nil {
			err = imp.Report.Err()
		}
		if err == nil || !strings.Contains(err.Error(), "Total Average Response Time") {
			t.Errorf("%s: %v, want a bad row naming Total Average Response Time", tc.name, err)
		}
		if err == nil {
			for _, iv := range imp.Intervals {
				if iv.Summary.Mean < 0 {
					t.Errorf("%s: negative mean %v", tc.name, iv.Summary.Mean)
				}
			}
		}
	}
	imp, err := Import(strings.NewReader(header+row("1795988632", "1", "5")+row("1795988633", "3", "6")), "stats_history.csv", ImportOptions{Format: formatLocust, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	// (6 ms × 3 − 5 ms × 1) / 2 requests = 6.5 ms.
	if ivs := imp.Intervals; len(ivs) != 2 || ivs[1].Summary.Mean != 6500*time.Microsecond {
		t.Errorf("intervals %+v, want the second with a mean of 6.5ms", ivs)
	}
}
