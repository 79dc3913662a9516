package analysis

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/usage"
	"github.com/memdiag/memdiag/record"
)

// FuzzParseStart checks that --latency-start never panics and that an
// accepted time is after the Unix epoch and before time.Duration's limit
// of nanoseconds since it (year 2262): a Unix time past it wrapped.
func FuzzParseStart(f *testing.F) {
	for _, s := range []string{"1795988632", "1795988632.5", "2026-11-29T21:43:00+01:00", "1e300", "Inf", "NaN", "-1", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseStart(s)
		if err != nil {
			return
		}
		if _, rfc := time.Parse(time.RFC3339Nano, s); rfc == nil {
			return // any RFC 3339 time, as written
		}
		if !got.After(time.Unix(0, 0)) || got.UnixNano() < 0 {
			t.Fatalf("ParseStart(%q) = %v, not after the epoch", s, got)
		}
	})
}

// TestParseStartFuzzFindings: what FuzzParseStart found. --latency-start
// 1e300 wrapped to 1677.
func TestParseStartFuzzFindings(t *testing.T) {
	if got, err := ParseStart("1e300"); err == nil {
		t.Errorf("ParseStart(1e300) = %v", got)
	}
	if got, err := ParseStart("1795988632.5"); err != nil || !got.Equal(time.Unix(1795988632, 5e8)) {
		t.Errorf("ParseStart(1795988632.5) = %v, %v", got, err)
	}
}

// Each bad --latency-* value is a usage error naming its flag.
func TestImportOptionsBadFlags(t *testing.T) {
	h := &record.Header{}
	for _, tc := range []struct {
		l    LatencyFlags
		want string
	}{
		{LatencyFlags{TZ: "Mars/Base"}, "--latency-tz: "},
		{LatencyFlags{Unit: "min"}, `--latency-unit: want ns, us, ms or s, got "min"`},
		{LatencyFlags{MinShare: 1.5}, "--latency-min-share: want a share from 0 to 1, got 1.5"},
		{LatencyFlags{Start: "yesterday"}, `--latency-start: want RFC 3339`},
		{LatencyFlags{Columns: "timeStamp", Properties: "x"}, "--latency-columns and --latency-properties: give one"},
	} {
		_, _, err := tc.l.ImportOptions(h)
		var ue *usage.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %T %v; want a usage error %q", tc.l, err, err, tc.want)
		}
	}
	o, from, err := LatencyFlags{Start: "1795988632", Unit: "ms"}.ImportOptions(h)
	if err != nil || !o.Start.Equal(time.Unix(1795988632, 0)) || o.LatencyUnit != time.Millisecond || !strings.Contains(from, "--latency-start") {
		t.Errorf("good flags: %+v, %q, %v", o, from, err)
	}
}

// TestImportABOutput (issue 30.11): a real ab run (testdata/latency/SOURCE:
// 70 requests, 22 answered 404 or 500). Its -g file alone imports 70
// successes, and the import says where ab's failures are; with
// --latency-ab-output its standard output's counts are said beside the
// import. A file that is not ab's output, a --latency file that is not
// ab -g, and - are usage errors naming the flag.
func TestImportABOutput(t *testing.T) {
	h := &record.Header{TimeZone: "UTC"}
	dir := filepath.Join("..", "testdata", "latency")
	tsv, out := filepath.Join(dir, "ab-non2xx.tsv"), filepath.Join(dir, "ab-non2xx.stdout.txt")
	imp, err := LatencyFlags{}.Import(context.Background(), nil, h, tsv)
	if err != nil {
		t.Fatal(err)
	}
	if d := imp.Report.Describe(); !strings.Contains(d, "ab -g writes no status: ab's failed and non-2xx requests are counted only in its standard output (give it with --latency-ab-output)") {
		t.Errorf("without --latency-ab-output: %q", d)
	}
	imp, err = LatencyFlags{ABOutput: out}.Import(context.Background(), nil, h, tsv)
	if err != nil {
		t.Fatal(err)
	}
	want := "ab's standard output (" + out + ") counts 0 failed and 22 non-2xx of 70 complete requests; ab -g writes no status, so no interval can take them"
	if d := imp.Report.Describe(); !strings.Contains(d, want) {
		t.Errorf("with --latency-ab-output:\n%q\nwant it to hold\n%q", d, want)
	}
	for _, tc := range []struct {
		l    LatencyFlags
		file string
		want string
	}{
		{LatencyFlags{ABOutput: tsv}, tsv, "--latency-ab-output: " + tsv + ": malformed row: no \"Complete requests:\" line: not ab's standard output"},
		{LatencyFlags{ABOutput: out}, filepath.Join(dir, "hey.csv"), "--latency-ab-output: the --latency file"},
		{LatencyFlags{ABOutput: "-"}, tsv, "--latency-ab-output: give ab's saved standard output as a file"},
	} {
		_, err := tc.l.Import(context.Background(), nil, h, tc.file)
		var ue *usage.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v on %s: %T %v; want a usage error %q", tc.l, tc.file, err, err, tc.want)
		}
	}
}
