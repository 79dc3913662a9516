package english

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 OOM kills", 1: "1 OOM kill", 2: "2 OOM kills"} {
		if got := Count(n, "OOM kill"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Count(2, "process"); got != "2 processes" {
		t.Errorf("Count(2, process) = %q", got)
	}
	if got := Count(1, "process"); got != "1 process" {
		t.Errorf("Count(1, process) = %q", got)
	}
}

func TestList(t *testing.T) {
	for _, c := range []struct {
		words []string
		want  string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := List(c.words, "or"); got != c.want {
			t.Errorf("List(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}
