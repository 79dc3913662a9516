package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
)

func TestRecordFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ args, want string }{
		{"--segment 500ms", "--segment 500ms is too short"},
		{"--segment 1s --interval 1s", "--segment 1s is too short (at least 1s and two intervals)"},
		{"--max-age 30s --segment 1m", "--max-age 30s is shorter than --segment 1m0s"},
		{"--max-size 1XB", "--max-size"},
		{"--events maybe", `--events "maybe": want auto, on or off`},
		{"extra", "takes no arguments"},
	} {
		code, _, errOut := runMemdiag(t, "/", append([]string{"record", "--store", dir}, strings.Fields(c.args)...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("record %s: exit %d, stderr %q; want exit %d with %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused command line wrote into the store: %v", ents)
	}
}

// TestRecordFixtureRoot runs the recorder for 2.5 s with 1 s segments
// against a fixture root: the segments switch on whole seconds, each is
// a complete recording, and read together they are one run.
func TestRecordFixtureRoot(t *testing.T) {
	t.Parallel()
	root := fixtures.Root(t, "linux-6.18")
	dir := filepath.Join(t.TempDir(), "store")
	code, _, errOut := runMemdiag(t, root, "record", "--store", dir, "--segment", "1s", "--interval", "250ms",
		"--duration", "2500ms", "--events", "off", "--stall-threshold", "0", "--no-timers")
	if code != 0 {
		t.Fatalf("record: exit %d\n%s", code, errOut)
	}
	segs, err := store.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	// 11 samples from a start within a second: 3 or 4 segments
	if len(segs) < 3 || len(segs) > 4 {
		t.Fatalf("%d segments in 2.5 s of 1 s segments", len(segs))
	}
	if n := strings.Count(errOut, "memdiag: record: time: writing "); n != len(segs)-1 {
		t.Errorf("%d switch lines for %d segments:\n%s", n, len(segs), errOut)
	}
	if !strings.Contains(errOut, "memdiag: record: start: writing "+filepath.Base(segs[0].Path)) {
		t.Errorf("no state line at start:\n%s", errOut)
	}
	// The count agrees with its noun: "1 segment", "2 segments".
	if !strings.Contains(errOut, dir+": 1 segment, ") || !strings.Contains(errOut, dir+": 2 segments, ") || strings.Contains(errOut, " 1 segments") {
		t.Errorf("segment counts not worded 1 segment / 2 segments:\n%s", errOut)
	}
	total := 0
	var prevLast time.Time
	for i, s := range segs {
		r, err := record.ReadFile(s.Path)
		if err != nil {
			t.Fatalf("%s alone: %v", s.Path, err)
		}
		if r.End == nil {
			t.Fatalf("%s: no end line", s.Path)
		}
		want := "segment switch: time"
		if i == len(segs)-1 {
			want = "duration"
		}
		if r.End.Reason != want {
			t.Errorf("%s: end %q, want %q", s.Path, r.End.Reason, want)
		}
		// the switch sample ends one segment and starts the next
		if i > 0 && !r.Samples[0].Time.Equal(prevLast) {
			t.Errorf("%s starts at %s, the segment before ends at %s", s.Path, r.Samples[0].Time, prevLast)
		}
		if !r.Header.Start.Equal(r.Samples[0].Time) || !s.Start.Equal(r.Samples[0].Time.Truncate(time.Second)) {
			t.Errorf("%s: header start %s, first sample %s", s.Path, r.Header.Start, r.Samples[0].Time)
		}
		prevLast = r.Samples[len(r.Samples)-1].Time
		total += len(r.Samples)
	}
	j, err := store.Join(segs, store.Window{})
	if err != nil {
		t.Fatal(err)
	}
	n, missed := 0, 0
	if _, err := j.Each(context.Background(), func(s *record.Sample) {
		n++
		if s.Gap != nil {
			missed += s.Gap.Missed
		}
	}); err != nil {
		t.Fatal(err)
	}
	// --duration 2500ms at 250ms: 11 slots, each a sample or, on a
	// starved host, counted missed by the next sample's gap; each switch
	// sample is in two segments.
	if n+missed != 11 || total != n+len(segs)-1 {
		t.Errorf("joined %d samples and %d missed (segments hold %d), want 11 slots (and %d)", n, missed, total, n+len(segs)-1)
	}

	// analyze over a window of the store: from between the 2nd and 3rd
	// samples (the 2nd leads: it starts the first interval) to between
	// the last but one and the one before it.
	var times []time.Time
	if _, err := j.Each(context.Background(), func(s *record.Sample) { times = append(times, s.Time) }); err != nil {
		t.Fatal(err)
	}
	if len(times) < 5 {
		t.Fatalf("%d samples joined: too few to cut a window from", len(times))
	}
	a, b := 1, len(times)-3
	mid := func(a, b time.Time) string { return a.Add(b.Sub(a) / 2).Format(time.RFC3339Nano) }
	from, to := mid(times[a], times[a+1]), mid(times[b], times[b+1])
	code, out, errOut := runMemdiag(t, root, "analyze", dir, "--from", from, "--to", to, "--format", "json")
	if code != 0 {
		t.Fatalf("analyze --from --to: exit %d\n%s", code, errOut)
	}
	var res struct {
		Start, End time.Time
		Intervals  int
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	// samples a..b: b-a intervals
	if !res.Start.Equal(times[a]) || !res.End.Equal(times[b]) || res.Intervals != b-a {
		t.Errorf("analyze window: %s .. %s, %d intervals; want %s .. %s, %d", res.Start, res.End, res.Intervals, times[a], times[b], b-a)
	}
	// gate judges the same window
	code, out, errOut = runMemdiag(t, root, "gate", "-t", "oom_kills==0", "--recording", dir, "--from", from, "--to", to)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d samples", b-a+1)) {
		t.Errorf("gate --recording DIR --from --to: exit %d\n%s%s", code, out, errOut)
	}
	// a window the store does not hold
	code, _, errOut = runMemdiag(t, root, "analyze", dir, "--from", "2001-01-01", "--to", "2001-01-02")
	if code != exitError || !strings.Contains(errOut, "no recording overlaps 2001-01-01T00:00:00") {
		t.Errorf("window outside the store: exit %d, %s", code, errOut)
	}
	// stdin cannot be windowed; --from needs --recording in gate
	if code, _, errOut = runMemdiag(t, root, "analyze", "-", "--from", "-1h"); code != exitUsage || !strings.Contains(errOut, "cannot be joined") {
		t.Errorf("analyze - --from: exit %d, %s", code, errOut)
	}
	if code, _, errOut = runMemdiag(t, root, "gate", "-t", "oom_kills==0", "--duration", "1s", "--from", "-1h"); code != exitUsage || !strings.Contains(errOut, "--from and --to apply to --recording only") {
		t.Errorf("gate --duration --from: exit %d, %s", code, errOut)
	}
}

func TestRecordStoreLocked(t *testing.T) {
	dir := t.TempDir()
	l, err := store.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code, _, errOut := runMemdiag(t, fixtures.Root(t, "linux-6.18"), "record", "--store", dir, "--duration", "1s")
	want := fmt.Sprintf("another memdiag record holds this store (PID %d)", os.Getpid())
	if code != exitError || !strings.Contains(errOut, want) {
		t.Fatalf("second recorder: exit %d, stderr %q; want exit 1 with %q", code, errOut, want)
	}
}
