package session

import (
	"bytes"
	"strings"
	"testing"
)

// TestTailKeepsTheEnd: the tail that keeps ab's output holds the last
// max bytes written, across writes of any size, so ab's report (at the
// end) survives a verbose run.
func TestTailKeepsTheEnd(t *testing.T) {
	tl := &tail{max: 10}
	for _, w := range []string{"0123", "456789ab", "", "cdefghijklmnop", "q"} {
		if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := string(tl.bytes()); got != "hijklmnopq" {
		t.Errorf("kept %q, want the last 10 bytes %q", got, "hijklmnopq")
	}
	big := &tail{max: abTail}
	report := "Complete requests:      70\nFailed requests:        0\n"
	_, _ = big.Write(bytes.Repeat([]byte("x"), 3*abTail))
	_, _ = big.Write([]byte(report))
	if got := string(big.bytes()); len(got) != abTail || !strings.HasSuffix(got, report) {
		t.Errorf("kept %d bytes ending %q; want %d ending with the report", len(got), got[max(0, len(got)-60):], abTail)
	}
}
