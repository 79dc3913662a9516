package cmd

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/memdiag/memdiag/internal/flagvalue"
	"github.com/memdiag/memdiag/internal/mangen"
)

// newManCmd writes one man page per command, generated from the command
// tree (cobra/doc), so the pages say what --help says.
func newManCmd(f *factory) *cobra.Command {
	var dir string
	mode := manMode
	c := &cobra.Command{
		Use:     "man --dir DIR",
		Short:   "Write memdiag's man pages (memdiag.1, memdiag-watch.1, ...) into a directory",
		Long:    longHelp("man"),
		Example: exampleHelp("man"),
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
			root := cmd.Root()
			root.DisableAutoGenTag = true // no date: the same tree gives the same pages
			hdr := &doc.GenManHeader{Title: "MEMDIAG", Section: "1", Source: "memdiag " + versionString(), Manual: "memdiag manual"}
			n, err := mangen.WriteTree(root, hdr, dir, mode)
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

// manMode is the permission of a man page: every user's man reads it, and
// it holds nothing but the help text.
const manMode fs.FileMode = 0o644
