package cmd

import (
	"github.com/MakeNowJust/heredoc"
)

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
