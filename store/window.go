package store

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memdiag/memdiag/units"
)

// Window is the span of time a reader keeps: samples from From to To,
// both included. A zero bound is open.
type Window struct {
	From, To time.Time
}

// IsZero reports whether w keeps everything.
func (w Window) IsZero() bool { return w.From.IsZero() && w.To.IsZero() }

// Overlaps reports whether [start, last] meets w.
func (w Window) Overlaps(start, last time.Time) bool {
	if !w.From.IsZero() && last.Before(w.From) {
		return false
	}
	if !w.To.IsZero() && start.After(w.To) {
		return false
	}
	return true
}

// errWhen is wrapped by every error of ParseWindow.
var errWhen = errors.New("want a time such as 2026-12-01T06:00:00Z, '2026-12-01 06:00', 06:00, 'yesterday 06:00', -6h or now")

// ParseWindow parses the --from and --to flags of analyze, compare and
// gate --recording (docs/service.md, "Time windows"):
//
//	WHEN  = now | RFC 3339 | DATE | DATE CLOCK | CLOCK | DAY | DAY CLOCK | -DURATION
//	DATE  = YYYY-MM-DD        CLOCK = HH:MM or HH:MM:SS        DAY = today | yesterday
//	--from WHEN               --from WHEN..END (sets --to too; then --to must be empty)
//	--to   WHEN | +DURATION | DURATION (after --from)
//	END   = WHEN | CLOCK (on --from's day, the next day if not after it) | +DURATION
//
// A DURATION takes Go's units with days and weeks ("90s", "6h", "2d",
// "1d12h"); -DURATION is that long before now. Times without a zone are
// in loc; a date or day without a clock is its midnight. Either flag may
// be empty: the window is then open on that side.
func ParseWindow(from, to string, now time.Time, loc *time.Location) (Window, error) {
	var w Window
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	if left, right, ok := strings.Cut(from, ".."); ok {
		if to != "" {
			return w, fmt.Errorf("--from %q already gives the end (..); leave --to out", from)
		}
		from, to = strings.TrimSpace(left), strings.TrimSpace(right)
		if from == "" || to == "" {
			return w, fmt.Errorf("--from %q: want FROM..TO, both sides given", from+".."+to)
		}
		var err error
		if w.From, err = parseWhen(from, now, loc); err != nil {
			return w, fmt.Errorf("--from: %w", err)
		}
		if w.To, err = parseEnd(to, w.From, now, loc, true); err != nil {
			return w, fmt.Errorf("--from ..%s: %w", to, err)
		}
	} else {
		if from != "" {
			var err error
			if w.From, err = parseWhen(from, now, loc); err != nil {
				return w, fmt.Errorf("--from: %w", err)
			}
		}
		if to != "" {
			var err error
			if w.To, err = parseEnd(to, w.From, now, loc, false); err != nil {
				return w, fmt.Errorf("--to: %w", err)
			}
		}
	}
	if !w.From.IsZero() && !w.To.IsZero() && !w.To.After(w.From) {
		return w, fmt.Errorf("--to %s is not after --from %s", w.To.Format(time.RFC3339), w.From.Format(time.RFC3339))
	}
	return w, nil
}

// parseEnd parses the end of a window: a WHEN, a duration after from
// ("+2h"; "2h" as well in --to, as `memdiag timers --to` takes it), or,
// in a range, a bare clock on from's day.
func parseEnd(s string, from, now time.Time, loc *time.Location, inRange bool) (time.Time, error) {
	rel, plus := strings.CutPrefix(s, "+")
	if plus || (!inRange && len(s) > 0 && s[0] >= '0' && s[0] <= '9' && !strings.Contains(s, ":") && !strings.Contains(s, "-")) {
		if from.IsZero() {
			return time.Time{}, fmt.Errorf("%q is a duration after --from, and --from is not given", s)
		}
		d, err := units.ParseDuration(rel)
		if err != nil || d <= 0 {
			return time.Time{}, fmt.Errorf("%q: want a positive duration after --from such as +30m or +2h", s)
		}
		return from.Add(d), nil
	}
	if inRange {
		if c, ok := parseClock(s); ok {
			y, m, d := from.In(loc).Date()
			t := time.Date(y, m, d, c.h, c.m, c.s, 0, loc)
			if !t.After(from) {
				t = time.Date(y, m, d+1, c.h, c.m, c.s, 0, loc)
			}
			return t, nil
		}
	}
	return parseWhen(s, now, loc)
}

type clock struct{ h, m, s int }

// parseClock parses HH:MM or HH:MM:SS (two digits each).
func parseClock(s string) (clock, bool) {
	for _, layout := range []string{"15:04:05", "15:04"} {
		if len(s) != len(layout) {
			continue
		}
		if t, err := time.Parse(layout, s); err == nil {
			return clock{t.Hour(), t.Minute(), t.Second()}, true
		}
	}
	return clock{}, false
}

// parseWhen parses one point in time of the grammar of ParseWindow.
func parseWhen(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty time: %w", errWhen)
	}
	if s == "now" {
		return now, nil
	}
	if rel, ok := strings.CutPrefix(s, "-"); ok {
		d, err := units.ParseDuration(rel)
		if err != nil || d <= 0 {
			return time.Time{}, fmt.Errorf("%q: %w", s, errWhen)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	day, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	var date time.Time
	switch day {
	case "today", "yesterday":
		y, m, d := now.In(loc).Date()
		if day == "yesterday" {
			d--
		}
		date = time.Date(y, m, d, 0, 0, 0, 0, loc)
	default:
		if c, ok := parseClock(s); ok {
			// a clock alone: today
			y, m, d := now.In(loc).Date()
			return time.Date(y, m, d, c.h, c.m, c.s, 0, loc), nil
		}
		if d, clk, ok := strings.Cut(s, "T"); ok && rest == "" {
			day, rest = d, clk
		}
		t, err := time.ParseInLocation("2006-01-02", day, loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: %w", s, errWhen)
		}
		date = t
	}
	if rest == "" {
		return date, nil
	}
	c, ok := parseClock(rest)
	if !ok {
		return time.Time{}, fmt.Errorf("%q: %w", s, errWhen)
	}
	y, m, d := date.Date()
	return time.Date(y, m, d, c.h, c.m, c.s, 0, loc), nil
}
