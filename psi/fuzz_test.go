package psi

import (
	"math"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testutil"
)

// FuzzParse checks that no PSI file panics the parser and that what it
// accepts is a valid reading: averages finite and within 0–100 %, totals
// not negative, errors naming the file.
func FuzzParse(f *testing.F) {
	testutil.Seed[string](f, "../testdata/linux-6.18/proc/pressure/memory", "../testdata/linux-6.18/proc/pressure/io", "../testdata/linux-6.18-hog-t1/proc/pressure/memory")
	f.Add("some avg10=NaN avg60=0 avg300=0 total=1\n")
	f.Add("some avg10=0 avg60=0 avg300=0 total=18446744073709551615\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := parse(strings.NewReader(text), "memory")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "memory") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		lines := []Line{r.Some}
		if r.Full != nil {
			lines = append(lines, *r.Full)
		}
		for _, l := range lines {
			for _, a := range []float64{l.Avg10, l.Avg60, l.Avg300} {
				if math.IsNaN(a) || a < 0 || a > 100 {
					t.Fatalf("accepted average %v in %q", a, text)
				}
			}
			if l.Total < 0 {
				t.Fatalf("accepted negative total %v in %q", l.Total, text)
			}
		}
	})
}

// TestParseRejectsImpossible: FuzzParse found that NaN, Inf and negative
// averages were accepted and that a total past 2^63 ns wrapped negative.
func TestParseRejectsImpossible(t *testing.T) {
	for _, text := range []string{
		"some avg10=NaN avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=+Inf avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=-1 avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615\n",
	} {
		if r, err := parse(strings.NewReader(text), "memory"); err == nil {
			t.Errorf("parse(%q) = %+v, want an error", text, r)
		}
	}
	r, err := parse(strings.NewReader("some avg10=100.00 avg60=0.00 avg300=0.00 total=9223372036854775\n"), "memory")
	if err != nil || r.Some.Total != 9223372036854775*1000 {
		t.Errorf("largest total: %+v, %v", r, err)
	}
}

// FuzzParseTotal checks the onset watcher's fast reader of one total=
// (parseTotal, read on every trigger wake-up): no panic, no negative
// total, errors naming the file, and where the full parser accepts the
// same file both read the same some and full totals.
func FuzzParseTotal(f *testing.F) {
	testutil.Seed[string](f, "../testdata/linux-6.18/proc/pressure/memory", "../testdata/linux-6.18-hog-t1/proc/pressure/memory")
	f.Add("some avg10=0 avg60=0 avg300=0 total=9999999999999999999\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, perr := parse(strings.NewReader(text), "memory")
		for _, want := range []string{"some ", "full "} {
			tot, err := parseTotal([]byte(text), []byte(want), "memory")
			if err != nil {
				if !strings.HasPrefix(err.Error(), "memory") {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			if tot < 0 {
				t.Fatalf("parseTotal(%q) = %v, negative", want, tot)
			}
			if perr != nil {
				continue
			}
			l := &r.Some
			if want == "full " {
				l = r.Full
			}
			if l != nil && l.Total != tot {
				t.Fatalf("%q: parseTotal %v, parse %v", want, tot, l.Total)
			}
		}
	})
}
