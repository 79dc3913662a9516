package record

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReaderSampleOrder: duplicated, out-of-order and concatenated
// recordings are read in file order, with one warning per kind naming the
// first line, on both the sequential (Next) and the parallel (ReadFile)
// path.
func TestReaderSampleOrder(t *testing.T) {
	p := writeLines(t, hdr,
		`{"type":"sample","seq":0,"time":"2026-11-29T10:00:00Z"}`,
		`{"type":"sample","seq":1,"time":"2026-11-29T10:00:01Z"}`,
		`{"type":"sample","seq":1,"time":"2026-11-29T10:00:01Z"}`, // line 4: duplicated
		`{"type":"sample","seq":2,"time":"2026-11-29T10:00:02Z"}`,
		hdr, // line 6: a second recording appended
		`{"type":"sample","seq":0,"time":"2026-11-29T09:59:58.5Z"}`, // line 7: 3.5 s back
		`{"type":"sample","seq":1,"time":"2026-11-29T09:59:59.5Z"}`,
		`{"type":"sample","seq":2,"time":"2026-11-29T09:59:59.5Z"}`, // line 9: duplicated
	)
	want := []string{
		"r.jsonl:6: 1 header line after the first line: several recordings concatenated into one file; they are analysed as one run — split the file at each header line to analyse them apart",
		"r.jsonl:7: a sample 3.5s earlier than the one before it (1 sample out of time order); the analysis takes them in file order",
		"r.jsonl:4: a sample with the same time as the one before it (2 samples duplicated); the analysis takes them in file order",
	}
	base := func(ws []string) []string {
		for i := range ws {
			ws[i] = strings.TrimPrefix(ws[i], filepath.Dir(p)+"/")
		}
		return ws
	}
	rec, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 7 {
		t.Errorf("ReadFile kept %d samples, want all 7", len(rec.Samples))
	}
	if d := cmp.Diff(want, base(rec.Warnings)); d != "" {
		t.Errorf("ReadFile warnings (-want +got):\n%s", d)
	}
	n := 0
	rec, err = ReadEach(p, func(*Sample) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, base(rec.Warnings)); d != "" || n != 7 {
		t.Errorf("ReadEach: %d samples; warnings (-want +got):\n%s", n, d)
	}
}

// TestReaderInOrderNoWarning: a recording in order says nothing.
func TestReaderInOrderNoWarning(t *testing.T) {
	var lines []string
	for i := range 600 { // more than one parallel batch
		lines = append(lines, fmt.Sprintf(`{"type":"sample","seq":%d,"time":"2026-11-29T10:%02d:%02dZ"}`, i, i/60, i%60))
	}
	rec, err := ReadFile(writeLines(t, append([]string{hdr}, lines...)...))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Warnings) != 0 || len(rec.Samples) != 600 {
		t.Errorf("%d samples, warnings %s", len(rec.Samples), strings.Join(rec.Warnings, "; "))
	}
}
