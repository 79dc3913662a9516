package format_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/gate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/report"
	"github.com/memdiag/memdiag/report/mem"
	"github.com/memdiag/memdiag/report/timersreport"
)

// FuzzParse checks the one parser of every --format flag, with each
// command's real list (the flags' format.Value.Set calls Parse): no panic, an accepted name is one of
// the allowed formats and Set stores it, and a refusal wraps ErrUnknown
// and lists what is allowed. Seeds are the names the commands' help
// offers.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"table", "markdown", "md", "JSON", " csv ", "github", "html", "", "xml"} {
		f.Add(s)
	}
	allowed := [][]format.Format{report.Formats, mem.Formats, gate.Formats, timersreport.Formats, nil}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range allowed {
			got, err := format.Parse(s, a)
			if err != nil {
				if !errors.Is(err, format.ErrUnknown) || !strings.HasSuffix(err.Error(), "want one of "+format.List(a)) {
					t.Fatalf("Parse(%q, %v): %v", s, a, err)
				}
				continue
			}
			if !slices.Contains(a, got) {
				t.Fatalf("Parse(%q, %v) = %q, not allowed", s, a, got)
			}
			var p format.Format
			if err := format.NewValue(&p, a[0], a).Set(s); err != nil || p != got {
				t.Fatalf("Value.Set(%q) stored %q, %v; Parse gave %q", s, p, err, got)
			}
		}
	})
}
