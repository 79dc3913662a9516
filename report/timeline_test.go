package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/record"
)

// rowTimes are the TIME cells of a rendered timeline, with the date when
// a row has one ("Mar 16 00:00:05").
func rowTimes(out string) []string {
	var times []string
	for _, l := range strings.Split(out, "\n") {
		before, _, ok := strings.Cut(l, "│")
		if f := strings.Fields(before); ok && len(f) > 0 && f[0] != "TIME" {
			times = append(times, strings.Join(f, " "))
		}
	}
	return times
}

// TestEpisodeOneTime: the timeline row, the STALL ONSETS line and the
// JSON give an episode the same time. The episode below spans 12:33–12:35
// in two intervals: its row, like watch's live row where it began, is
// 12:34 (the end of its first interval), and so is everything else.
func TestEpisodeOneTime(t *testing.T) {
	r := reference()
	r.Interval = 30 * time.Second // seconds in the layout: 12:34:00
	r.Episodes[1].Onset = &record.StallOnset{Time: at("12:33").Add(41*time.Second + 250*time.Millisecond),
		Scope: "host", Resource: "memory", Kind: "some", Stall: 100 * time.Millisecond, Window: time.Second, Mode: "trigger"}

	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if times := rowTimes(out); len(times) < 2 || times[1] != "12:34:00" {
		t.Errorf("timeline rows %q: want the second at 12:34:00", times)
	}
	want := "  - episode at 12:34:00: some stall 100ms within 1s crossed at 12:33:41.250 (host, trigger)\n"
	if !strings.Contains(out, "STALL ONSETS\n\n"+want) {
		t.Errorf("STALL ONSETS does not say %q:\n%s", want, out)
	}

	b.Reset()
	if err := Render(&b, r, format.JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Episodes []struct {
			Time  time.Time `json:"time"`
			Start time.Time `json:"start"`
		} `json:"episodes"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Episodes) < 2 || !j.Episodes[1].Time.Equal(at("12:34")) || !j.Episodes[1].Start.Equal(at("12:33")) {
		t.Errorf("JSON episode 1 = %+v, want time 12:34, start 12:33", j.Episodes)
	}
}

// TestTimelineAcrossMidnight: a recording from 23:50 to 00:20 gives its
// end date in the header and a date on the first row and on the first
// row of the new day; the stall onset after midnight carries it too.
func TestTimelineAcrossMidnight(t *testing.T) {
	day1 := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	hms := func(d time.Duration) time.Time { return day1.Add(d) }
	ep := func(i int, start time.Duration) correlate.Episode {
		return correlate.Episode{Index: i, Start: hms(start), End: hms(start + 20*time.Second), Intervals: 2,
			Signals: []correlate.SignalPeak{{Signal: correlate.PSISome, Peak: 0.2, Baseline: 0.01}}}
	}
	r := correlate.Result{Host: "db1", Start: hms(23*time.Hour + 50*time.Minute), End: hms(24*time.Hour + 20*time.Minute),
		Interval: 10 * time.Second, Intervals: 180, Location: time.UTC, Thresholds: correlate.DefaultThresholds(),
		Require: []correlate.Signal{correlate.PSISome},
		Episodes: []correlate.Episode{
			ep(0, 23*time.Hour+55*time.Minute),
			ep(1, 23*time.Hour+58*time.Minute),
			ep(2, 23*time.Hour+59*time.Minute+55*time.Second), // its row is 00:00:05 on the 16th
			ep(3, 24*time.Hour+10*time.Minute),
		},
	}
	r.Episodes[3].Onset = &record.StallOnset{Time: hms(24*time.Hour + 10*time.Minute + 3*time.Second),
		Scope: "host", Resource: "memory", Kind: "full", Stall: 100 * time.Millisecond, Window: time.Second, Mode: "poll"}

	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if want := "Recording: db1, 2026-03-15 23:50:00 – 2026-03-16 00:20:00 UTC"; !strings.HasPrefix(out, want) {
		t.Errorf("header does not start %q:\n%s", want, out)
	}
	want := []string{"Mar 15 23:55:10", "23:58:10", "Mar 16 00:00:05", "00:10:10"}
	if diff := cmp.Diff(want, rowTimes(out)); diff != "" {
		t.Errorf("row times (-want +got):\n%s\n%s", diff, out)
	}
	if w := "episode at Mar 16 00:10:10: full stall 100ms within 1s crossed at Mar 16 00:10:03.000 (host, poll)"; !strings.Contains(out, w) {
		t.Errorf("STALL ONSETS does not say %q:\n%s", w, out)
	}
}

// In a --cgroup analysis a host onset is labelled as the host's: the
// episodes are the group's stall, the onset perhaps another tenant's.
func TestHostOnsetInCgroupAnalysis(t *testing.T) {
	r := reference()
	r.Interval = 30 * time.Second
	r.PSIScope = correlate.PSICgroup
	r.Episodes[1].Onset = &record.StallOnset{Time: at("12:33").Add(41 * time.Second),
		Scope: "host", Resource: "memory", Kind: "some", Stall: 100 * time.Millisecond, Window: time.Second, Mode: "poll"}
	var b bytes.Buffer
	if err := Render(&b, r, format.Table, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "episode at 12:34:00: some stall 100ms within 1s crossed at 12:33:41.000 (host-wide, not the analysed group's, poll)"
	if out := b.String(); !strings.Contains(out, want) {
		t.Errorf("STALL ONSETS does not say %q:\n%s", want, out)
	}
}
