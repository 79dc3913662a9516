package analysis

import (
	"testing"
	"time"

	"github.com/memdiag/memdiag/latency"
)

// TestAnchorAtCommand: offsets from stdin count from the wrapped
// command's start; a file's mtime anchor stays when it lies up to 2 s
// after it (hey's start-up) and is replaced otherwise; nothing changes
// without a recorded start or for an anchor given with --latency-start.
func TestAnchorAtCommand(t *testing.T) {
	cmd := time.Date(2026, 11, 29, 21, 43, 0, 0, time.UTC)
	imported := func(startAt time.Time, relative bool, from string) *latency.Imported {
		return &latency.Imported{
			Requests: *latency.RequestsOf([]latency.Request{{Start: startAt.Add(3 * time.Second), Latency: time.Second}}),
			Report:   latency.ImportReport{StartAt: startAt, Relative: relative, StartFrom: from},
		}
	}
	epoch := time.Unix(0, 0).UTC()
	for _, tt := range []struct {
		name      string
		imp       *latency.Imported
		cmdStart  time.Time
		wantStart time.Time // of the request
		wantFrom  string
	}{
		{"stdin", imported(epoch, true, ""), cmd, cmd.Add(3 * time.Second), latency.StartCommand},
		{"mtime 250ms after", imported(cmd.Add(250*time.Millisecond), false, latency.StartMtime), cmd, cmd.Add(3250 * time.Millisecond),
			latency.StartMtime + ", 250ms after the wrapped command's start (recorded by watch)"},
		{"mtime 2s after", imported(cmd.Add(2*time.Second), false, latency.StartMtime), cmd, cmd.Add(5 * time.Second),
			latency.StartMtime + ", 2s after the wrapped command's start (recorded by watch)"},
		{"mtime an hour after (copied)", imported(cmd.Add(time.Hour), false, latency.StartMtime), cmd, cmd.Add(3 * time.Second), latency.StartCommand},
		{"mtime before the command", imported(cmd.Add(-time.Second), false, latency.StartMtime), cmd, cmd.Add(3 * time.Second), latency.StartCommand},
		{"no command start", imported(cmd.Add(time.Hour), false, latency.StartMtime), time.Time{}, cmd.Add(time.Hour + 3*time.Second), latency.StartMtime},
		{"--latency-start", imported(cmd.Add(time.Hour), false, latency.StartOption), cmd, cmd.Add(time.Hour + 3*time.Second), latency.StartOption},
	} {
		t.Run(tt.name, func(t *testing.T) {
			AnchorAtCommand(tt.imp, tt.cmdStart)
			r := tt.imp.Report
			if got := tt.imp.Requests.At(0).Start; !got.Equal(tt.wantStart) || r.StartFrom != tt.wantFrom || r.Relative && !tt.cmdStart.IsZero() {
				t.Errorf("request at %v, from %q, relative %v; want %v, %q", got, r.StartFrom, r.Relative, tt.wantStart, tt.wantFrom)
			}
			if want := tt.wantStart.Add(-3 * time.Second); !r.StartAt.Equal(want) {
				t.Errorf("StartAt %v, want %v", r.StartAt, want)
			}
		})
	}
}
