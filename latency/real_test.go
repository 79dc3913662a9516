package latency

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// bucketWant is one per-second bucket as testdata/latency/expected.sh
// computes it with awk and sort, independently of the importer: the
// bucket's end (Unix s; a request starting at t is in bucket ceil(t)),
// requests, failed ones, mean and p99 of the successful ones (ns).
type bucketWant struct {
	end           int64
	count, errors int
	meanNs, p99Ns int64
}

// TestRealFilesPerInterval checks each real tool's file, bucket by
// bucket, against expected.sh's output (pasted below as it printed it).
func TestRealFilesPerInterval(t *testing.T) {
	// Runs written in more than one format: each format must give the
	// same buckets.
	vegetaStall := []bucketWant{
		{1796152092, 9, 4, 8205407, 31301781},
		{1796152093, 20, 10, 93863129, 309876987},
		{1796152094, 20, 10, 1298150, 2509022},
		{1796152095, 20, 10, 92411056, 313310374},
		{1796152096, 20, 10, 1007432, 1529805},
		{1796152097, 11, 6, 62280067, 301699973},
	}
	jmeterStall := []bucketWant{
		{1796160748, 2, 0, 616000000, 653000000},
		{1796160749, 16, 4, 17666666, 57000000},
		{1796160750, 12, 2, 69100000, 306000000},
		{1796160751, 17, 5, 12333333, 43000000},
		{1796160752, 11, 3, 82125000, 308000000},
		{1796160753, 16, 4, 42166666, 178000000},
		{1796160754, 10, 2, 97125000, 306000000},
		{1796160755, 10, 2, 40750000, 130000000},
	}
	gatlingStall := []bucketWant{
		{1796166001, 14, 2, 49583333, 291000000},
		{1796166002, 22, 8, 5857142, 9000000},
		{1796166003, 16, 4, 53500000, 320000000},
		{1796166004, 23, 6, 3764705, 9000000},
		{1796166005, 2, 0, 321000000, 321000000},
	}
	k6Run := []bucketWant{
		{1795989803, 9, 6, 24438910, 70989574},
	}
	for _, tc := range []struct {
		file   string
		opts   ImportOptions
		format string
		want   []bucketWant
	}{
		{"vegeta-stall.csv", ImportOptions{}, formatVegetaCSV, vegetaStall},
		// The same file gzipped.
		{"vegeta-stall.csv.gz", ImportOptions{}, formatVegetaCSV, vegetaStall},
		{"hey-stall.csv", ImportOptions{Start: time.Unix(1796152000, 0)}, formatHey, []bucketWant{
			{1796152001, 19, 0, 2094736, 5500000},
			{1796152002, 15, 0, 21740000, 312500000},
			{1796152003, 20, 0, 1265000, 6400000},
			{1796152004, 15, 0, 21213333, 302300000},
			{1796152005, 19, 0, 1794736, 16800000},
			{1796152006, 1, 0, 2000000, 2000000},
		}},
		// Locust 2.12.1 with memdiag's request hook: Locust's own summary
		// counted 60 requests, 28 failures.
		{"locust-hook.csv", ImportOptions{}, formatGeneric, []bucketWant{
			{1796153910, 2, 1, 304268000, 304268000},
			{1796153911, 10, 6, 240408750, 445380000},
			{1796153912, 12, 7, 9564400, 32808000},
			{1796153913, 18, 7, 8549090, 19746000},
			{1796153914, 14, 5, 95375777, 404159000},
			{1796153915, 4, 2, 10508000, 11336000},
		}},
		{"ab-stall.tsv", ImportOptions{}, formatAB, []bucketWant{
			{1796152112, 300, 0, 416666, 6000000},
		}},
		// JMeter 2.13, one run written three ways (expected.py): CSV with
		// header, XML, and header-less with custom columns; 116 rows of
		// which 22 are Transaction Controller rows (excluded).
		{"jmeter-stall.jtl", ImportOptions{}, formatJMeter, jmeterStall},
		{"jmeter-stall.xml.jtl", ImportOptions{}, formatJMeterXML, jmeterStall},
		// Gatling's text simulation.log, 3.4-3.12 and 3.0-3.3 layouts,
		// written from Gatling's serializer (SOURCE; expected.sh gatling).
		{"gatling-3.9-simulation.log", ImportOptions{}, formatGatling, gatlingStall},
		{"gatling-3.3-simulation.log", ImportOptions{}, formatGatling, gatlingStall},
		// k6 v1.8.1 (expected.py k6-json / k6-csv): 9 requests, 6 failed.
		{"k6-run.json", ImportOptions{}, formatK6JSON, k6Run},
		{"k6-run.csv", ImportOptions{}, formatK6CSV, k6Run},
	} {
		t.Run(tc.file, func(t *testing.T) {
			imp := importFixture(t, tc.file, tc.opts)
			total, errs := 0, 0
			for _, w := range tc.want {
				total += w.count
				errs += w.errors
			}
			if r := imp.Report; r.Format != tc.format || r.Rows != total || r.Bad != 0 || r.Truncated != 0 {
				t.Errorf("report = %+v, want %s with %d rows", r, tc.format, total)
			}
			edges := []time.Time{time.Unix(tc.want[0].end-1, 0)}
			for _, w := range tc.want {
				edges = append(edges, time.Unix(w.end, 0))
			}
			got := bucket(imp.Requests.Slice(), edges)
			gotTotal, gotErrs := 0, 0
			for i, w := range tc.want {
				g := got[i]
				gotTotal += g.Count
				gotErrs += g.Errors
				if g.Count != w.count || g.Errors != w.errors || int64(g.Mean) != w.meanNs || int64(g.P99) != w.p99Ns {
					t.Errorf("bucket ending %d: count %d errors %d mean %d p99 %d; want %d %d %d %d",
						w.end, g.Count, g.Errors, int64(g.Mean), int64(g.P99), w.count, w.errors, w.meanNs, w.p99Ns)
				}
			}
			if gotTotal != total || gotErrs != errs {
				t.Errorf("buckets hold %d requests, %d failed; want %d, %d (every request counted once)", gotTotal, gotErrs, total, errs)
			}
		})
	}
}

