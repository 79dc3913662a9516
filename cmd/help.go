package cmd

import (
	"embed"
	"strings"

	"github.com/MakeNowJust/heredoc"
)

// examples formats a command's Example block the one way every memdiag
// command shows it: each example is a "# what it does" comment line and
// the command line(s), examples separated by a blank line, every line
// indented by two spaces (cobra prints Example verbatim under
// "Examples:"), no trailing blanks or newline. s is written as a heredoc.
func examples(s string) string {
	lines := strings.Split(strings.TrimRight(heredoc.Doc(s), "\n"), "\n")
	for i, l := range lines {
		if l = strings.TrimRight(l, " \t"); l != "" {
			l = "  " + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// helpFiles are every command's long help (help/NAME.txt) and examples
// (help/NAME.examples.txt), written as heredocs: text, kept apart from
// the wiring (helptext.go reads them).
//
//go:embed help/*.txt
var helpFiles embed.FS
