// Package iostreams decides once where output goes, whether it is a
// terminal, how wide it is and whether colour is used, in the manner of
// cli/cli's pkg/iostreams. Commands hand report code only the resulting
// flags (Color, Width), never os.Stdout.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// IOStreams bundles the standard streams with terminal facts.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY bool
	stderrTTY bool
	colorOff  bool
	width     int
}

// System returns streams bound to the process's stdin, stdout and stderr.
// Colour is off when NO_COLOR is set (https://no-color.org) or stdout is
// not a terminal.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.stdoutTTY = isatty.IsTerminal(os.Stdout.Fd())
	s.stderrTTY = isatty.IsTerminal(os.Stderr.Fd())
	if os.Getenv("NO_COLOR") != "" { // https://no-color.org: set and not empty
		s.colorOff = true
	}
	s.width = 120
	if s.stdoutTTY {
		if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			s.width = int(ws.Col)
		}
	}
	return s
}

// Test returns streams writing to buffers: not a TTY, colour off, width 120.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, colorOff: true, width: 120}, in, out, errOut
}

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal (progress goes there).
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdoutTTY overrides terminal detection (tests).
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// SetStderrTTY overrides terminal detection (tests).
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// DisableColor turns colour off (--no-color).
func (s *IOStreams) DisableColor() { s.colorOff = true }

// ColorEnabled reports whether output may carry ANSI colour: stdout is a
// terminal, and neither NO_COLOR nor --no-color is in force.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.colorOff }

// Width is the terminal width in columns, or 120 when not a terminal.
func (s *IOStreams) Width() int { return s.width }
