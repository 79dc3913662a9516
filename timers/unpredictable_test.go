package timers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/format"
)

// TestRenderUnpredictable (issue 30.7): apt-daily.timer (Debian apt 2.6.2:
// OnCalendar=*-*-* 6,18:00, RandomizedDelaySec=12h) may start up to 12 h
// after each planned time, as long as its period: its NEXT is marked, a
// legend says why, and JSON says so. apt-daily-upgrade.timer's 60 min on
// a day is not marked.
func TestRenderUnpredictable(t *testing.T) {
	jobs, err := Inventory(fixture(t, "debian"), InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var shown []Job
	for _, j := range jobs {
		if j.Name == "apt-daily.timer" || j.Name == "apt-daily-upgrade.timer" {
			shown = append(shown, j)
		}
	}
	o := RenderOptions{Base: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), Next: 2, Loc: time.UTC}
	var b strings.Builder
	if err := RenderJobs(&b, shown, format.Table, o); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"2026-12-05~18:00", "2026-12-06~06:00", "\n~ "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Count(out, "~") != 3 {
		t.Errorf("want only apt-daily.timer's two times marked, and the legend:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "~") && len([]rune(l)) > 80 {
			t.Errorf("legend %q is %d columns, want at most 80", l, len([]rune(l)))
		}
	}
	b.Reset()
	if err := RenderJobs(&b, shown, format.JSON, o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs []struct {
			Name          string  `json:"name"`
			DelayS        float64 `json:"randomized_delay_s"`
			Unpredictable bool    `json:"unpredictable"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	for _, j := range doc.Jobs {
		want := map[string]float64{"apt-daily.timer": 43200, "apt-daily-upgrade.timer": 3600}[j.Name]
		if j.DelayS != want || j.Unpredictable != (j.Name == "apt-daily.timer") {
			t.Errorf("%s: randomized_delay_s %v unpredictable %v; want %v, %v", j.Name, j.DelayS, j.Unpredictable, want, j.Name == "apt-daily.timer")
		}
	}
}

func TestUnpredictable(t *testing.T) {
	for _, tc := range []struct {
		delay, period time.Duration
		want          bool
	}{
		{12 * time.Hour, 12 * time.Hour, true},
		{6 * time.Hour, 12 * time.Hour, true},
		{time.Hour, 24 * time.Hour, false},
		{0, time.Hour, false},
		{time.Hour, 0, false}, // irregular, no period known
	} {
		if got := Unpredictable(tc.delay, tc.period); got != tc.want {
			t.Errorf("Unpredictable(%s, %s) = %v, want %v", tc.delay, tc.period, got, tc.want)
		}
	}
}
