package iostreams

import (
	"bytes"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"
)

// paragraphWriter wraps, at spaces, every line written to it that is
// wider than width terminal columns, continuing it under its own first
// word (the line's indent plus any "- " or "1. " bullet). Table lines
// (they hold "│" or "─") are left alone: internal/tables fits those.
// A partial line is held until its newline or Flush.
type paragraphWriter struct {
	w     io.Writer
	width int
	buf   []byte
}

func (p *paragraphWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			if bytes.ContainsAny(p.buf, "\r\x1b") {
				// A progress bar or a redrawn line: pass it on now.
				_, err := p.w.Write(p.buf)
				p.buf = p.buf[:0]
				return len(b), err
			}
			return len(b), nil
		}
		line := string(p.buf[:i])
		p.buf = p.buf[i+1:]
		if _, err := io.WriteString(p.w, WrapLine(line, p.width)+"\n"); err != nil {
			return len(b), err
		}
	}
}

// Flush writes a held partial line.
func (p *paragraphWriter) Flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	line := string(p.buf)
	p.buf = nil
	_, err := io.WriteString(p.w, WrapLine(line, p.width))
	return err
}

// WrapLine wraps one line of prose to width terminal columns at spaces;
// continuation lines are indented like the text after the line's indent
// and bullet. A table line (box drawing, or columns aligned with runs of
// spaces), or a line that fits, is returned as it is.
func WrapLine(line string, width int) string {
	if width <= 0 || text.StringWidthWithoutEscSequences(line) <= width || strings.ContainsAny(line, "│─\r") {
		return line
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	body := line[indent:]
	if strings.Contains(strings.TrimRight(body, " "), "   ") {
		return line // columns aligned with spaces (watch's live rows): not prose
	}
	hang := indent
	for _, bullet := range []string{"- ", "• ", "* "} {
		if strings.HasPrefix(body, bullet) {
			hang += len([]rune(bullet))
		}
	}
	if n := strings.IndexByte(body, ' '); n > 0 && n <= 4 && strings.TrimRight(body[:n], "0123456789") == "." {
		hang += n + 1 // "1. "
	}
	if hang > width/2 {
		hang = 0
	}
	wrapped := strings.Split(text.WrapSoft(strings.TrimLeft(line, " "), width-hang), "\n")
	var b strings.Builder
	for i, l := range wrapped {
		if i > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", hang))
			l = strings.TrimLeft(l, " ")
		} else {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(strings.TrimRight(l, " "))
	}
	return b.String()
}

// WrapParagraphs makes Out, and ErrOut when it is a terminal too, wrap
// prose lines wider than the terminal, when stdout is a terminal (piped
// output keeps every line whole). Call Flush when done.
func (s *IOStreams) WrapParagraphs() {
	if !s.stdoutTTY || s.width <= 0 {
		return
	}
	if _, ok := s.Out.(*paragraphWriter); !ok {
		s.Out = &paragraphWriter{w: s.Out, width: s.width}
	}
	if _, ok := s.ErrOut.(*paragraphWriter); !ok && s.stderrTTY {
		s.ErrOut = &paragraphWriter{w: s.ErrOut, width: s.width}
	}
}

// Flush writes what wrapping writers still hold.
func (s *IOStreams) Flush() error {
	for _, w := range []io.Writer{s.Out, s.ErrOut} {
		if p, ok := w.(*paragraphWriter); ok {
			if err := p.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}
