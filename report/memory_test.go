package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/memstate"
)

// TestMemorySections: an OOM kill is a timeline row stamped with the
// sample that counted it (12:00:30, as in the OOM KILLS list), and steady
// growth is listed with its slope and the leak-or-retention note.
func TestMemorySections(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r := correlate.Result{Host: "h", Start: t0, End: t0.Add(time.Minute), Interval: time.Second, Intervals: 60, Location: time.UTC,
		OOMKills: []correlate.OOMKill{{Time: t0.Add(30 * time.Second), Count: 1, Exited: []string{"victim 3"}}},
		Growth:   []memstate.ProcGrowth{{PID: 9, Comm: "leaky", AnonSlope: 360, AnonR2: 0.99, Observed: time.Minute, AnonFirstBytes: 100 << 20, AnonLastBytes: 106 << 20, Growing: true}},
	}
	var b bytes.Buffer
	if err := Render(&b, r, Table, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{" 12:00:30 │", "1 OOM kill; exited then: victim 3", "12:00:30: 1 OOM kill; exited then: victim 3", "MEMORY GROWTH", "leaky (pid 9): anonymous memory grew 360 MiB/h (R² 0.99) over 1m", memstate.LeakOrRetention} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
