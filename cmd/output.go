package cmd

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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

// writeOutput runs render on stdout, or on the file path when path is
// neither "" nor "-": created or overwritten the one safe way
// (outfile.Create: mode 0600 or --mode, never through a symbolic link), with colour
// off and no width limit (a file is not a terminal). It says on stderr
// what it wrote.
func writeOutput(ios *iostreams.IOStreams, path string, mode fs.FileMode, o *report.Options, render func(w io.Writer) error) error {
	if path == "" || path == "-" {
		return render(ios.Out)
	}
	o.Color, o.Width = false, 0
	f, err := outfile.Create(path, outfile.Options{Overwrite: true, Mode: mode})
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
