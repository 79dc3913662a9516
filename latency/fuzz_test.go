package latency

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Fuzz targets, one per format: any input gives an import (with bad rows
// counted) or an error, never a panic, and what is imported is sane. The
// seeds are the real fixtures of testdata/latency; inputs that once
// crashed an importer are kept in testdata/fuzz/<target>. .ci/run runs
// each target for a few seconds.

// fuzzImport runs Import with format forced on every input.
func fuzzImport(f *testing.F, format string, seeds ...string) {
	for _, s := range seeds {
		b, err := os.ReadFile(filepath.Join(fixtures, s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
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
	})
}

func checkImported(t *testing.T, imp *Imported) {
	t.Helper()
	r := imp.Report
	if r.Rows != len(imp.Requests)+len(imp.Intervals) {
		t.Fatalf("Rows %d, but %d requests and %d intervals", r.Rows, len(imp.Requests), len(imp.Intervals))
	}
	if r.Bad < len(r.BadLines) || len(r.BadLines) > maxBadLines {
		t.Fatalf("Bad %d with %d BadLines", r.Bad, len(r.BadLines))
	}
	for _, q := range imp.Requests {
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

func FuzzImportVegetaCSV(f *testing.F) {
	fuzzImport(f, formatVegetaCSV, "vegeta.csv", "vegeta-bad.csv")
}

func FuzzImportVegetaJSON(f *testing.F) {
	fuzzImport(f, formatVegetaJSON, "vegeta.jsonl", "vegeta-bad.jsonl")
}

func FuzzImportJMeter(f *testing.F) {
	fuzzImport(f, formatJMeter, "jmeter-noheader.jtl", "jmeter-2.13-header.jtl", "jmeter-5-header.jtl", "jmeter-bad.jtl")
}

func FuzzImportK6JSON(f *testing.F) {
	fuzzImport(f, formatK6JSON, "k6-run.json", "k6.json")
}

func FuzzImportK6CSV(f *testing.F) {
	fuzzImport(f, formatK6CSV, "k6-run.csv", "k6.csv")
}

func FuzzImportLocust(f *testing.F) {
	fuzzImport(f, formatLocust, "locust_stats_history.csv")
}

func FuzzImportHey(f *testing.F) {
	fuzzImport(f, formatHey, "hey.csv")
}

func FuzzImportGeneric(f *testing.F) {
	fuzzImport(f, formatGeneric, "generic.csv", "generic-noheader.csv")
}

// FuzzDetect: detection of any first bytes names a format or errs.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{"vegeta.csv", "k6-run.json", "jmeter-5-header.jtl", "hey.csv", "generic.csv"} {
		b, err := os.ReadFile(filepath.Join(fixtures, s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if name, err := detect(data); err == nil {
			if _, err := newParser(name, ImportOptions{}); err != nil {
				t.Fatalf("Detect named %q, which has no parser", name)
			}
		}
	})
}

// FuzzFollow: following a file with any content, written in two parts,
// never panics (the parsers see lines as the follower cuts them).
func FuzzFollow(f *testing.F) {
	for _, s := range []string{"vegeta.csv", "jmeter-5-header.jtl", "k6-run.csv", "generic.csv"} {
		b, err := os.ReadFile(filepath.Join(fixtures, s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(len(b)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
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

func FuzzImportAB(f *testing.F) {
	fuzzImport(f, formatAB, "ab.tsv", "ab-stall.tsv")
}

func FuzzImportJMeterXML(f *testing.F) {
	fuzzImport(f, formatJMeterXML, "jmeter-bad.xml.jtl")
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
	b, err := os.ReadFile(filepath.Join(fixtures, "jmeter-stall-custom.jtl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, "timeStamp,elapsed,label,responseCode,responseMessage,success,Connect", "yyyy/MM/dd HH:mm:ss.SSS")
	f.Add([]byte("2026/12/01 22:30:00.250;12;true\n"), "timeStamp,elapsed,success", "")
	f.Fuzz(func(t *testing.T, data []byte, cols, layout string) {
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
	})
}

func FuzzImportGatling(f *testing.F) {
	fuzzImport(f, formatGatling, "gatling-3.9-simulation.log", "gatling-3.3-simulation.log")
}
