package session

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

// TestGateDuration: a live gate for a duration keeps Limit samples, the
// first one taken for the preflight, records them after the header and
// ends the recording with "duration". The fixture root is a real 6.18
// /proc (testdata/linux-6.18/SOURCE).
func TestGateDuration(t *testing.T) {
	var errOut bytes.Buffer
	g, err := StartGate(context.Background(), Options{
		Root: "../testdata/linux-6.18", Interval: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Stderr: &errOut,
	})
	if err != nil {
		t.Fatal(err)
	}
	first := g.First(context.Background())
	out := filepath.Join(t.TempDir(), "g.jsonl")
	if err := g.Record(context.Background(), out, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := g.Run(context.Background())
	if err != nil || res.Command != nil || res.StartErr != nil {
		t.Fatalf("Run: %+v, %v; want no command, no error", res, err)
	}
	g.Close()
	// Every slot of the grid is a sample or, on a host too busy to take
	// it in time, a missed sample the next one's gap counts (--duration
	// ends on the grid's last slot, not after a count of samples).
	want := Limit(300*time.Millisecond, 100*time.Millisecond)
	slots := func(ss []record.Sample) int {
		n := len(ss)
		for i := range ss {
			if ss[i].Gap != nil {
				n += ss[i].Gap.Missed
			}
		}
		return n
	}
	if slots(g.Samples) != want || !g.Samples[0].Time.Equal(first.Time) {
		t.Errorf("%d samples and missed, first at %v; want %d, the preflight's first", slots(g.Samples), g.Samples[0].Time, want)
	}
	rec, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if slots(rec.Samples) != want || rec.End == nil || rec.End.Reason != "duration" {
		t.Errorf("recording: %d samples and missed, end %+v; want %d and \"duration\"", slots(rec.Samples), rec.End, want)
	}
	if !strings.Contains(errOut.String(), "recording to "+out) {
		t.Errorf("stderr %q, want the recording's name", errOut.String())
	}
}
