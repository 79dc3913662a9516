package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/memdiag/memdiag/exposition"
	"github.com/memdiag/memdiag/record"
)

func TestForecastLine(t *testing.T) {
	f := Forecast{Job: "man-db.timer", In: 100 * time.Second, Stalled: 3, Of: 3, Stat: "p99", Factor: 8}
	for _, c := range []struct {
		f     Forecast
		width int
		want  string
	}{
		{f, 0, "next: man-db.timer in 1m40s — 3 of its last 3 firings stalled the host (p99 ×8)"},
		{Forecast{Job: "pmlogger_check.timer", In: 100 * time.Second, Stalled: 3, Of: 3, Service: true, Stat: "p99", Factor: 8}, 0,
			"next: pmlogger_check.timer in 1m40s — 3/3 firings stalled the service (p99 ×8)"},
		{Forecast{Job: "pmlogger_check.timer", In: 3*time.Hour + 5*time.Minute, Stalled: 6, Of: 10, Stat: "p99", Factor: 2.54}, 200,
			"next: pmlogger_check.timer in 3h05m — 6/10 firings stalled the host (p99 ×2.5)"},
		{Forecast{Job: "x.timer", In: 0, Stalled: 2, Of: 3, Stat: "p99", Factor: 30.4}, 200,
			"next: x.timer now — 2 of its last 3 firings stalled the host (p99 ×30)"},
		{Forecast{Job: "pmlogger_check.timer", In: 40 * time.Second, Stalled: 2, Of: 3}, 60,
			"next: pmlogger…k.timer in 40s — 2/3 firings stalled the host"},
		{Forecast{Job: "cron.d/sysstat: command -v debian-sa1 > /dev/null && debian-sa1 1 1", In: 26 * time.Hour, Stalled: 3, Of: 3, Service: true}, 0,
			"next: cron.d/sysstat: … debian-sa1 1 1 in 1d2h — 3/3 firings stalled the service"},
	} {
		got := ForecastLine(c.f, c.width)
		if got != c.want {
			t.Errorf("ForecastLine(%+v, %d) =\n%q, want\n%q", c.f, c.width, got, c.want)
		}
		w := c.width
		if w == 0 || w > 80 {
			w = 80
		}
		if runewidth.StringWidth(got) > w {
			t.Errorf("%q is %d columns, more than %d", got, runewidth.StringWidth(got), w)
		}
	}
}

// TestLiveRowsForecast: the line comes above the column header and when
// its job or firings change, not at every row.
func TestLiveRowsForecast(t *testing.T) {
	var out, errOut bytes.Buffer
	hdr := &record.Header{}
	l := NewLiveRows(&out, &errOut, hdr, true, LiveOptions{Width: 80})
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	next := t0.Add(3 * time.Minute)
	stalled := 2
	l.Forecast = func(at time.Time) (Forecast, bool) {
		return Forecast{Job: "apt-daily.timer", In: next.Sub(at), Stalled: stalled, Of: 3}, true
	}
	for i := range 5 {
		if i == 3 {
			stalled = 3
		}
		l.Row(&record.Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second)}, false)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var got []string
	for _, ln := range lines {
		if strings.HasPrefix(ln, "next: ") {
			got = append(got, ln)
		}
	}
	want := []string{
		"next: apt-daily.timer in 2m59s — 2 of its last 3 firings stalled the host",
		"next: apt-daily.timer in 2m57s — 3 of its last 3 firings stalled the host",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("forecast lines:\n%s\nwant\n%s\nall:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out.String())
	}
	if !strings.HasPrefix(lines[1], "TIME") {
		t.Errorf("the line is not above the header:\n%s", out.String())
	}
}

// TestForecastOfWithoutAnalysis: before the exporter has analysed
// anything there is no forecast line.
func TestForecastOfWithoutAnalysis(t *testing.T) {
	rec, err := record.ReadFile("../correlate/testdata/union.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	e := exposition.New(rec.Header, exposition.Options{AnalyzeEvery: -1})
	for i := range rec.Samples {
		e.Observe(&rec.Samples[i])
	}
	if f, ok := ForecastOf(e)(rec.Samples[len(rec.Samples)-1].Time); ok {
		t.Errorf("a forecast line without analysis: %+v", f)
	}
}
