package latency

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const fixtures = "../testdata/latency"

func fixture(name string) string { return filepath.Join(fixtures, name) }

func importFixture(t *testing.T, name string, opts ImportOptions) *Imported {
	t.Helper()
	imp, err := ImportFile(fixture(name), opts)
	if err != nil {
		t.Fatalf("ImportFile(%s): %v", name, err)
	}
	return imp
}

func ts(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ns(n int64) time.Time { return time.Unix(0, n) }

// badLines returns the line numbers of the report's bad rows.
func badLines(r ImportReport) []int {
	var n []int
	for _, b := range r.BadLines {
		n = append(n, b.Line)
		if !errors.Is(b.Err, ErrParse) {
			panic("bad line error does not wrap ErrParse: " + b.Error())
		}
	}
	return n
}

// vegetaWant is the content of vegeta.csv and vegeta.jsonl, read off the
// files (cut -d, -f1-3,6 vegeta.csv): 200 rows have no error text, 404
// rows "404 File not found", code 0 rows "connection refused".
var vegetaWant = []Request{
	{Start: ns(1795988650410552652), Latency: 2968143, Status: 200},
	{Start: ns(1795988650610929946), Latency: 1904581, Status: 404, Err: true},
	{Start: ns(1795988650810193526), Latency: 570933, Status: 0, Err: true},
	{Start: ns(1795988651010150513), Latency: 1320711, Status: 200},
	{Start: ns(1795988651210998415), Latency: 1727896, Status: 404, Err: true},
	{Start: ns(1795988651410031214), Latency: 741186, Status: 0, Err: true},
	{Start: ns(1795988651610139287), Latency: 2192808, Status: 200},
	{Start: ns(1795988651810833105), Latency: 2175256, Status: 404, Err: true},
	{Start: ns(1795988652010481418), Latency: 668407, Status: 0, Err: true},
	{Start: ns(1795988652210740687), Latency: 1922766, Status: 200},
}

func TestImportVegeta(t *testing.T) {
	for _, tc := range []struct{ file, format string }{
		{"vegeta.csv", formatVegetaCSV},
		{"vegeta.jsonl", formatVegetaJSON},
	} {
		t.Run(tc.file, func(t *testing.T) {
			imp := importFixture(t, tc.file, ImportOptions{})
			if diff := cmp.Diff(vegetaWant, imp.Requests.Slice()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			wantRep := ImportReport{Name: fixture(tc.file), Format: tc.format, Rows: 10}
			if diff := cmp.Diff(wantRep, imp.Report); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImportVegetaBad(t *testing.T) {
	for _, tc := range []struct {
		file      string
		want      []Request
		bad       []int
		truncated int
	}{
		// Line 5 is cut after "…,335,40": it would parse (with "40" as
		// the error text), so it must be kept out as truncated.
		{"vegeta-bad.csv", []Request{vegetaWant[0], vegetaWant[3]}, []int{2, 3}, 5},
		{"vegeta-bad.jsonl", []Request{vegetaWant[0], vegetaWant[3]}, []int{2, 3}, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			imp := importFixture(t, tc.file, ImportOptions{})
			if diff := cmp.Diff(tc.want, imp.Requests.Slice()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.bad, badLines(imp.Report)); diff != "" {
				t.Errorf("bad lines (-want +got):\n%s", diff)
			}
			if imp.Report.Bad != len(tc.bad) || imp.Report.Rows != 2 || imp.Report.Truncated != tc.truncated {
				t.Errorf("report: Rows %d Bad %d Truncated %d, want 2 %d %d", imp.Report.Rows, imp.Report.Bad, imp.Report.Truncated, len(tc.bad), tc.truncated)
			}
			wantErr := "2 of 4 rows bad, first at " + fixture(tc.file) + ":2: malformed row: "
			if err := imp.Report.Err(); err == nil || !strings.HasPrefix(err.Error(), wantErr) || !errors.Is(err, ErrParse) {
				t.Errorf("Report.Err() = %v, want prefix %q wrapping ErrParse", err, wantErr)
			}
		})
	}
	imp := importFixture(t, "vegeta-bad.jsonl", ImportOptions{})
	if got := imp.Report.BadLines[0].Err.Error(); !strings.Contains(got, "missing latency") {
		t.Errorf("line 2 error = %q, want it to name the missing field", got)
	}
}

func TestImportJMeter(t *testing.T) {
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	for _, tc := range []struct {
		file string
		want []Request
	}{
		{"jmeter-5-header.jtl", []Request{
			{Start: ms(1795990000123), Latency: 12 * time.Millisecond, Status: 200},
			{Start: ms(1795990000345), Latency: 3 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795990000560), Latency: 1002 * time.Millisecond, Status: 200, Err: true},
			{Start: ms(1795990001570), Latency: 2 * time.Millisecond, Status: 0, Err: true},
			{Start: ms(1795990001780), Latency: 5 * time.Millisecond, Status: 200, Err: true}, // lines 6-7
			{Start: ms(1795990001990), Latency: 4 * time.Millisecond, Status: 200},
		}},
		// Real JMeter 2.13 output, header-less (the 2.x default) and with
		// a header. "Non HTTP response code: java.net.ConnectException"
		// rows have status 0.
		{"jmeter-noheader.jtl", []Request{
			{Start: ms(1795989914323), Latency: 142 * time.Millisecond, Status: 200},
			{Start: ms(1795989914672), Latency: 5 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795989914885), Latency: 5 * time.Millisecond, Status: 0, Err: true},
			{Start: ms(1795989915095), Latency: 4 * time.Millisecond, Status: 200},
			{Start: ms(1795989915300), Latency: 5 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795989915505), Latency: 1 * time.Millisecond, Status: 0, Err: true},
			{Start: ms(1795989915709), Latency: 9 * time.Millisecond, Status: 200},
			{Start: ms(1795989915929), Latency: 9 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795989916138), Latency: 1 * time.Millisecond, Status: 0, Err: true},
		}},
		{"jmeter-2.13-header.jtl", []Request{
			{Start: ms(1795989921070), Latency: 225 * time.Millisecond, Status: 200},
			{Start: ms(1795989921500), Latency: 5 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795989921708), Latency: 2 * time.Millisecond, Status: 0, Err: true},
			{Start: ms(1795989921912), Latency: 6 * time.Millisecond, Status: 200},
			{Start: ms(1795989922118), Latency: 4 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795989922323), Latency: 1 * time.Millisecond, Status: 0, Err: true},
			{Start: ms(1795989922531), Latency: 5 * time.Millisecond, Status: 200},
			{Start: ms(1795989922739), Latency: 26 * time.Millisecond, Status: 404, Err: true},
			{Start: ms(1795989922972), Latency: 0, Status: 0, Err: true},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			imp := importFixture(t, tc.file, ImportOptions{})
			if diff := cmp.Diff(tc.want, imp.Requests.Slice()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if r := imp.Report; r.Format != formatJMeter || r.Rows != len(tc.want) || r.Bad != 0 || r.Truncated != 0 {
				t.Errorf("report = %+v", r)
			}
		})
	}
}

