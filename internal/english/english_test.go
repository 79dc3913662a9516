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
