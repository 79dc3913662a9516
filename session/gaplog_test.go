package session

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/record"
)

// The first gap is said at once; those within the next minute are summed
// into the line of the first gap after it.
func TestGapLog(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var b strings.Builder
	l := &gapLog{w: &b}
	for _, g := range []*record.Gap{
		{Start: at(1000), End: at(4700), Missed: 2, Late: 700 * time.Millisecond},
		{Start: at(10000), End: at(11600), Late: 600 * time.Millisecond},
		{Start: at(30000), End: at(33200), Missed: 2},
		{Start: at(64000), End: at(65600), Late: 600 * time.Millisecond}, // a minute after the first line
		{Start: at(70000), End: at(72000), Missed: 1},
	} {
		l.add(g)
	}
	l.flush() // the run ends: the last gap, not said yet
	l.flush() // nothing more
	want := "memdiag: warning: record: 2 samples missed, 1 late in 1 gap (the longest 3.7s without a sample, until 08:00:04): the recorder was stopped, starved of CPU or blocked; each gap is in the recording\n" +
		"memdiag: warning: record: 2 samples missed, 2 late in 3 gaps (the longest 3.2s without a sample, until 08:00:33): the recorder was stopped, starved of CPU or blocked; each gap is in the recording\n" +
		"memdiag: warning: record: 1 sample missed in 1 gap (the longest 2s without a sample, until 08:01:12): the recorder was stopped, starved of CPU or blocked; each gap is in the recording\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("log (-want +got):\n%s", d)
	}
}
