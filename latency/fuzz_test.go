package latency

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// Fuzz targets, one per format: any input gives an import (with bad rows
// counted) or an error, never a panic, and what is imported is sane. The
// seeds are the first lines of the real fixtures of testdata/latency
// (seedOf); TestFuzzBodiesOnFixtures runs the same checks on the whole
// fixtures. Small inputs that once crashed an importer are kept in
// testdata/fuzz/<target>. .ci/run runs each target for 2000 executions.

// maxSeed bounds a seed's length. The engine minimizes every new
// interesting input it finds, and minimizing n bytes takes up to about
// n²/2 executions that it does not count: from whole fixtures (kilobytes)
// that is minutes, and FuzzImportVegetaJSON made 4 executions in 21 s
// (issue 29.8; scripts/fuzz.sh now fails such a target).
const maxSeed = 256

// seedOf returns the first whole lines of b that fit in maxSeed bytes (at
// least the first line, cut to maxSeed).
func seedOf(b []byte) []byte { return headOf(b, maxSeed) }

// headOf returns the first whole lines of b that fit in n bytes (at least
// the first line, cut to n).
func headOf(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	if i := bytes.LastIndexByte(b[:n], '\n'); i > 0 {
		return b[:i+1]
	}
	return b[:n]
}

// readFixture reads a file of testdata/latency.
func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// importFixtures are each format's fixtures: the fuzz targets' seeds
// (their first lines) and TestFuzzBodiesOnFixtures's inputs (whole).
var importFixtures = map[string][]string{
	formatVegetaCSV:  {"vegeta.csv", "vegeta-bad.csv"},
	formatVegetaJSON: {"vegeta.jsonl", "vegeta-bad.jsonl"},
	formatJMeter:     {"jmeter-noheader.jtl", "jmeter-2.13-header.jtl", "jmeter-5-header.jtl", "jmeter-bad.jtl"},
	formatK6JSON:     {"k6-run.json", "k6.json"},
	formatK6CSV:      {"k6-run.csv", "k6.csv"},
	formatLocust:     {"locust_stats_history.csv", "locust-mean-past-292-years.csv"},
	formatHey:        {"hey.csv", "hey-stall.csv"},
	formatGeneric:    {"generic.csv", "generic-noheader.csv"},
	formatAB:         {"ab.tsv", "ab-stall.tsv"},
	formatJMeterXML:  {"jmeter-bad.xml.jtl", "jmeter-stall.xml.jtl"},
	formatGatling:    {"gatling-3.9-simulation.log", "gatling-3.3-simulation.log"},
}

// fuzzImport runs Import with format forced on every input.
func fuzzImport(f *testing.F, format string, extra ...[]byte) {
	for _, s := range importFixtures[format] {
		f.Add(seedOf(readFixture(f, s)))
	}
	for _, b := range extra {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, format, data) })
}

// checkImport is the fuzz targets' body: Import with format forced, and
// with the format detected, gives a sane import or an error.
func checkImport(t *testing.T, format string, data []byte) {
	t.Helper()
	opts := ImportOptions{Format: format, Location: time.UTC, LatencyUnit: time.Millisecond}
	imp, err := Import(bytes.NewReader(data), "fuzz", opts)
	if err != nil {
		return
	}
	checkImported(t, imp)
	// Detection on the same bytes must not panic either, and a
	// detected import must hold up the same way.
	if _, err := detect(data); err == nil {
		if imp, err := Import(bytes.NewReader(data), "fuzz", ImportOptions{}); err == nil {
			checkImported(t, imp)
		}
	}
}

