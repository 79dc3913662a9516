package gatereport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/format"
)

// TestOutputsWrite: --output takes the report instead of stdout, --junit
// gets the XML, the step summary is appended to (not rewritten), every
// file with the mode asked for; a folder as --output is an error naming
// the flag.
func TestOutputsWrite(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	if err := os.WriteFile(p("summary.md"), []byte("earlier step\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	o := Outputs{Stdout: &stdout, Format: format.JSON, Output: p("r.json"), JUnit: p("r.xml"), StepSummary: p("summary.md"), Mode: 0o640}
	if err := o.Write(goldenReport(t, 0)); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout got %q, want nothing with --output", stdout.String())
	}
	for name, want := range map[string]string{"r.json": `"thresholds"`, "r.xml": "<testsuite", "summary.md": "earlier step\n"} {
		b, err := os.ReadFile(p(name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, lacks %q:\n%s", name, err, want, b)
		}
	}
	if b, _ := os.ReadFile(p("summary.md")); !strings.HasPrefix(string(b), "earlier step\n") || !strings.Contains(string(b), "| ") {
		t.Errorf("summary.md not appended a markdown table to:\n%s", b)
	}
	for _, name := range []string{"r.json", "r.xml"} {
		if fi, err := os.Stat(p(name)); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: %v, %v; want mode 0640", name, fi, err)
		}
	}
	o.Output = dir
	if err := o.Write(goldenReport(t, 0)); err == nil || !strings.HasPrefix(err.Error(), "--output: ") {
		t.Errorf("a folder as --output: %v", err)
	}
}
