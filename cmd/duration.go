package cmd

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// errDuration is the reason a duration flag's value is rejected; pflag
// prefixes it with the value and the flag's name.
var errDuration = errors.New("want a duration such as 90s, 30m, 2h, 2d or 1w")

// daysWeeks splits "1w2d3h" into the weeks, the days and Go's part.
var daysWeeks = regexp.MustCompile(`^(?:([0-9]+(?:\.[0-9]*)?)w)?(?:([0-9]+(?:\.[0-9]*)?)d)?(.*)$`)

// parseDuration parses a duration as Go writes it (time.ParseDuration:
// "500ms", "90s", "1h30m") with days and weeks in front, which Go lacks
// and people write for long windows: "d" is 24 h and "w" is 7 d, as in
// systemd.time(7) ("2d", "1w", "1.5d", "1d12h"). Days are 24 h of
// elapsed time, not calendar days.
func parseDuration(s string) (time.Duration, error) {
	m := daysWeeks.FindStringSubmatch(s)
	if m == nil || m[1] == "" && m[2] == "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errDuration
		}
		return d, nil
	}
	var total float64
	for i, unit := range []time.Duration{7 * 24 * time.Hour, 24 * time.Hour} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, errDuration
		}
		total += n * float64(unit)
	}
	if m[3] != "" {
		d, err := time.ParseDuration(m[3])
		if err != nil || d < 0 {
			return 0, errDuration
		}
		total += float64(d)
	}
	if total >= math.MaxInt64 {
		return 0, errors.New("too long")
	}
	return time.Duration(total), nil
}

// durationValue is a pflag.Value for a duration flag that also takes days
// and weeks (see parseDuration).
type durationValue struct{ d *time.Duration }

// String is the value as help shows it; "0" for none, which pflag treats
// as "no default" and leaves out, as it does for a zero time.Duration.
func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return "0"
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }

// longDurationVar defines a duration flag that accepts days and weeks
// ("2d", "1w") besides Go's units, for the flags where people give long
// spans (--duration of a recording, --to of a window).
func longDurationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p}, name, usage)
}