// TestFuzzBodiesOnFixtures runs the fuzz targets' checks on the whole
// fixtures their seeds are cut from: the big real files are regression
// tests, not seeds.
func TestFuzzBodiesOnFixtures(t *testing.T) {
	for format, files := range importFixtures {
		for _, name := range files {
			t.Run(format+"/"+name, func(t *testing.T) { checkImport(t, format, readFixture(t, name)) })
		}
	}
	for _, name := range detectFixtures {
		t.Run("detect/"+name, func(t *testing.T) { checkDetect(t, readFixture(t, name)) })
	}
	for _, name := range followFixtures {
		t.Run("follow/"+name, func(t *testing.T) {
			b := readFixture(t, name)
			checkFollow(t, b, uint16(len(b)/2))
		})
	}
	b := readFixture(t, "jmeter-stall-custom.jtl")
	checkJMeterColumns(t, b, jmeterStallColumns, jmeterStallLayout)
}

// TestFuzzSeedsSmall: every seed corpus file kept in testdata/fuzz is
// small enough for the engine to minimize what grows from it.
func TestFuzzSeedsSmall(t *testing.T) {
	files, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, p := range files {
		if fi, err := os.Stat(p); err != nil || fi.Size() > 2*maxSeed {
			t.Errorf("%s: %d bytes, more than %d; make it a fixture of TestFuzzBodiesOnFixtures", p, fi.Size(), 2*maxSeed)
		}
	}
}

func checkImported(t *testing.T, imp *Imported) {
	t.Helper()
	r := imp.Report
	if r.Rows != len(imp.Requests.Slice())+len(imp.Intervals) {
		t.Fatalf("Rows %d, but %d requests and %d intervals", r.Rows, len(imp.Requests.Slice()), len(imp.Intervals))
	}
	if r.Bad < len(r.BadLines) || len(r.BadLines) > maxBadLines {
		t.Fatalf("Bad %d with %d BadLines", r.Bad, len(r.BadLines))
	}
	for _, q := range imp.Requests.Slice() {
		if q.Latency < 0 {
			t.Fatalf("negative latency %v", q.Latency)
		}
	}
	for _, iv := range imp.Intervals {
		if iv.Count < 0 || iv.Errors < 0 || iv.Mean < 0 {
			t.Fatalf("negative interval figures: %+v", iv)
		}
	}
}

func FuzzImportVegetaCSV(f *testing.F)  { fuzzImport(f, formatVegetaCSV) }
func FuzzImportVegetaJSON(f *testing.F) { fuzzImport(f, formatVegetaJSON) }
func FuzzImportJMeter(f *testing.F)     { fuzzImport(f, formatJMeter) }
func FuzzImportK6JSON(f *testing.F)     { fuzzImport(f, formatK6JSON) }
func FuzzImportK6CSV(f *testing.F)      { fuzzImport(f, formatK6CSV) }
func FuzzImportLocust(f *testing.F)     { fuzzImport(f, formatLocust) }
func FuzzImportHey(f *testing.F)        { fuzzImport(f, formatHey) }
func FuzzImportGeneric(f *testing.F)    { fuzzImport(f, formatGeneric) }

var detectFixtures = []string{"vegeta.csv", "k6-run.json", "jmeter-5-header.jtl", "hey.csv", "generic.csv"}

// FuzzDetect: detection of any first bytes names a format or errs.
func FuzzDetect(f *testing.F) {
	for _, s := range detectFixtures {
		f.Add(seedOf(readFixture(f, s)))
	}
	f.Fuzz(checkDetect)
}

func checkDetect(t *testing.T, data []byte) {
	if name, err := detect(data); err == nil {
		if _, err := newParser(name, ImportOptions{}); err != nil {
			t.Fatalf("Detect named %q, which has no parser", name)
		}
	}
}

var followFixtures = []string{"vegeta.csv", "jmeter-5-header.jtl", "k6-run.csv", "generic.csv"}

// FuzzFollow: following a file with any content, written in two parts,
// never panics (the parsers see lines as the follower cuts them). An
// execution takes over 5 ms (the follower polls), so its seeds are a
// header and a row or two: minimizing an input of n bytes runs it up to
// n²/2 times.
func FuzzFollow(f *testing.F) {
	for _, s := range followFixtures {
		b := headOf(readFixture(f, s), maxSeed/2)
		f.Add(b, uint16(len(b)/2))
	}
	f.Fuzz(checkFollow)
}

