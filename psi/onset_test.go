package psi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/internal/fixtures"
)

// Totals copied by hand from testdata/linux-6.18/proc/pressure/memory.
func TestTotalReader(t *testing.T) {
	path := filepath.Join(fixtures.Proc(t, "linux-6.18"), "pressure", "memory")
	for _, tc := range []struct {
		kind string
		want int64
	}{{"some", 104492}, {"full", 87510}} {
		r, err := openTotalReader(path, tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // the second read must start at offset 0 again
			got, err := r.Total()
			if err != nil {
				t.Fatal(err)
			}
			if got != us(tc.want) {
				t.Errorf("%s read %d: Total() = %s, want %s", tc.kind, i, got, us(tc.want))
			}
		}
		r.Close()
	}
}

func TestParseTotalErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, kind, wantMsg string
	}{
		{"no full line", "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", "full", `f: malformed PSI line: no "full" line`},
		{"no total", "some avg10=0.00 avg60=0.00 avg300=0.00\n", "some", `f:1: malformed PSI line: no total= in "some avg10=0.00 avg60=0.00 avg300=0.00"`},
		{"bad total", "full avg10=0.00 avg60=0.00 avg300=0.00 total=12x\nsome total=1\n", "full", `f:1: malformed PSI line: bad total in "full avg10=0.00 avg60=0.00 avg300=0.00 total=12x"`},
		// Found by FuzzParseTotal (testdata/fuzz): wrapped to a negative duration.
		{"total past 292 years", "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\nfull total=9227000000000000\n", "full", `f:2: malformed PSI line: total=9227000000000000 µs: past 292 years, more than a Duration holds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTotal([]byte(tc.text), []byte(tc.kind+" "), "f")
			if err == nil || err.Error() != tc.wantMsg || !errors.Is(err, errParse) {
				t.Errorf("parseTotal() error = %v, want %q wrapping errParse", err, tc.wantMsg)
			}
		})
	}
	if _, err := openTotalReader("f", "most"); err == nil {
		t.Error("openTotalReader(kind most) succeeded, want an error")
	}
}

// pressurePath is the host's memory pressure file, or the fixture's copy
// when the kernel has no PSI.
func pressurePath(b *testing.B) string {
	if _, err := os.Stat("/proc/pressure/memory"); err == nil {
		return "/proc/pressure/memory"
	}
	return filepath.Join("..", "testdata", "linux-6.18", "proc", "pressure", "memory")
}

// BenchmarkOnsetPoll is one poll of the onset watcher (20 a second at the
// default 50 ms): the pread reader it uses against opening and parsing
// the whole file with ReadFile as it did before.
func BenchmarkOnsetPoll(b *testing.B) {
	path := pressurePath(b)
	b.Run("pread", func(b *testing.B) {
		r, err := openTotalReader(path, "some")
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Total(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadFile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadFile is the per-sample PSI read (three files per sample,
// plus three for a --cgroup).
func BenchmarkReadFile(b *testing.B) {
	path := pressurePath(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
