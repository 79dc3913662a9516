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

// TestRunsAB: ab is recognised as the command, behind a wrapper and in
// a shell's -c script, so its non-2xx count is kept in each case.
func TestRunsAB(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"ab", "-n", "10", "http://127.0.0.1/"}, true},
		{[]string{"/usr/bin/ab", "-g", "a.tsv", "http://127.0.0.1/"}, true},
		{[]string{"timeout", "60", "ab", "-n", "10", "http://127.0.0.1/"}, true},
		{[]string{"sh", "-c", "ab -n 10 -g a.tsv http://127.0.0.1/ > ab.out"}, true},
		{[]string{"bash", "-ec", "cd /tmp && /usr/bin/ab -n 10 http://127.0.0.1/; echo done"}, true},
		{[]string{"sh", "-c", "(ab -n 10 http://127.0.0.1/)"}, true},
		{[]string{"sh", "-c", "echo lab; abc -n 1"}, false},
		{[]string{"hey", "-n", "10", "http://127.0.0.1/"}, false},
		{[]string{"sh", "-c"}, false},
		{nil, false},
	} {
		if got := RunsAB(c.argv); got != c.want {
			t.Errorf("RunsAB(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}
