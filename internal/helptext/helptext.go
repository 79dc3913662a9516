// Package helptext holds every memdiag command's long help
// (help/NAME.txt) and examples (help/NAME.examples.txt), written as
// heredocs: text, kept apart from cmd's wiring, and laid out here the
// one way cobra shows them.
package helptext

import (
	"embed"
	"strings"

	"github.com/MakeNowJust/heredoc"
)

// files are help/*.txt, embedded in the binary.
//
//go:embed help/*.txt
var files embed.FS

// Long is help/NAME.txt as a command's Long.
func Long(name string) string { return heredoc.Doc(read(name + ".txt")) }

// Examples is help/NAME.examples.txt as a command's Example (layout).
func Examples(name string) string { return layout(read(name + ".examples.txt")) }

func read(file string) string {
	b, err := files.ReadFile("help/" + file)
	if err != nil {
		panic(err) // a file embedded in the binary: only a build can lose it
	}
	return string(b)
}

// layout formats a command's Example block the one way every memdiag
// command shows it: each example is a "# what it does" comment line and
// the command line(s), examples separated by a blank line, every line
// indented by two spaces (cobra prints Example verbatim under
// "Examples:"), no trailing blanks or newline. s is written as a heredoc.
func layout(s string) string {
	lines := strings.Split(strings.TrimRight(heredoc.Doc(s), "\n"), "\n")
	for i, l := range lines {
		if l = strings.TrimRight(l, " \t"); l != "" {
			l = "  " + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
