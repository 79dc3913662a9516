package cmd

import (
	"fmt"
	"io"
	"io/fs"

	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/outfile"
	"github.com/memdiag/memdiag/report"
)

// checkOutput is outfile.Check of --output, before any work is done.
func checkOutput(path string, force bool) error { return outfile.Check("--output", path, force) }

// forceFlag adds --force, which lets the output files (what) overwrite
// existing ones.
func forceFlag(fl *pflag.FlagSet, force *bool, what string) {
	fl.BoolVar(force, "force", false, "overwrite "+what+" if it exists")
}

// writeOutput runs render on stdout, or on the file path when path is
// neither "" nor "-": created, or with force overwritten, the one safe
// way (outfile.Create: mode 0600 or --mode, never through a symbolic
// link), with colour off and no width limit (a file is not a terminal).
// It says on stderr what it wrote.
func writeOutput(ios *iostreams.IOStreams, path string, mode fs.FileMode, force bool, o *report.Options, render func(w io.Writer) error) error {
	if path == "" || path == "-" {
		return render(ios.Out)
	}
	o.Color, o.Width = false, 0
	size, err := outfile.Write("--output", path, outfile.Options{Overwrite: force, Mode: mode}, render)
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.ErrOut, "memdiag: wrote %s (%d bytes)\n", path, size)
	return nil
}