func TestImportJMeterBad(t *testing.T) {
	imp := importFixture(t, "jmeter-bad.jtl", ImportOptions{})
	want := []Request{
		{Start: time.UnixMilli(1795990200000), Latency: 7 * time.Millisecond, Status: 200},
		{Start: time.UnixMilli(1795990201000), Latency: 8 * time.Millisecond, Status: 200},
	}
	if diff := cmp.Diff(want, imp.Requests.Slice()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// Line 8 opens a quote never closed; line 9 has no newline.
	if diff := cmp.Diff([]int{3, 4, 5, 6, 8}, badLines(imp.Report)); diff != "" {
		t.Errorf("bad lines (-want +got):\n%s", diff)
	}
	if imp.Report.Truncated != 9 {
		t.Errorf("Truncated = %d, want 9", imp.Report.Truncated)
	}
	if got := imp.Report.BadLines[3].Err; !errors.Is(got, errNoZone) {
		t.Errorf("line 6 error = %v, want errNoZone", got)
	}

	// With a location the zone-less date of line 6 is read in it.
	imp = importFixture(t, "jmeter-bad.jtl", ImportOptions{Location: time.UTC})
	if diff := cmp.Diff([]int{3, 4, 5, 8}, badLines(imp.Report)); diff != "" {
		t.Errorf("bad lines with location (-want +got):\n%s", diff)
	}
	if len(imp.Requests.Slice()) != 3 || !imp.Requests.Slice()[1].Start.Equal(ts(t, "2026-11-29T22:30:00.8Z")) {
		t.Errorf("requests with location = %+v, want line 6 at 22:30:00.8Z", imp.Requests.Slice())
	}
}

func TestImportK6(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		imp := importFixture(t, "k6.json", ImportOptions{})
		// Start = time (request end) - value ms.
		want := []Request{
			{Start: ts(t, "2026-11-29T22:10:01.241805Z"), Latency: 12500 * time.Microsecond, Status: 200},
			{Start: ts(t, "2026-11-29T22:09:59.99975Z"), Latency: 2500250 * time.Microsecond, Status: 200},
			{Start: ts(t, "2026-11-29T22:10:02.999201Z"), Latency: 800 * time.Microsecond, Status: 0, Err: true},
			{Start: ts(t, "2026-11-29T22:10:03.496Z"), Latency: 4 * time.Millisecond, Status: 404, Err: true},
			{Start: ts(t, "2026-11-29T22:10:05.99275Z"), Latency: 7250 * time.Microsecond, Status: 200},
		}
		if diff := cmp.Diff(want, imp.Requests.Slice()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{9, 10, 11, 12}, badLines(imp.Report)); diff != "" {
			t.Errorf("bad lines (-want +got):\n%s", diff)
		}
		if r := imp.Report; r.Format != formatK6JSON || r.Rows != 5 || r.Skipped != 4 {
			t.Errorf("report = %+v, want k6-json, 5 rows, 4 skipped", r)
		}
	})
	t.Run("csv", func(t *testing.T) {
		imp := importFixture(t, "k6.csv", ImportOptions{})
		// 1795993801 is 2026-11-29T23:10:01Z; a whole-second stamp is the
		// end truncated, read as the middle of its second (+0.5 s).
		want := []Request{
			{Start: ts(t, "2026-11-29T23:10:01.4875Z"), Latency: 12500 * time.Microsecond, Status: 200},
			{Start: ts(t, "2026-11-29T23:10:00.99975Z"), Latency: 2500250 * time.Microsecond, Status: 200},
			{Start: ts(t, "2026-11-29T23:10:04.4992Z"), Latency: 800 * time.Microsecond, Status: 0, Err: true},
			{Start: ts(t, "2026-11-29T23:10:06.49275Z"), Latency: 7250 * time.Microsecond, Status: 200},
		}
		if diff := cmp.Diff(want, imp.Requests.Slice()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{7, 8}, badLines(imp.Report)); diff != "" {
			t.Errorf("bad lines (-want +got):\n%s", diff)
		}
		if r := imp.Report; r.Format != formatK6CSV || r.Rows != 4 || r.Skipped != 2 || r.Resolution != time.Second {
			t.Errorf("report = %+v, want k6-csv, 4 rows, 2 skipped, 1 s resolution", r)
		}
	})
}

