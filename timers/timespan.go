package timers

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrTimespan is wrapped by errors about malformed time spans.
var ErrTimespan = errors.New("invalid time span")

// timespanUnits are the units of systemd.time(7), "Parsing Time Spans".
// A month is 30.44 days and a year 365.25 days, as systemd defines them.
var timespanUnits = map[string]time.Duration{
	"usec": time.Microsecond, "us": time.Microsecond, "µs": time.Microsecond, "μs": time.Microsecond,
	"msec": time.Millisecond, "ms": time.Millisecond,
	"seconds": time.Second, "second": time.Second, "sec": time.Second, "s": time.Second,
	"minutes": time.Minute, "minute": time.Minute, "min": time.Minute, "m": time.Minute,
	"hours": time.Hour, "hour": time.Hour, "hr": time.Hour, "h": time.Hour,
	"days": 24 * time.Hour, "day": 24 * time.Hour, "d": 24 * time.Hour,
	"weeks": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "w": 7 * 24 * time.Hour,
	"months": 2629800 * time.Second, "month": 2629800 * time.Second, "M": 2629800 * time.Second,
	"years": 31557600 * time.Second, "year": 31557600 * time.Second, "y": 31557600 * time.Second,
}

// parseTimespan parses a systemd time span ("1min", "1h 30min", "5m30s",
// "300" = seconds, "infinity"); defUnit is the unit of a bare number.
// Source: systemd.time(7), "Parsing Time Spans".
func parseTimespan(s string, defUnit time.Duration) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrTimespan)
	}
	if s == "infinity" {
		return time.Duration(math.MaxInt64), nil
	}
	var total time.Duration
	rest := s
	for rest != "" {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%w: %q", ErrTimespan, s)
		}
		num, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q", ErrTimespan, s)
		}
		rest = strings.TrimLeft(rest[i:], " \t")
		j := 0
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9') && rest[j] != ' ' && rest[j] != '\t' && rest[j] != '.' {
			j++
		}
		u := defUnit
		if j > 0 {
			var ok bool
			u, ok = timespanUnits[rest[:j]]
			if !ok {
				return 0, fmt.Errorf("%w: unknown unit %q in %q", ErrTimespan, rest[:j], s)
			}
		}
		rest = rest[j:]
		// systemd refuses a span past the largest usec_t (ERANGE);
		// a float64 product that large would wrap a Duration negative.
		v := num * float64(u)
		if v >= math.MaxInt64 || float64(total)+v >= math.MaxInt64 {
			return 0, fmt.Errorf("%w: %q is too large", ErrTimespan, s)
		}
		total += time.Duration(v)
	}
	return total, nil
}

// FormatPeriod writes a duration the way the PERIOD column shows it:
// the largest units that divide it exactly, "30m", "1d", "1h30m", "1w".
func FormatPeriod(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	units := []struct {
		n string
		d time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}}
	var b strings.Builder
	for _, u := range units {
		if d >= u.d {
			fmt.Fprintf(&b, "%d%s", d/u.d, u.n)
			d %= u.d
		}
	}
	if d > 0 {
		fmt.Fprintf(&b, "%v", d)
	}
	return b.String()
}

// PeriodString is a job's period as the PERIOD column shows it
// (FormatPeriod), "irregular" without one.
func PeriodString(j Job) string {
	if j.PeriodSeconds == nil {
		return "irregular"
	}
	return FormatPeriod(time.Duration(*j.PeriodSeconds * float64(time.Second)))
}
