package cmd

import (
	"github.com/MakeNowJust/heredoc"
)

// The long help (help/NAME.txt) and examples (help/NAME.examples.txt) of
// analyze, compare, timers, mem and the root are written as heredocs;
// watch's, record's and gate's (helpText) as cobra prints them. Both
// are in helpFiles (help.go).

// longHelp is help/NAME.txt as a command's Long.
func longHelp(name string) string { return heredoc.Doc(readHelp(name + ".txt")) }

// exampleHelp is help/NAME.examples.txt as a command's Example.
func exampleHelp(name string) string { return examples(readHelp(name + ".examples.txt")) }

func readHelp(file string) string {
	b, err := helpFiles.ReadFile("help/" + file)
	if err != nil {
		panic(err) // a file embedded in the binary: only a build can lose it
	}
	return string(b)
}
