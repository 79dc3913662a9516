// Package flagvalue holds the pflag.Value types of memdiag's own flags:
// --mode (an octal file permission), the long durations that take days
// and weeks (--duration, --segment, --max-age) and a repeatable path
// (gate --recording). cmd defines the flags; the parsing lives here, with
// the checks every command's flags get (CheckDurations, GivenModeWarning)
// and the one wording of a bad value (Explain).
package flagvalue

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/units"
)

// ErrMode is why a --mode value is refused; cmd's flag errors prefix it
// with the flag and the value.
var ErrMode = errors.New("want an octal file mode of at most 0777 that lets the owner read and write, such as 0600 or 0640")

// ParseMode parses a --mode value: octal permission bits ("0640", "640",
// "0o640"). The owner must keep read and write (memdiag writes the file,
// and analyze reads it back); setuid, setgid and sticky bits are refused.
func ParseMode(s string) (fs.FileMode, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	if digits == "" || strings.ContainsAny(digits, "+-_") {
		return 0, ErrMode
	}
	n, err := strconv.ParseUint(digits, 8, 32)
	if err != nil || n > 0o777 || n&0o600 != 0o600 {
		return 0, ErrMode
	}
	return fs.FileMode(n), nil
}

// Mode is the pflag.Value of --mode, stored in M.
type Mode struct{ M *fs.FileMode }

func (v Mode) String() string {
	if v.M == nil {
		return ""
	}
	return "0" + strconv.FormatUint(uint64(*v.M), 8)
}

// Set parses s with ParseMode.
func (v Mode) Set(s string) error {
	m, err := ParseMode(s)
	if err != nil {
		return err
	}
	*v.M = m
	return nil
}

// Type is the value's name in help.
func (v Mode) Type() string { return "mode" }

// ModeWarning is the warning for a --mode that the files it writes are
// not meant to have, "" for none: execute bits (reports and recordings
// are data, never programs) and write permission for other users (anyone
// on the host could change a report or a recording that CI or a person
// trusts).
func ModeWarning(m fs.FileMode) string {
	var what []string
	if m&0o111 != 0 {
		what = append(what, "executable")
	}
	if m&0o002 != 0 {
		what = append(what, "writable by every user")
	}
	if len(what) == 0 {
		return ""
	}
	return "--mode 0" + strconv.FormatUint(uint64(m.Perm()), 8) + " makes the files written " + strings.Join(what, " and ") +
		"; reports and recordings need neither (0600, or 0640 to share with a group)"
}

// ErrDuration is the reason a long duration flag's value is rejected;
// pflag prefixes it with the value and the flag's name.
var ErrDuration = units.ErrDuration

// ParseDuration is units.ParseDuration (Go's units with days and weeks in
// front: "2d", "1w", "1d12h"), with errors worded for a flag.
func ParseDuration(s string) (time.Duration, error) {
	d, err := units.ParseDuration(s)
	switch {
	case errors.Is(err, units.ErrDuration):
		return 0, ErrDuration
	case err != nil:
		return 0, errors.New("too long")
	}
	return d, nil
}

// Duration is a pflag.Value for a duration flag that also takes days and
// weeks (see ParseDuration), stored in D.
type Duration struct{ D *time.Duration }

// String is the value as help shows it; "0" for none, which pflag treats
// as "no default" and leaves out, as it does for a zero time.Duration.
func (v Duration) String() string {
	if v.D == nil || *v.D == 0 {
		return "0"
	}
	return v.D.String()
}

// Set parses s with ParseDuration.
func (v Duration) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*v.D = d
	return nil
}

// Type is "duration", as pflag's own, so that one check covers both.
func (v Duration) Type() string { return "duration" }

// Paths is a repeatable path flag (gate --recording): the first value
// goes to First, the others to Rest.
type Paths struct {
	First *string
	Rest  *[]string
}

func (v Paths) String() string {
	if v.First == nil {
		return ""
	}
	return strings.Join(append([]string{*v.First}, *v.Rest...), ",")
}

// Set takes one more path; an empty one is refused.
func (v Paths) Set(s string) error {
	if s == "" {
		return errors.New("empty path")
	}
	if *v.First == "" {
		*v.First = s
	} else {
		*v.Rest = append(*v.Rest, s)
	}
	return nil
}

// Type is the value's name in help.
func (v Paths) Type() string { return "path" }
