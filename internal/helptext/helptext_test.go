package helptext

import (
	"strings"
	"testing"
)

// TestLayout: a heredoc's common indent goes, every non-blank line gets
// two spaces, trailing blanks and the final newline go, blank lines stay
// empty.
func TestLayout(t *testing.T) {
	in := "\n\t# record an hour  \n\tmemdiag watch --duration 1h\n\n\t# then analyze it\n\tmemdiag analyze rec.jsonl.gz\n\n"
	want := "  # record an hour\n  memdiag watch --duration 1h\n\n  # then analyze it\n  memdiag analyze rec.jsonl.gz"
	if got := layout(in); got != want {
		t.Errorf("layout =\n%q\nwant\n%q", got, want)
	}
}

// TestLongAndExamples: the embedded files are read by command name, the
// long help without its heredoc indent, the examples laid out; a name
// with no file panics (only a broken build loses one).
func TestLongAndExamples(t *testing.T) {
	if l := Long("gate"); l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, " ") {
		t.Errorf("Long(gate) = %q", l)
	}
	if e := Examples("gate"); !strings.HasPrefix(e, "  # ") || strings.HasSuffix(e, "\n") {
		t.Errorf("Examples(gate) = %q", e)
	}
	defer func() {
		if recover() == nil {
			t.Error("Long of a command without help did not panic")
		}
	}()
	Long("no-such-command")
}
