package exposition

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/correlate"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/timers"
)

// TestForecastFollowsFirings feeds a recording with a recurring culprit
// (correlate/testdata/SOURCE: union.jsonl.gz; pmlogger_check.timer at
// *:05/20 stalls the host each time, pmlogger_farm_check.timer at
// *:15/20 each time but 13:15) and checks, at three points of it, each
// job's stall ratio, firings and streak against the firings of its
// schedule worked out here and the episodes analyze finds in the
// recording so far.
func TestForecastFollowsFirings(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	start := rec.Samples[0].Time
	var now time.Time
	e := New(rec.Header, Options{Window: 24 * time.Hour, AnalyzeEvery: time.Minute, Now: func() time.Time { return now }})
	cuts := map[string]bool{"13:00:00": true, "13:30:00": true, "14:00:00": true}
	jobs := []struct {
		label  string
		minute int // first firing of the hour; every 20 minutes, AccuracySec 1 min
	}{{"pmlogger_check.timer", 5}, {"pmlogger_farm_check.timer", 15}, {"decoy.timer", 10}}
	checked := 0
	for i := range rec.Samples {
		s := &rec.Samples[i]
		e.Observe(s)
		e.an.wait()
		if !cuts[s.Time.Format("15:04:05")] {
			continue
		}
		checked++
		now = s.Time
		e.an.settle()
		sofar := *rec
		sofar.Samples = rec.Samples[:i+1]
		res := correlate.Analyze(&sofar, correlate.Options{Project: timers.Project})
		_, fams := scrape(t, e)
		for _, j := range jobs {
			// The job's windows: [planned − 30 s interval, planned + 1 min
			// accuracy + 1 min lag], judged once wholly seen.
			var stalled []bool
			for p := start.Truncate(time.Hour).Add(time.Duration(j.minute) * time.Minute); !p.After(now); p = p.Add(20 * time.Minute) {
				from, to := p.Add(-30*time.Second), p.Add(2*time.Minute)
				if p.Before(start) || to.After(now) {
					continue
				}
				hit := false
				for _, ep := range res.Episodes {
					hit = hit || (!ep.Start.Before(from) && !ep.Start.After(to))
				}
				stalled = append(stalled, hit)
			}
			if len(stalled) > RecentFirings {
				stalled = stalled[len(stalled)-RecentFirings:]
			}
			n, streak := 0, 0
			for k := len(stalled) - 1; k >= 0; k-- {
				if stalled[k] {
					n++
				}
			}
			for k := len(stalled) - 1; k >= 0 && stalled[k]; k-- {
				streak++
			}
			at := fmt.Sprintf("at %s, %s", now.Format("15:04"), j.label)
			l := "periodic_job=" + j.label
			if got, _ := value(fams, JobRecentFirings, l); got != float64(len(stalled)) {
				t.Errorf("%s: %s = %v, want %d", at, JobRecentFirings, got, len(stalled))
			}
			if got, _ := value(fams, JobStallRatio, l); got != float64(n)/float64(len(stalled)) {
				t.Errorf("%s: %s = %v, want %d/%d", at, JobStallRatio, got, n, len(stalled))
			}
			if got, _ := value(fams, JobStallStreak, l); got != float64(streak) {
				t.Errorf("%s: %s = %v, want %d", at, JobStallStreak, got, streak)
			}
			t.Logf("%s: %d of %d stalled, streak %d", at, n, len(stalled), streak)
		}
	}
	if checked != len(cuts) {
		t.Fatalf("checked %d points, want %d", checked, len(cuts))
	}
	// The recording's known answer, whatever the arithmetic above says:
	// every firing of pmlogger_check stalled the host, the decoy's none,
	// and the farm check's 13:15 did nothing (streak 2: 13:35, 13:55).
	_, fams := scrape(t, e)
	for _, c := range []struct {
		label         string
		ratio, streak float64
	}{{"pmlogger_check.timer", 1, 6}, {"pmlogger_farm_check.timer", 5.0 / 6, 2}, {"decoy.timer", 0, 0}} {
		r, _ := value(fams, JobStallRatio, "periodic_job="+c.label)
		s, _ := value(fams, JobStallStreak, "periodic_job="+c.label)
		if r != c.ratio || s != c.streak {
			t.Errorf("%s: ratio %v streak %v, want %v %v", c.label, r, s, c.ratio, c.streak)
		}
	}

	// The live view's line: the job whose firings stall, next at 14:05.
	f, next, ok := e.Next(now)
	if !ok || f.Label != "pmlogger_check.timer" || !next.Equal(now.Add(5*time.Minute)) || f.Stalled != 6 || f.Firings != 6 {
		t.Errorf("Next = %+v at %s (%v), want pmlogger_check.timer 6 of 6 at 14:05", f, next, ok)
	}
	if want := "p99"; f.Stat != want || f.Latency < 2 {
		t.Errorf("latency %s ×%.1f, want p99 and a rise", f.Stat, f.Latency)
	}
	if strings.Contains(f.Label, " ") {
		t.Errorf("label %q", f.Label)
	}
}

// TestNoForecastWithoutAnalysis: no forecast series, and no line, before
// a round ran or with the analysis off.
func TestNoForecastWithoutAnalysis(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	e := New(rec.Header, Options{AnalyzeEvery: -1})
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
	}
	_, fams := scrape(t, e)
	if _, ok := value(fams, JobStallRatio); ok {
		t.Errorf("%s without analysis", JobStallRatio)
	}
	if _, _, ok := e.Next(rec.Samples[len(rec.Samples)-1].Time); ok {
		t.Error("a forecast line without analysis")
	}
}
