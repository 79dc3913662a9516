package cmd

import (
	"io/fs"
	"time"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/outfile"
)

// longDurationVar defines a duration flag that accepts days and weeks
// ("2d", "1w") besides Go's units, for the flags where people give long
// spans (--duration of a recording, --to of a window).
func longDurationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(flagvalue.Duration{D: p}, name, usage)
}

// modeFlag adds --mode, the permission of every file the command writes
// (recordings, reports, JUnit XML), to fl; default 0600, since a
// recording holds every process's command line.
func modeFlag(fl *pflag.FlagSet, p *fs.FileMode) {
	*p = outfile.DefaultMode
	fl.Var(flagvalue.Mode{M: p}, "mode", "octal permission of the files this command writes (e.g. 0640 to let a group read them)")
}
