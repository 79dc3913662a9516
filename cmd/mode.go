package cmd

import (
	"fmt"
	"io"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/spf13/pflag"
)

// warnMode prints flagvalue.ModeWarning once for the command's --mode,
// when it was given.
func warnMode(cmd *pflag.FlagSet, w io.Writer) {
	fl := cmd.Lookup("mode")
	if fl == nil || !fl.Changed {
		return
	}
	if v, ok := fl.Value.(flagvalue.Mode); ok && v.M != nil {
		if msg := flagvalue.ModeWarning(*v.M); msg != "" {
			fmt.Fprintf(w, "memdiag: warning: %s\n", msg)
		}
	}
}