// TestDetectABAndSummaries: ab -g is detected; a tool's end-of-run
// summary gets a pointed hint naming the per-request file to give.
func TestDetectABAndSummaries(t *testing.T) {
	if f, err := detect([]byte("starttime\tseconds\tctime\tdtime\tttime\twait\nTue Dec 01 19:04:11 2026\t1796151851\t0\t1\t1\t1\n")); err != nil || f != formatAB {
		t.Errorf("ab -g: %q, %v", f, err)
	}
	imp := importFixture(t, "ab.tsv", ImportOptions{})
	if r := imp.Report; r.Rows != 40 || r.Resolution != time.Second || !imp.Requests.Slice()[0].Start.Equal(time.Unix(1796151851, 5e8)) || imp.Requests.Slice()[0].Latency != time.Millisecond {
		t.Errorf("ab.tsv: %+v, first %+v", r, imp.Requests.Slice()[0])
	}
	for _, tc := range []struct{ head, want string }{
		{`{"root_group":{"name":""},"metrics":{"http_req_duration":{"avg":1.2}}}`, "--summary-export"},
		{`{"latencies":{"total":1,"mean":2},"bytes_in":{},"requests":100,"status_codes":{"200":100}}`, "vegeta encode --to csv"},
		{"Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time\n", "stats_history.csv"},
		{"\nSummary:\n  Total:\t5.0 secs\n", "hey with -o csv"},
		{"This is ApacheBench, Version 2.3\n", "ab with -g FILE"},
		{"\x1f\x8b\x08\x00", "gzip-compressed"},
	} {
		_, err := detect([]byte(tc.head))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("detect(%.30q) = %v, want a hint with %q", tc.head, err, tc.want)
		}
	}
}

// TestImportGzipCut: a gzipped file cut short keeps what came before.
func TestImportGzipCut(t *testing.T) {
	b, err := os.ReadFile(fixture("vegeta-stall.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	imp, err := Import(bytes.NewReader(b[:len(b)/2]), "cut.csv.gz", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := imp.Report; r.Rows == 0 || r.Rows >= 100 || r.Truncated == 0 {
		t.Errorf("cut gzip: %+v, want some of the 100 rows and a truncation noted", r)
	}
}

// TestImportJMeterXML: top-level samples are requests; a Transaction
// Controller's own sample and a redirect's sub-results are not. The file
// is the first samples of JMeter 2.13's real jmeter-stall.xml.jtl with
// line 41's t set to "x".
func TestImportJMeterXML(t *testing.T) {
	imp := importFixture(t, "jmeter-bad.xml.jtl", ImportOptions{})
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	want := []Request{
		{Start: ms(1796160747426), Latency: 579 * time.Millisecond, Status: 200},
		{Start: ms(1796160747376), Latency: 653 * time.Millisecond, Status: 200},
		{Start: ms(1796160748155), Latency: 13 * time.Millisecond, Status: 200}, // redirect: 301 then 200, one request
		{Start: ms(1796160748155), Latency: 15 * time.Millisecond, Status: 200},
		{Start: ms(1796160748276), Latency: 5 * time.Millisecond, Status: 200},
		{Start: ms(1796160748277), Latency: 5 * time.Millisecond, Status: 200},
		{Start: ms(1796160748385), Latency: 3 * time.Millisecond, Status: 0, Err: true},
		{Start: ms(1796160748386), Latency: 3 * time.Millisecond, Status: 0, Err: true},
		{Start: ms(1796160748497), Latency: 6 * time.Millisecond, Status: 200},
	}
	if len(imp.Requests.Slice()) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(imp.Requests.Slice()), len(want), imp.Requests.Slice())
	}
	for i, w := range want {
		g := imp.Requests.Slice()[i]
		if !g.Start.Equal(w.Start) || g.Latency != w.Latency || g.Status != w.Status || g.Err != w.Err {
			t.Errorf("request %d = %+v, want %+v", i, g, w)
		}
	}
	if r := imp.Report; r.Format != formatJMeterXML || r.Rows != 9 || r.Transactions != 2 || r.Bad != 1 || r.BadLines[0].Line != 41 {
		t.Errorf("report = %+v, want jmeter-xml, 9 rows, 2 transactions, bad line 41", r)
	}
}

