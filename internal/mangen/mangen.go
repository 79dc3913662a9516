// Package mangen writes the man pages of a cobra command tree (memdiag
// man) safely: through outfile, with an exact mode.
package mangen

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/memdiag/memdiag/internal/outfile"
)

// Mode is the permission of a man page: every user's man reads it, and
// it holds nothing but the help text.
const Mode fs.FileMode = 0o644

// Write writes the man pages of root's whole tree into dir (which must
// exist) as section 1 of the "memdiag manual", source naming the program
// and its version ("memdiag v1.2.3"). The pages carry no generation date
// (root's DisableAutoGenTag is set), so the same tree gives the same
// pages. It returns how many it wrote (WriteTree).
func Write(root *cobra.Command, source, dir string, mode fs.FileMode) (int, error) {
	root.DisableAutoGenTag = true
	hdr := &doc.GenManHeader{Title: "MEMDIAG", Section: "1", Source: source, Manual: "memdiag manual"}
	return WriteTree(root, hdr, dir, mode)
}

// WriteTree is cobra/doc's GenManTree through outfile.Create: a page
// path that is a symbolic link, a FIFO or a file with other hard links is
// refused instead of written through (memdiag man runs as root into
// shared folders), and each page gets mode exactly. It writes c's page
// and those of its available subcommands, named as GenManTree names them
// (memdiag-analyze.1), and returns how many it wrote.
func WriteTree(c *cobra.Command, hdr *doc.GenManHeader, dir string, mode fs.FileMode) (int, error) {
	n := 0
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		k, err := WriteTree(sub, hdr, dir, mode)
		n += k
		if err != nil {
			return n, err
		}
	}
	h := *hdr // GenMan fills in the header's empty fields per command
	path := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+"."+hdr.Section)
	out, err := outfile.Create(path, outfile.Options{Mode: mode, Overwrite: true})
	if err != nil {
		return n, err
	}
	err = doc.GenMan(c, &h, out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("%s: %w", path, err)
	}
	return n + 1, nil
}