// checkFollow runs in a synctest bubble: the follower's polls and the
// writer's sleeps take no wall-clock time (an execution took over 5 ms,
// and FuzzFollow made a few hundred in 20 s).
func checkFollow(t *testing.T, data []byte, cut uint16) {
	synctest.Test(t, func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "r.csv")
		c := min(int(cut), len(data))
		if err := os.WriteFile(p, data[:c], 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan Request, 16)
		ivs := make(chan IntervalStat, 16)
		go func() {
			for range out {
			}
		}()
		go func() {
			for range ivs {
			}
		}()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = Follow(ctx, p, FollowOptions{ImportOptions: ImportOptions{Location: time.UTC, Start: time.Unix(1, 0)}, Poll: time.Millisecond, Intervals: ivs}, out)
		}()
		time.Sleep(2 * time.Millisecond)
		if err := os.WriteFile(p+".tmp", data, 0o600); err == nil {
			_ = os.Rename(p+".tmp", p)
		}
		time.Sleep(3 * time.Millisecond)
		cancel()
		<-done
		close(out)
		close(ivs)
	})
}

func FuzzImportAB(f *testing.F) { fuzzImport(f, formatAB) }

func FuzzImportJMeterXML(f *testing.F) {
	// The first lines of a fixture cut an element; a whole small document too.
	fuzzImport(f, formatJMeterXML, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<testResults version="1.2">
<httpSample t="13" lt="5" ts="1796160748155" s="true" lb="r" rc="200">
  <httpSample t="5" ts="1796160748155" s="false" lb="d" rc="301"/>
</httpSample>
<sample t="4" ts="1796160748164" s="true" lb="x" rc="200"/>
</testResults>
`))
}

// FuzzJMeterProperties: any properties file gives save settings that
// name timeStamp and elapsed, or an error; never a panic.
func FuzzJMeterProperties(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(fixtures, "jmeter-stall-custom.properties"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("jmeter.save.saveservice.timestamp_format=yyyy/MM/dd HH:mm:ss.SSS\njmeter.save.saveservice.default_delimiter=\\t\nk=\\\n  v\\u0041\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseJMeterProperties(bytes.NewReader(data), "p")
		if err != nil {
			return
		}
		for _, cols := range [][]string{s.Columns, s.Alt} {
			if cols != nil && (cols[0] != "timeStamp" || cols[1] != "elapsed") {
				t.Fatalf("columns %v", cols)
			}
		}
	})
}

// FuzzImportJMeterColumns: a header-less JTL read with any column list
// and the real properties file's settings never panics.
func FuzzImportJMeterColumns(f *testing.F) {
	f.Add(seedOf(readFixture(f, "jmeter-stall-custom.jtl")), jmeterStallColumns, jmeterStallLayout)
	f.Add([]byte("2026/12/01 22:30:00.250;12;true\n"), "timeStamp,elapsed,success", "")
	f.Fuzz(checkJMeterColumns)
}

// The columns and date format of jmeter-stall-custom.jtl (its .properties).
const (
	jmeterStallColumns = "timeStamp,elapsed,label,responseCode,responseMessage,success,Connect"
	jmeterStallLayout  = "yyyy/MM/dd HH:mm:ss.SSS"
)

func checkJMeterColumns(t *testing.T, data []byte, cols, layout string) {
	s, err := ParseJMeterColumns(cols)
	if err != nil {
		return
	}
	if layout != "" {
		if s.DateLayout, err = javaDateLayout(layout); err != nil {
			return
		}
	}
	imp, err := Import(bytes.NewReader(data), "fuzz", ImportOptions{JMeter: s, Location: time.UTC})
	if err == nil {
		checkImported(t, imp)
	}
}

func FuzzImportGatling(f *testing.F) { fuzzImport(f, formatGatling) }
