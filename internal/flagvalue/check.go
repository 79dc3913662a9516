package flagvalue

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/format"
)

// Explain turns pflag's errors into memdiag's one wording: a bad value
// is `--flag "value": what was wanted`. cmd makes every flag error a
// usage error (exit 2).
func Explain(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	fl := ive.GetFlag()
	why := errors.Unwrap(ive)
	switch fl.Value.Type() {
	case "duration":
		why = errors.New("want a duration such as 500ms, 10s, 5m or 2h")
		if _, long := fl.Value.(Duration); long {
			why = errors.Unwrap(ive) // ParseDuration's own words list days and weeks
		}
	case "int", "uint", "int64":
		why = errors.New("want a whole number")
	case "float64":
		why = errors.New("want a number")
	case "bool":
		why = errors.New("want true or false")
	case "format":
		if v, ok := fl.Value.(*format.Value); ok {
			why = errors.New("unknown format; want one of " + format.List(v.Allowed))
		}
	}
	return fmt.Errorf("--%s %q: %w", fl.Name, ive.GetValue(), why)
}

// minDurationKey is the flag annotation that holds a duration flag's
// smallest accepted value (see MinDuration); without it the smallest is 0.
const minDurationKey = "memdiag_min_duration"

// MinDuration makes CheckDurations reject a value of flag name below min
// with the same message as a negative one, so a user who corrects
// "-1s" is not then told that 0 is too short.
func MinDuration(fs *pflag.FlagSet, name string, min time.Duration) {
	if err := fs.SetAnnotation(name, minDurationKey, []string{min.String()}); err != nil {
		panic(err) // a programming error: the flag was not defined
	}
}

// CheckDurations rejects a negative value in any duration flag of fs that
// was given (no memdiag duration — an interval, a gap, a lag, a window —
// can be negative), and a value below a flag's MinDuration.
func CheckDurations(fs *pflag.FlagSet) error {
	var bad error
	fs.Visit(func(fl *pflag.Flag) {
		if bad != nil || fl.Value.Type() != "duration" {
			return
		}
		d, err := time.ParseDuration(fl.Value.String())
		if err != nil {
			if dv, ok := fl.Value.(Duration); ok {
				d = *dv.D
			} else {
				return
			}
		}
		var min time.Duration
		if a := fl.Annotations[minDurationKey]; len(a) == 1 {
			min, _ = time.ParseDuration(a[0])
		}
		switch {
		case min > 0 && d < min:
			bad = fmt.Errorf("--%s %q: want a duration of at least %s", fl.Name, fl.Value.String(), min)
		case d < 0:
			bad = fmt.Errorf("--%s %q: want a duration of 0 or more", fl.Name, fl.Value.String())
		}
	})
	return bad
}

// GivenModeWarning is ModeWarning of fs's --mode when it was given, ""
// otherwise.
func GivenModeWarning(fs *pflag.FlagSet) string {
	fl := fs.Lookup("mode")
	if fl == nil || !fl.Changed {
		return ""
	}
	if v, ok := fl.Value.(Mode); ok && v.M != nil {
		return ModeWarning(*v.M)
	}
	return ""
}