func TestImportHey(t *testing.T) {
	start := ts(t, "2026-11-29T21:43:00Z")
	imp := importFixture(t, "hey.csv", ImportOptions{Start: start})
	if r := imp.Report; r.Format != formatHey || r.Rows != 12 || r.Bad != 0 || r.Relative || r.StartFrom != "option" {
		t.Fatalf("report = %+v", r)
	}
	// First and last rows: "0.0026,…,200,0.2010" and "0.0028,…,200,1.2012".
	want := []Request{
		{Start: start.Add(201 * time.Millisecond), Latency: 2600 * time.Microsecond, Status: 200},
		{Start: start.Add(1201200 * time.Microsecond), Latency: 2800 * time.Microsecond, Status: 200},
	}
	got := []Request{imp.Requests.Slice()[0], imp.Requests.Slice()[11]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	// Without a start, ImportFile anchors the last request's end at the
	// file's modification time.
	mtime := ts(t, "2026-11-29T21:50:00Z")
	path := filepath.Join(t.TempDir(), "hey.csv")
	b, err := os.ReadFile(fixture("hey.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	imp, err = ImportFile(path, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The last request to end is row 12: 1.2012 s + 0.0028 s = 1.2040 s.
	if r := imp.Report; r.Relative || r.StartFrom != StartMtime {
		t.Errorf("report = %+v, want StartFrom file mtime", r)
	}
	if got, want := imp.Requests.Slice()[0].Start, mtime.Add(-1204*time.Millisecond+201*time.Millisecond); !got.Equal(want) {
		t.Errorf("first start = %v, want %v", got, want)
	}

	// From a reader with no start, the times are offsets from the epoch.
	f, err := os.Open(fixture("hey.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err = Import(f, "hey.csv", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !imp.Report.Relative || !imp.Requests.Slice()[0].Start.Equal(time.Unix(0, 201e6)) {
		t.Errorf("Relative = %v, first start %v; want true, epoch + 201ms", imp.Report.Relative, imp.Requests.Slice()[0].Start)
	}
}

func TestImportLocust(t *testing.T) {
	imp := importFixture(t, "locust_stats_history.csv", ImportOptions{})
	if r := imp.Report; r.Format != formatLocust || r.Rows != 31 || r.Bad != 0 || len(imp.Requests.Slice()) != 0 {
		t.Fatalf("report = %+v, %d requests; want 31 locust rows, no requests", r, len(imp.Requests.Slice()))
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// Lines 2, 3, 6 and 29 of the file (index = line - 2). Count, Errors
	// and Mean are deltas of the Total columns from the previous row of
	// the same name, e.g. line 6: (7.655203199999505·5 −
	// 9.114113666669255·3)/2 = 5.466837 ms. Line 29 is the run's slowest
	// second: /missing took 16.4 ms.
	want := []IntervalStat{
		{End: time.Unix(1795988630, 0), Name: "Aggregated"},
		{End: time.Unix(1795988631, 0), Method: "GET", Name: "/hello.txt", Users: 2, Window: 10 * time.Second,
			Summary: Summary{Count: 3, Mean: 9114114}},
		{End: time.Unix(1795988632, 0), Method: "GET", Name: "/hello.txt", Users: 2, Window: 10 * time.Second,
			Summary: Summary{Count: 2, Mean: 5466837, P50: ms(6), P95: ms(6), P99: ms(6), Max: ms(6)}},
		{End: time.Unix(1795988639, 0), Name: "Aggregated", Users: 2, Window: 10 * time.Second,
			Summary: Summary{Count: 4, Errors: 2, Mean: 10513015, P50: ms(5), P95: ms(13), P99: ms(16), Max: ms(16)}},
	}
	got := []IntervalStat{imp.Intervals[0], imp.Intervals[1], imp.Intervals[4], imp.Intervals[27]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("intervals (-want +got):\n%s", diff)
	}
	// The deltas add up to the last row's totals (40 requests, 10 failed).
	n, e := 0, 0
	for _, iv := range imp.Intervals {
		if iv.Name == "Aggregated" {
			n, e = n+iv.Count, e+iv.Errors
		}
	}
	if n != 40 || e != 10 {
		t.Errorf("aggregated counts sum to %d requests, %d errors; want 40, 10", n, e)
	}
}

func TestImportGeneric(t *testing.T) {
	t.Run("header", func(t *testing.T) {
		imp := importFixture(t, "generic.csv", ImportOptions{})
		want := []Request{
			{Start: ts(t, "2026-11-29T22:00:00.25Z"), Latency: 12500 * time.Microsecond, Status: 200},
			{Start: ts(t, "2026-11-29T22:00:00.5Z"), Latency: 2500 * time.Millisecond, Status: 200},
			{Start: ts(t, "2026-11-29T22:00:00.75Z"), Latency: 250 * time.Microsecond, Status: 503, Err: true},
			{Start: ts(t, "2026-11-29T22:00:01Z"), Latency: 40 * time.Millisecond},
			{Start: ts(t, "2026-11-29T22:00:02Z"), Latency: 12 * time.Millisecond, Status: 200},
		}
		if diff := cmp.Diff(want, imp.Requests.Slice()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{6, 8}, badLines(imp.Report)); diff != "" {
			t.Errorf("bad lines (-want +got):\n%s", diff)
		}
	})
	t.Run("no header", func(t *testing.T) {
		imp := importFixture(t, "generic-noheader.csv", ImportOptions{})
		want := []Request{
			{Start: ts(t, "2026-11-29T22:00:00.25Z"), Latency: 12500 * time.Microsecond, Status: 200},
			{Start: ts(t, "2026-11-29T22:00:00.5Z"), Latency: 2500 * time.Millisecond, Status: 200},
			{Start: ts(t, "2026-11-29T22:00:00.75Z"), Latency: 250 * time.Microsecond, Status: 503, Err: true},
			{Start: ts(t, "2026-11-29T22:00:01Z"), Latency: 800 * time.Microsecond},
			{Start: ts(t, "2026-11-29T22:00:01.25Z"), Latency: time.Minute, Status: 200},
		}
		if diff := cmp.Diff(want, imp.Requests.Slice()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{6}, badLines(imp.Report)); diff != "" {
			t.Errorf("bad lines (-want +got):\n%s", diff)
		}
		// With a unit for bare numbers, line 6 ("12") is 12 ms.
		imp = importFixture(t, "generic-noheader.csv", ImportOptions{LatencyUnit: time.Millisecond})
		if imp.Report.Bad != 0 || imp.Requests.Slice()[5].Latency != 12*time.Millisecond {
			t.Errorf("with LatencyUnit: bad %d, line 6 latency %v; want 0, 12ms", imp.Report.Bad, imp.Requests.Slice()[5].Latency)
		}
	})
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"vegeta.csv", formatVegetaCSV},
		{"vegeta.jsonl", formatVegetaJSON},
		{"jmeter-5-header.jtl", formatJMeter},
		{"jmeter-2.13-header.jtl", formatJMeter},
		{"jmeter-noheader.jtl", formatJMeter},
		{"k6-run.json", formatK6JSON},
		{"k6-run.csv", formatK6CSV},
		{"k6.json", formatK6JSON},
		{"k6.csv", formatK6CSV},
		{"locust_stats_history.csv", formatLocust},
		{"hey.csv", formatHey},
		{"generic.csv", formatGeneric},
		{"generic-noheader.csv", formatGeneric},
	} {
		b, err := os.ReadFile(fixture(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := detect(b); got != tc.want || err != nil {
			t.Errorf("Detect(%s) = %q, %v; want %q", tc.file, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, head string }{
		{"gob", "\x1f\xff\x81\x03\x01\x01\x06Result\x01\xff\x82\x00"},
		{"empty", "\n\n"},
		{"other json", `{"hello":"world"}` + "\n"},
		{"prose", "this is not a results file\n"},
		{"NUL", "1795988650410552652,200,2968143,0,3\x00\n"},
	} {
		if got, err := detect([]byte(tc.head)); !errors.Is(err, ErrFormat) {
			t.Errorf("Detect(%s) = %q, %v; want ErrFormat", tc.name, got, err)
		}
	}
}

func TestDetectVegetaBinary(t *testing.T) {
	_, err := ImportFile(fixture("vegeta-results.bin"), ImportOptions{})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "vegeta encode") {
		t.Errorf("ImportFile(vegeta gob) err = %v, want ErrFormat with a hint to run vegeta encode", err)
	}
}

func TestDetectLatin1(t *testing.T) {
	// JMeter writes labels in the platform charset: "café" in Latin-1.
	head := []byte("1795989914323,142,caf\xe9,200,OK,probe 1-1,text,true,188,1,1,131\n")
	if got, err := detect(head); got != formatJMeter || err != nil {
		t.Errorf("Detect(Latin-1 JTL) = %q, %v; want jmeter", got, err)
	}
}

func TestImportForcedFormat(t *testing.T) {
	// A vegeta CSV forced as generic: every row is bad (no unit on the
	// latency column "200"), none is silently dropped.
	f, err := os.Open(fixture("vegeta.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := Import(f, "vegeta.csv", ImportOptions{Format: formatGeneric})
	if err != nil {
		t.Fatal(err)
	}
	if imp.Report.Format != formatGeneric || imp.Report.Bad != 10 || imp.Report.Rows != 0 {
		t.Errorf("report = %+v, want generic with 10 bad rows", imp.Report)
	}
	if _, err := Import(strings.NewReader("x\n"), "x", ImportOptions{Format: "wrk"}); !errors.Is(err, ErrFormat) {
		t.Errorf("unknown forced format: err = %v, want ErrFormat", err)
	}
}

func TestParseTime(t *testing.T) {
	want := ts(t, "2026-11-29T22:00:00.25Z")
	ist := time.FixedZone("IST", 5*3600+1800)
	for _, tc := range []struct {
		in  string
		loc *time.Location
	}{
		{"1795989600.25", nil},                    // s
		{"1795989600250", nil},                    // ms
		{"1795989600250000", nil},                 // µs
		{"1795989600250000000", nil},              // ns
		{"2026-11-29T22:00:00.25Z", nil},          // RFC 3339
		{"2026-11-29T23:00:00.25+01:00", nil},     //
		{"2026-11-29 17:00:00.250-05:00", nil},    // space
		{"2026-11-30T03:30:00.25+0530", nil},      // offset without colon
		{"2026-11-30 03:30:00.25", ist},           // no zone, in loc
		{"2026/11/30 03:30:00.250", ist},          // JMeter's format
		{"2026-11-29 22:00:00.25 +0000 UTC", nil}, // time.Time.String
	} {
		got, err := parseTime(tc.in, tc.loc)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "2026-11-29 22:00:00", "1795989600.x", "99999999999999999999"} {
		if got, err := parseTime(in, nil); err == nil {
			t.Errorf("parseTime(%q) = %v, want an error", in, got)
		}
	}
}

func TestImportCRLFAndBOM(t *testing.T) {
	in := "\ufefftimestamp,latency_ms\r\n1795989600.25,12.5\r\n"
	imp, err := Import(strings.NewReader(in), "crlf.csv", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{{Start: ts(t, "2026-11-29T22:00:00.25Z"), Latency: 12500 * time.Microsecond}}
	if diff := cmp.Diff(want, imp.Requests.Slice(), cmpopts.EquateEmpty()); diff != "" || imp.Report.Bad != 0 {
		t.Errorf("requests (-want +got):\n%s\nreport %+v", diff, imp.Report)
	}
}

func TestImportLongFirstLine(t *testing.T) {
	// A vegeta row whose base64 body is longer than Detect's 8 KiB head.
	body := strings.Repeat("aGkK", 10<<10)
	in := "1795988650410552652,200,2968143,0,30720,," + body + ",,0,GET,http://127.0.0.1:18931/big,\n"
	imp, err := Import(strings.NewReader(in+in), "big.csv", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if imp.Report.Format != formatVegetaCSV || imp.Report.Rows != 2 || imp.Report.Bad != 0 {
		t.Errorf("report = %+v, want 2 vegeta-csv rows", imp.Report)
	}
}

func BenchmarkImportVegetaCSV(b *testing.B) {
	one, err := os.ReadFile(fixture("vegeta.csv"))
	if err != nil {
		b.Fatal(err)
	}
	in := strings.Repeat(string(one), 1000) // 10,000 rows
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Import(strings.NewReader(in), "bench.csv", ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestImportK6Run reads the output of a real k6 v1.8.1 run (three
// iterations of /hello.txt, /missing and a closed port).
func TestImportK6Run(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * 1e6) }
	// Start = time - value, from the http_req_duration points of k6-run.json.
	want := []Request{
		{Start: ts(t, "2026-11-29T22:03:22.114595653Z"), Latency: ms(70.989574), Status: 200},
		{Start: ts(t, "2026-11-29T22:03:22.200927598Z"), Latency: ms(8.303611), Status: 404, Err: true},
		{Start: ts(t, "2026-11-29T22:03:22.209788166Z"), Latency: 0, Status: 0, Err: true},
		{Start: ts(t, "2026-11-29T22:03:22.412145986Z"), Latency: ms(1.146628), Status: 200},
		{Start: ts(t, "2026-11-29T22:03:22.413980766Z"), Latency: ms(1.01913), Status: 404, Err: true},
		{Start: ts(t, "2026-11-29T22:03:22.415275391Z"), Latency: 0, Status: 0, Err: true},
		{Start: ts(t, "2026-11-29T22:03:22.616785197Z"), Latency: ms(1.18053), Status: 200},
		{Start: ts(t, "2026-11-29T22:03:22.618219059Z"), Latency: ms(0.975098), Status: 404, Err: true},
		{Start: ts(t, "2026-11-29T22:03:22.619445165Z"), Latency: 0, Status: 0, Err: true},
	}
	js := importFixture(t, "k6-run.json", ImportOptions{})
	if diff := cmp.Diff(want, js.Requests.Slice()); diff != "" {
		t.Errorf("json requests (-want +got):\n%s", diff)
	}
	// 106 lines: 9 duration points, the rest other metrics' points and
	// declarations.
	if r := js.Report; r.Format != formatK6JSON || r.Rows != 9 || r.Bad != 0 || r.Rows+r.Skipped != 106 {
		t.Errorf("json report = %+v", r)
	}
	// The CSV of the same run stamps whole seconds (1795989802 =
	// 22:03:22Z, the ends truncated): same latencies and statuses, ends
	// read as 22:03:22.5, the middle of the second. The JSON's true ends
	// are 22:03:22.185 to .619: the midpoint is off by at most 0.32 s,
	// the truncated stamp by up to 0.62 s.
	cs := importFixture(t, "k6-run.csv", ImportOptions{})
	if r := cs.Report; r.Format != formatK6CSV || r.Rows != 9 || r.Bad != 0 || r.Rows+r.Skipped != 93 {
		t.Errorf("csv report = %+v", r)
	}
	end := ts(t, "2026-11-29T22:03:22.5Z")
	for i := range cs.Requests.Slice() {
		if i >= len(want) {
			break
		}
		w := want[i]
		w.Start = end.Add(-w.Latency)
		if diff := cmp.Diff(w, cs.Requests.Slice()[i]); diff != "" {
			t.Errorf("csv request %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestImportStrayQuote(t *testing.T) {
	// A stray quote on line 2 must not swallow the lines after it, whether
	// the file ends first or the record grows past maxRecordLines.
	for _, n := range []int{3, 100} {
		var b strings.Builder
		b.WriteString("timestamp,latency_ms\n")
		b.WriteString("1795989600,\"12\n")
		for i := range n {
			fmt.Fprintf(&b, "%d,%d\n", 1795989601+i, i)
		}
		imp, err := Import(strings.NewReader(b.String()), "stray.csv", ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{2}, badLines(imp.Report)); diff != "" || imp.Report.Rows != n {
			t.Errorf("%d lines after the stray quote: rows %d, bad lines (-want +got):\n%s", n, imp.Report.Rows, diff)
		}
	}
}

func TestImportHeyLocustBadRows(t *testing.T) {
	hey := "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n" +
		"0.0026,0.0004,0.0000,0.0001,0.0014,0.0007,200,0.2010\n" +
		"0.0034,0.0003,0.0000,0.0000,0.0019,0.0004,OK,0.2009\n" + // line 3: status
		"0.0018,0.0003,0.0000,0.0001,0.0012,0.0001,200\n" + // line 4: no offset
		"fast,0.0003,0.0000,0.0001,0.0012,0.0001,200,0.4008\n" // line 5: response-time
	imp, err := Import(strings.NewReader(hey), "hey.csv", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3, 4, 5}, badLines(imp.Report)); diff != "" || imp.Report.Rows != 1 {
		t.Errorf("hey: rows %d, bad lines (-want +got):\n%s", imp.Report.Rows, diff)
	}

	b, err := os.ReadFile(fixture("locust_stats_history.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	in := lines[0] + lines[1] +
		strings.Replace(lines[2], ",3,0,11,", ",three,0,11,", 1) + // line 3: Total Request Count
		strings.Replace(lines[3], "1795988631", "", 1) + // line 4: Timestamp
		"1795988631,2,GET,/x\n" + // line 5: short
		lines[4]
	imp, err = Import(strings.NewReader(in), "locust.csv", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3, 4, 5}, badLines(imp.Report)); diff != "" || imp.Report.Rows != 2 {
		t.Errorf("locust: rows %d, bad lines (-want +got):\n%s", imp.Report.Rows, diff)
	}
}

// TestImportNoPanic covers the inputs that once crashed analyze, compare
// and a running watch: each is now a bad row naming the cause.
func TestImportNoPanic(t *testing.T) {
	for _, tc := range []struct {
		name, format, in string
		rows             int
		bad              []int
		why              string
	}{
		// JMeter with jmeter.save.saveservice.time=false writes no elapsed.
		{"jtl without elapsed", formatJMeter, "timeStamp,label,responseCode,success\n1795988650410,hello,200,true\n1795988650610,hello,200,true\n", 0, []int{1, 2, 3}, "no elapsed column"},
		{"jtl without timeStamp", formatJMeter, "elapsed,label,responseCode,success\n3,hello,200,true\n", 0, []int{1, 2}, "no timeStamp column"},
		{"k6 csv without timestamp", formatK6CSV, "metric_name,metric_value\nhttp_req_duration,12.5\n", 0, []int{1, 2}, "lacks timestamp or metric_value"},
		{"k6 csv without metric_name", formatK6CSV, "timestamp,metric_value\n1795993801,12.5\n", 0, []int{1, 2}, "must start with its header"},
		// 2^63 ns is 9.2×10^12 ms: one more overflows a Duration.
		{"elapsed overflow", formatJMeter, "timeStamp,elapsed,responseCode,success\n1795988650410,9223372036855,200,true\n1795988650410,9223372036854,200,true\n", 1, []int{2}, "beyond 292 years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imp, err := Import(strings.NewReader(tc.in), "r", ImportOptions{Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			if imp.Report.Rows != tc.rows {
				t.Errorf("rows = %d, want %d", imp.Report.Rows, tc.rows)
			}
			if diff := cmp.Diff(tc.bad, badLines(imp.Report)); diff != "" {
				t.Errorf("bad lines (-want +got):\n%s", diff)
			}
			if err := imp.Report.Err(); err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("Err() = %v, want it to say %q", err, tc.why)
			}
		})
	}
}

// TestImportJMeterTransactionsAndSemicolon: a JTL with ";" as
// jmeter.save.saveservice.default_delimiter, and a Transaction
// Controller's own row (responseMessage "Number of samples in
// transaction …"), which is excluded and counted, not a request.
func TestImportJMeterTransactionsAndSemicolon(t *testing.T) {
	in := "timeStamp;elapsed;label;responseCode;responseMessage;threadName;dataType;success\n" +
		"1795988650410;3;hello;200;OK;t 1-1;text;true\n" +
		"1795988650414;5;missing;404;Not Found;t 1-1;text;false\n" +
		"1795988650410;9;TC;200;Number of samples in transaction : 2, number of failing samples : 1;t 1-1;;false\n"
	b := []byte(in)
	if f, err := detect(b); err != nil || f != formatJMeter {
		t.Fatalf("Detect = %q, %v", f, err)
	}
	imp, err := Import(strings.NewReader(in), "r.jtl", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{Start: time.UnixMilli(1795988650410), Latency: 3 * time.Millisecond, Status: 200},
		{Start: time.UnixMilli(1795988650414), Latency: 5 * time.Millisecond, Status: 404, Err: true},
	}
	if diff := cmp.Diff(want, imp.Requests.Slice(), cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if r := imp.Report; r.Rows != 2 || r.Transactions != 1 || r.Bad != 0 {
		t.Errorf("report = %+v, want 2 rows, 1 transaction", r)
	}
}

// TestImportFileContextCancelled: a cancelled context (Ctrl-C) ends the
// read of a real results file with the context's error, naming the file,
// instead of reading it to its end.
func TestImportFileContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := fixture("hey.csv")
	if _, err := ImportFile(p, ImportOptions{}); err != nil {
		t.Fatalf("ImportFile(%s): %v (the fixture must import)", p, err)
	}
	_, err := ImportFileContext(ctx, p, ImportOptions{})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), p) {
		t.Fatalf("ImportFileContext(cancelled, %s) = %v; want context.Canceled naming the file", p, err)
	}
}
