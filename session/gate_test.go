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
		Root: "../testdata/linux-6.18", Interval: 10 * time.Millisecond, Duration: 30 * time.Millisecond, Stderr: &errOut,
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
	want := Limit(30*time.Millisecond, 10*time.Millisecond)
	if len(g.Samples) != want || !g.Samples[0].Time.Equal(first.Time) {
		t.Errorf("%d samples, first at %v; want %d, the preflight's first", len(g.Samples), g.Samples[0].Time, want)
	}
	rec, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != want || rec.End == nil || rec.End.Reason != "duration" {
		t.Errorf("recording: %d samples, end %+v; want %d and \"duration\"", len(rec.Samples), rec.End, want)
	}
	if !strings.Contains(errOut.String(), "recording to "+out) {
		t.Errorf("stderr %q, want the recording's name", errOut.String())
	}
}
