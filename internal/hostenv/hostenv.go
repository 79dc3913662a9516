// Package hostenv holds the one error type memdiag uses for a feature of
// the host that is not there: a kernel interface (PSI, a cgroup file, the
// process-events connector), a running systemd, a privilege. Collectors
// return it instead of a silent zero; cmd prints it once and exits with the
// environment code (5) when the command cannot do without it.
package hostenv

import (
	"errors"
	"fmt"
	"os"
)

// Unavailable says that something memdiag needs on this host is missing,
// and what would provide it.
type Unavailable struct {
	// Path is the file or interface that could not be used, e.g.
	// /proc/pressure/memory or "process-events connector"; empty when
	// Need already names several.
	Path string
	// Need says what is missing, e.g. "pressure stall information (kernel
	// >= 4.20 with CONFIG_PSI=y)".
	Need string
	// Hint says what the user can do; may be empty.
	Hint string
	// Err is the underlying error (fs.ErrNotExist, EPERM, ...); may be nil.
	Err error
}

// Error reads "PATH: unavailable: NEED (HINT)", or "NEED (HINT)" without
// a Path.
func (e *Unavailable) Error() string {
	s := e.Need
	if e.Path != "" {
		s = fmt.Sprintf("%s: unavailable: %s", e.Path, e.Need)
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Unavailable) Unwrap() error { return e.Err }

// CheckProc returns an *Unavailable unless procRoot is a directory (a
// mounted proc file system, or a fixture tree's proc/).
func CheckProc(procRoot string) error {
	fi, err := os.Stat(procRoot)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	if err != nil {
		return &Unavailable{Path: procRoot, Need: "a proc file system",
			Hint: "mount proc there, or give --root the root of a host's file tree: it must hold proc/, and sys/ for cgroups", Err: err}
	}
	return nil
}

// As returns the first *Unavailable in err's chain, or nil.
func As(err error) *Unavailable {
	var u *Unavailable
	if errors.As(err, &u) {
		return u
	}
	return nil
}
