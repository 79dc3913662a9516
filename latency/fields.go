package latency

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// zoned are the timestamp layouts that carry a zone, tried in order.
// time.Parse accepts a fractional second after the seconds in each.
var zoned = []string{
	time.RFC3339Nano,                 // 2026-11-29T21:42:53.033048099Z, …+02:00
	"2006-01-02 15:04:05Z07:00",      // space instead of T
	"2006-01-02T15:04:05Z0700",       // +0200
	"2006-01-02 15:04:05Z0700",       //
	"2006-01-02 15:04:05 -0700",      //
	"2006-01-02 15:04:05 -0700 MST",  // Go's time.Time.String
	"2006/01/02 15:04:05 -0700",      //
	"2006-01-02T15:04:05.000 -07:00", //
}

// zoneless are layouts without a zone, used only with ImportOptions.Location.
var zoneless = []string{
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006/01/02 15:04:05", // JMeter's documented timestamp_format example (yyyy/MM/dd HH:mm:ss.SSS)
}

var errNoZone = errors.New("timestamp has no time zone (set a location)")

// parseTime parses a timestamp: an epoch number or a date with a zone.
//
// Epoch numbers are told apart by the size of their integer part, so any
// date between 1973 and 2262 is read right: below 1e11 seconds, below 1e14
// milliseconds, below 1e17 microseconds, else nanoseconds. A fraction is
// allowed ("1700000000.25" s). Dates follow RFC 3339 (with "Z", "+02:00" or
// "+0200", "T" or a space); a date without a zone is read in loc, or is an
// error when loc is nil.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errors.New("empty timestamp")
	}
	if c := s[0]; c >= '0' && c <= '9' && !strings.ContainsAny(s, "-/:") {
		return parseEpoch(s)
	}
	for _, l := range zoned {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	for _, l := range zoneless {
		if _, err := time.Parse(l, s); err == nil {
			if loc == nil {
				return time.Time{}, errNoZone
			}
			return time.ParseInLocation(l, s, loc)
		}
	}
	return time.Time{}, fmt.Errorf("bad timestamp %q", s)
}

func parseEpoch(s string) (time.Time, error) {
	ip, fp, _ := strings.Cut(s, ".")
	if !isDigits(ip) || (fp != "" && !isDigits(fp)) {
		return time.Time{}, fmt.Errorf("bad epoch timestamp %q", s)
	}
	i, err := strconv.ParseInt(ip, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad epoch timestamp %q: %w", s, err)
	}
	var unit int64 // nanoseconds per unit
	switch {
	case i < 1e11:
		unit = 1e9
	case i < 1e14:
		unit = 1e6
	case i < 1e17:
		unit = 1e3
	default:
		unit = 1
	}
	if i > math.MaxInt64/unit {
		return time.Time{}, fmt.Errorf("epoch timestamp %q out of range", s)
	}
	ns := i * unit
	if fp != "" {
		if len(fp) > 9 {
			fp = fp[:9]
		}
		f, _ := strconv.ParseInt(fp+strings.Repeat("0", 9-len(fp)), 10, 64) // fraction × 1e9
		ns += f * unit / 1e9
	}
	return time.Unix(0, ns).UTC(), nil
}

// parseLatency parses a latency with a unit suffix ("12.5ms", "800µs",
// "800us", "2s", Go duration syntax) or, when unit > 0, a bare number of
// that unit ("12.5" with unit time.Millisecond).
func parseLatency(s string, unit time.Duration) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty latency")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if unit <= 0 {
			return 0, fmt.Errorf("latency %q has no unit", s)
		}
		return scaled(f, unit)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad latency %q", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative latency %q", s)
	}
	return d, nil
}

// scaled converts a number of units to a Duration, rounding to the
// nanosecond.
func scaled(f float64, unit time.Duration) (time.Duration, error) {
	if math.IsNaN(f) || f < 0 || f*float64(unit) > math.MaxInt64 {
		return 0, fmt.Errorf("bad latency %v", f)
	}
	return time.Duration(math.Round(f * float64(unit))), nil
}

// parseFloatUnit parses a bare number of unit.
func parseFloatUnit(s string, unit time.Duration) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return scaled(f, unit)
}

// splitCSV splits one CSV record (RFC 4180 quoting) with separator sep.
func splitCSV(rec string, sep rune) ([]string, error) {
	if !strings.Contains(rec, `"`) {
		return strings.Split(rec, string(sep)), nil // no quoting: the common case, 10x faster
	}
	r := csv.NewReader(strings.NewReader(rec))
	r.Comma = sep
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	f, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	return f, nil
}

// need checks that a record has at least n fields.
func need(f []string, n int) error {
	if len(f) < n {
		return fmt.Errorf("%w: %d fields, want at least %d", ErrParse, len(f), n)
	}
	return nil
}

// bad wraps err as a parse error of field name.
func bad(name string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrParse, name, err)
}

// atoiField parses an integer field.
func atoiField(name, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, bad(name, fmt.Errorf("not an integer: %q", s))
	}
	return n, nil
}
