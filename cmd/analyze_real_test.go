package cmd

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestAnalyzeRealRecordingsJSON pins `analyze --format json` of every
// real and scenario recording kept in testdata (issues 26 and 32): a
// change to reading, decoding or the model that alters any verdict,
// episode or figure of these shows here as a golden diff. Review every
// golden update's diff like code; a speed-up must leave them all unchanged.
func TestAnalyzeRealRecordingsJSON(t *testing.T) {
	var recs []string
	for _, pat := range []string{
		"../correlate/testdata/real/*.jsonl.gz",
		"../correlate/testdata/scenarios/*.jsonl.gz",
		"../testdata/psi-suspect/*.jsonl.gz",
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m...)
	}
	sort.Strings(recs)
	if len(recs) < 20 {
		t.Fatalf("found %d recordings, want the testdata ones (>= 20)", len(recs))
	}
	for _, rec := range recs {
		dir := filepath.Base(filepath.Dir(rec))
		name := strings.TrimSuffix(filepath.Base(rec), ".jsonl.gz")
		t.Run(dir+"/"+name, func(t *testing.T) {
			code, out, errOut := runCmd(t, "analyze", "--format", "json", rec)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, filepath.Join("analyze-real", dir+"-"+name+".json.gz"), out)
		})
	}
}
