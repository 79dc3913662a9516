package correlate

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/golden"
	"github.com/memdiag/memdiag/record"
)

// TestFixtureRecordings keeps testdata/*.jsonl.gz, the synthetic
// recordings the command tests analyse, equal to what the builder makes
// (make golden, or MEMDIAG_UPDATE_GOLDEN=1 go test, rewrites them). The end line
// carries the last sample's time (writeRecording), so every line is compared.
func TestFixtureRecordings(t *testing.T) {
	for name, s := range map[string]synth{"union": unionCase(), "inprocess": inProcessCase(), "noperiod": noPeriodCase()} {
		t.Run(name, func(t *testing.T) {
			rec := s.build(t)
			path := filepath.Join("testdata", name+".jsonl.gz")
			tmp := filepath.Join(t.TempDir(), name+".jsonl.gz")
			target := tmp
			if golden.Updating() {
				target = path
			}
			writeRecording(t, rec, target)
			if golden.Updating() {
				return
			}
			if d := cmp.Diff(lines(t, path), lines(t, tmp)); d != "" {
				t.Errorf("%s is stale (make golden rewrites it) (-want +got):\n%s", path, d)
			}
			// Read back, the recording gives the same verdict as built.
			back, err := record.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, got := Analyze(rec, Options{Project: testProject}), Analyze(back, Options{Project: testProject})
			if d := cmp.Diff(names(want), names(got)); d != "" || len(want.Episodes) != len(got.Episodes) {
				t.Errorf("read back: %d episodes (want %d), culprits (-want +got):\n%s", len(got.Episodes), len(want.Episodes), d)
			}
		})
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(nil, 1<<20)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func names(r Result) []string {
	var out []string
	for _, c := range r.Culprits {
		out = append(out, c.Name)
	}
	return out
}
