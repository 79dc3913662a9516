package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/outfile"
)

// errMode is why a --mode value is refused; flagError prefixes it with
// the flag and the value.
var errMode = errors.New("want an octal file mode of at most 0777 that lets the owner read and write, such as 0600 or 0640")

// parseMode parses a --mode value: octal permission bits ("0640", "640",
// "0o640"). The owner must keep read and write (memdiag writes the file,
// and analyze reads it back); setuid, setgid and sticky bits are refused.
func parseMode(s string) (fs.FileMode, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	if digits == "" || strings.ContainsAny(digits, "+-_") {
		return 0, errMode
	}
	n, err := strconv.ParseUint(digits, 8, 32)
	if err != nil || n > 0o777 || n&0o600 != 0o600 {
		return 0, errMode
	}
	return fs.FileMode(n), nil
}

// modeValue is the pflag.Value of --mode.
type modeValue struct{ m *fs.FileMode }

func (v modeValue) String() string {
	if v.m == nil {
		return ""
	}
	return "0" + strconv.FormatUint(uint64(*v.m), 8)
}

func (v modeValue) Set(s string) error {
	m, err := parseMode(s)
	if err != nil {
		return err
	}
	*v.m = m
	return nil
}

func (v modeValue) Type() string { return "mode" }

// modeFlag adds --mode, the permission of every file the command writes
// (recordings, reports, JUnit XML), to fl; default 0600, since a
// recording holds every process's command line.
func modeFlag(fl *pflag.FlagSet, p *fs.FileMode) {
	*p = outfile.DefaultMode
	fl.Var(modeValue{p}, "mode", "octal permission of the files this command writes (e.g. 0640 to let a group read them)")
}

// modeWarning is the warning for a --mode that the files it writes are
// not meant to have, "" for none: execute bits (reports and recordings
// are data, never programs) and write permission for other users (anyone
// on the host could change a report or a recording that CI or a person
// trusts).
func modeWarning(m fs.FileMode) string {
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

// warnMode prints modeWarning once for cmd's --mode, when it was given.
func warnMode(cmd *pflag.FlagSet, w io.Writer) {
	fl := cmd.Lookup("mode")
	if fl == nil || !fl.Changed {
		return
	}
	if v, ok := fl.Value.(modeValue); ok && v.m != nil {
		if msg := modeWarning(*v.m); msg != "" {
			fmt.Fprintf(w, "memdiag: warning: %s\n", msg)
		}
	}
}
