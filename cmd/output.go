package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memdiag/memdiag/internal/format"
	"github.com/memdiag/memdiag/internal/iostreams"
	"github.com/memdiag/memdiag/internal/outfile"
	"github.com/memdiag/memdiag/report"
)

// formatForOutput is the --format of a command that also has --output:
// the flag when given, else "html" for an output file named *.html or
// *.htm, else the flag's default.
func formatForOutput(c *cobra.Command, f format.Format, output string) format.Format {
	if c.Flags().Changed("format") {
		return f
	}
	switch strings.ToLower(filepath.Ext(output)) {
	case ".html", ".htm":
		return format.HTML
	}
	return f
}

// checkOutput refuses, before any work is done, an output file that
// exists (without --force: a report was lost to a silent overwrite) or is
// a directory. Both are faults of a file the user named: exit 1, as
// --latency DIR and watch --out EXISTING are.
func checkOutput(path string, force bool) error { return checkOutputFlag("--output", path, force) }

// checkOutputFlag is checkOutput for the file of flag (gate's --junit).
func checkOutputFlag(flag, path string, force bool) error {
	if path == "" || path == "-" {
		return nil
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created by writeOutput
	}
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, path, err)
	case fi.IsDir():
		return fmt.Errorf("%s %s: is a directory, not a file", flag, path)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %s: is a symbolic link; refusing to write through it", flag, path)
	case !force:
		return fmt.Errorf("%s %s: %w (use --force to overwrite)", flag, path, outfile.ErrExists)
	}
	return nil
}

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
	if err := checkOutput(path, force); err != nil {
		return err
	}
	o.Color, o.Width = false, 0
	f, err := outfile.Create(path, outfile.Options{Overwrite: force, Mode: mode})
	if err != nil {
		// A refused or failed file is a runtime failure (exit 1, no
		// usage text), as gate says it: the flag itself was well formed.
		return fmt.Errorf("--output: %w", err)
	}
	if err := render(f); err != nil {
		f.Close()
		return err
	}
	st, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	fmt.Fprintf(ios.ErrOut, "memdiag: wrote %s (%d bytes)\n", path, st.Size())
	return nil
}
