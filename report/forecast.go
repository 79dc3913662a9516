package report

import (
	"fmt"
	"github.com/memdiag/memdiag/exposition"
	"math"
	"strconv"
	"time"

	"github.com/mattn/go-runewidth"
)

// Forecast is the live view's forecast line (exposition.Exporter.Next):
// the periodic job whose recent firings stalled memory, and when it
// fires next.
type Forecast struct {
	Job     string        // its periodic_job label
	In      time.Duration // until its next planned firing
	Stalled int           // of its last Of firings, those followed by an episode
	Of      int
	// Service: the episodes are a service's (a victim or a cgroup was
	// recorded), not the host's.
	Service bool
	// Stat and Factor: the highest latency statistic (p99 …) in the
	// episodes that followed, over its baseline; Factor 0 when no latency
	// was recorded.
	Stat   string
	Factor float64
}

// maxForecastWidth is the widest the forecast line is made.
const maxForecastWidth = 80

// ForecastLine formats f on one line of at most width columns (80 when
// width is 0 or more than 80): "next: man-db.timer in 1m40s — 3 of its last
// 3 firings stalled the host (p99 ×8)"; when that is too wide,
// "3/3 firings stalled", then without the latency, then with the middle
// of the job's name cut.
func ForecastLine(f Forecast, width int) string {
	if width <= 0 || width > maxForecastWidth {
		width = maxForecastWidth
	}
	whom := "the host"
	if f.Service {
		whom = "the service"
	}
	lat := ""
	if f.Factor > 0 && f.Stat != "" {
		lat = fmt.Sprintf(" (%s ×%s)", f.Stat, factorText(f.Factor))
	}
	when := " in " + untilText(f.In)
	if f.In <= 0 {
		when = " now"
	}
	head := "next: " + f.Job + when + " — "
	long := fmt.Sprintf("%d of its last %d firings stalled %s", f.Stalled, f.Of, whom)
	short := fmt.Sprintf("%d/%d firings stalled %s", f.Stalled, f.Of, whom)
	for _, s := range []string{head + long + lat, head + short + lat, head + long, head + short} {
		if runewidth.StringWidth(s) <= width {
			return s
		}
	}
	// The middle of the job's name goes: its end (.timer) says what it is.
	tail := when + " — " + short
	room := max(width-runewidth.StringWidth("next: "+tail), 5)
	job := []rune(f.Job)
	if len(job) <= room {
		return head + short // wide characters: as near as it gets
	}
	keep := room - 1
	return "next: " + string(job[:keep-keep/2]) + "…" + string(job[len(job)-keep/2:]) + tail
}

// untilText is a countdown: "40s", "1m40s", "2h05m", "3d4h".
func untilText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// factorText is a latency rise: "30", "8", "2.5".
func factorText(x float64) string {
	if x >= 10 {
		x = math.Round(x)
	} else {
		x = math.Round(x*10) / 10
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// ForecastOf is the live view's forecast line (LiveRows.Forecast) from
// the exporter's last analysis (docs/fleet.md, Forecast): the next
// planned firing of a job most of whose firings were followed by an
// episode.
func ForecastOf(exp *exposition.Exporter) func(time.Time) (Forecast, bool) {
	return func(at time.Time) (Forecast, bool) {
		f, next, ok := exp.Next(at)
		if !ok {
			return Forecast{}, false
		}
		return Forecast{Job: f.Label, In: next.Sub(at), Stalled: f.Stalled, Of: f.Firings,
			Service: f.Service, Stat: f.Stat, Factor: f.Latency}, true
	}
}