// TestImportJMeterCustomColumns: JMeter 2.13's header-less file with the
// columns its properties left on reads the same as the run's CSV with a
// header, from the properties file JMeter ran with or from a column list.
func TestImportJMeterCustomColumns(t *testing.T) {
	pf, err := os.Open(fixture("jmeter-stall-custom.properties"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fromProps, err := ParseJMeterProperties(pf, "jmeter-stall-custom.properties")
	if err != nil {
		t.Fatal(err)
	}
	// connect_time and the 2.x/3.1+ defaults left open: two candidates.
	if got := strings.Join(fromProps.Columns, ","); got != "timeStamp,elapsed,label,responseCode,responseMessage,success,failureMessage,sentBytes,URL,IdleTime,Connect" {
		t.Errorf("3.1+ columns %s", got)
	}
	if got := strings.Join(fromProps.Alt, ","); got != "timeStamp,elapsed,label,responseCode,responseMessage,success,Connect" {
		t.Errorf("2.x columns %s", got)
	}
	fromList, err := ParseJMeterColumns("timeStamp,elapsed,label,responseCode,responseMessage,success,Connect")
	if err != nil {
		t.Fatal(err)
	}
	want := importFixture(t, "jmeter-stall.jtl", ImportOptions{})
	for _, save := range []*JMeterSave{fromProps, fromList} {
		imp := importFixture(t, "jmeter-stall-custom.jtl", ImportOptions{JMeter: save})
		r := imp.Report
		if r.Format != formatJMeter || r.Rows != 94 || r.Transactions != 22 || r.Bad != 0 || !strings.Contains(r.Columns, "success,Connect") {
			t.Errorf("%s: report %+v", save.From, r)
		}
		if save.Alt != nil && !strings.Contains(r.Describe(), "with JMeter 2.x's defaults") {
			t.Errorf("%s: report does not say which defaults: %s", save.From, r.Describe())
		}
		if len(imp.Requests.Slice()) != len(want.Requests.Slice()) {
			t.Fatalf("%s: %d requests, want %d", save.From, len(imp.Requests.Slice()), len(want.Requests.Slice()))
		}
		// Both files hold the same samples; their order differs where two
		// threads finished together, so compare as multisets.
		key := func(q Request) string { return fmt.Sprint(q.Start.UnixMilli(), q.Latency, q.Status, q.Err) }
		n := map[string]int{}
		for _, q := range want.Requests.Slice() {
			n[key(q)]++
		}
		for _, q := range imp.Requests.Slice() {
			n[key(q)]--
		}
		for k, v := range n {
			if v != 0 {
				t.Errorf("%s: request %s differs by %d", save.From, k, v)
			}
		}
	}
	// A column list that does not fit the rows is said once, plainly.
	bad, _ := ParseJMeterColumns("timeStamp,elapsed,success")
	imp := importFixture(t, "jmeter-stall-custom.jtl", ImportOptions{JMeter: bad})
	if imp.Report.Rows != 0 || imp.Report.Bad != 116 || !strings.Contains(imp.Report.BadLines[0].Error(), "the first row has 7 fields, --latency-columns gives 3 columns") {
		t.Errorf("misfit columns: %+v", imp.Report)
	}
}

// TestImportGatlingBad: Gatling's other records are skipped; bad REQUEST
// records are reported with their lines.
func TestImportGatlingBad(t *testing.T) {
	in := "RUN\tx.Sim\tsim\t1796166000000\t \t3.9.5\n" +
		"REQUEST\t\thome\t1796166000100\t1796166000150\tOK\t \n" +
		"REQUEST\t\thome\t1796166000200\t-9223372036854775808\tOK\t \n" + // unmatched incoming event
		"REQUEST\t\thome\t1796166000300\t1796166000310\tMAYBE\t \n" +
		"REQUEST\thome\t1796166000400\t1796166000410\tOK\n" +
		"REQUEST\tx\t\thome\t1796166000500\t1796166000510\tKO\tboom\n" +
		"GROUP\tg\t1796166000100\t1796166000150\t50\tOK\n" +
		"PING\t1\n"
	imp, err := Import(strings.NewReader(in), "simulation.log", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := imp.Report
	var lines []int
	for _, l := range r.BadLines {
		lines = append(lines, l.Line)
	}
	if r.Format != formatGatling || r.Rows != 1 || r.Skipped != 2 || fmt.Sprint(lines) != "[3 4 5 6 8]" {
		t.Errorf("report %+v, bad lines %v; want 1 row, 2 skipped, bad 3 4 5 6 8", r, lines)
	}
	if q := imp.Requests.Slice()[0]; !q.Start.Equal(time.UnixMilli(1796166000100)) || q.Latency != 50*time.Millisecond || q.Err {
		t.Errorf("request %+v", q)
	}
}
