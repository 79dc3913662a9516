package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/helptext"
	"github.com/memdiag/memdiag/internal/mangen"
)

// newManCmd writes one man page per command, generated from the command
// tree (cobra/doc), so the pages say what --help says.
func newManCmd(f *factory) *cobra.Command {
	var dir string
	mode := mangen.Mode
	c := &cobra.Command{
		Use:     "man --dir DIR",
		Short:   "Write memdiag's man pages into a directory",
		Long:    helptext.Long("man"),
		Example: helptext.Examples("man"),
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				// A usage error (exit 2), as every missing flag value;
				// cobra's MarkFlagRequired would make it a plain error.
				return &usageError{Err: fmt.Errorf("--dir: required: the directory to write the man pages into")}
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--dir: %w", err)
			}
			n, err := mangen.Write(cmd.Root(), "memdiag "+versionString(), dir, mode)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "wrote %d man pages to %s\n", n, dir)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "write the pages into this `DIR` (created if missing)")
	c.Flags().Var(flagvalue.Mode{M: &mode}, "mode", "octal permission of the pages (man pages are read by every user)")
	_ = c.MarkFlagDirname("dir")
	return c
}
