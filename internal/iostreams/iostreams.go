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
func System() *IOStreams { return Files(os.Stdin, os.Stdout, os.Stderr) }

// Files returns streams bound to the given files, deciding terminal,
// width and colour from them as [System] does from the process's own
// (a test hands it a pseudo-terminal).
func Files(in, out, errOut *os.File) *IOStreams {
	s := &IOStreams{In: in, Out: out, ErrOut: errOut}
	s.stdoutTTY = isatty.IsTerminal(out.Fd())
	s.stderrTTY = isatty.IsTerminal(errOut.Fd())
	if os.Getenv("NO_COLOR") != "" { // https://no-color.org: set and not empty
		s.colorOff = true
	}
	s.width = terminalWidth(out.Fd())
	return s
}

// defaultWidth is the width assumed for a terminal that does not say its
// size (TIOCGWINSZ fails or reports 0 columns), as cli/cli does.
const defaultWidth = 80

// terminalWidth is the column count of the terminal on fd, from the
// TIOCGWINSZ ioctl (tty_ioctl(4)), or defaultWidth.
func terminalWidth(fd uintptr) int {
	if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	return defaultWidth
}

// Test returns streams writing to buffers: not a TTY, colour off. Made a
// TTY with SetStdoutTTY, it is 80 columns wide unless SetWidth says
// otherwise.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, colorOff: true, width: defaultWidth}, in, out, errOut
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

// EnableColor allows colour again, as on a terminal whose environment
// has no NO_COLOR (tests; colour still needs a terminal).
func (s *IOStreams) EnableColor() { s.colorOff = false }

// ColorEnabled reports whether output may carry ANSI colour: stdout is a
// terminal, and neither NO_COLOR nor --no-color is in force.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.colorOff }

// Width is the width of the terminal stdout writes to, in columns, for
// tables to fit; 0 when stdout is not a terminal: piped output keeps full
// content.
func (s *IOStreams) Width() int {
	if !s.stdoutTTY {
		return 0
	}
	return s.width
}

// SetWidth overrides the terminal width (tests).
func (s *IOStreams) SetWidth(cols int) { s.width = cols }
