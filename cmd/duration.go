package cmd

import (
	"errors"
	"time"

	"github.com/memdiag/memdiag/units"
	"github.com/spf13/pflag"
)

// errDuration is the reason a duration flag's value is rejected; pflag
// prefixes it with the value and the flag's name.
var errDuration = units.ErrDuration

// parseDuration is units.ParseDuration (Go's units with days and weeks in
// front: "2d", "1w", "1d12h"), with errors worded for a flag.
func parseDuration(s string) (time.Duration, error) {
	d, err := units.ParseDuration(s)
	switch {
	case errors.Is(err, units.ErrDuration):
		return 0, errDuration
	case err != nil:
		return 0, errors.New("too long")
	}
	return d, nil
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
