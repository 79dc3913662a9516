package gate

import (
	"strings"
	"testing"
)

// FuzzParse checks that no threshold expression panics the parser and
// that an accepted one prints as it was written and parses again to the
// same limit.
func FuzzParse(f *testing.F) {
	for _, e := range []string{"memory.full.stall<1%", "swap.out<64MiB", "oom_kills==0", "io.some.stall.p95<=20%", "file_lru.drop<50%", "direct_reclaim!=0", "memory.some.avg10<5"} {
		f.Add(e)
	}
	for _, m := range metrics {
		f.Add(m.Name + "<1")
	}
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := Parse(expr)
		if err != nil {
			return
		}
		again, err := Parse(th.String())
		if err != nil {
			t.Fatalf("%q parses, its String %q does not: %v", expr, th.String(), err)
		}
		if a, b := th.Limit(), again.Limit(); a != b && !(a != a && b != b) {
			t.Fatalf("%q: limit %v, %q: limit %v", expr, a, th.String(), b)
		}
	})
}

// FuzzParseFile checks that no YAML or JSON threshold file panics the
// reader and that every error names the file.
func FuzzParseFile(f *testing.F) {
	f.Add("thresholds:\n  - memory.full.stall<1%\n  - swap.out<64MiB\n")
	f.Add(`["memory.full.stall<1%", "oom_kills==0"]`)
	f.Add("thresholds: &a [*a]\n")
	f.Add("a: &a [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n")
	f.Fuzz(func(t *testing.T, text string) {
		ths, err := parseFile([]byte(text), "gate.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "gate.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(ths) == 0 {
			t.Fatal("no thresholds and no error")
		}
	})
}
