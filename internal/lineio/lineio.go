// Package lineio reads text line by line with a bound in bytes: a line
// longer than the bound is read past, never held, and reported by its
// length, so that one huge line (a damaged recording, a hostile results
// file) costs no more memory than the bound and loses only itself.
// bufio.Scanner instead fails the whole read with "token too long".
package lineio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Scanner reads lines like bufio.Scanner with ScanLines, except that a
// line over Max bytes is skipped: Scan returns true with Bytes nil and
// Oversize its length.
type Scanner struct {
	br   *bufio.Reader
	max  int
	line []byte
	over int64
	term bool // the line ended with "\n"
	err  error
	done bool
}

// NewScanner returns a Scanner of r whose lines may have at most max
// bytes (without the newline).
func NewScanner(r io.Reader, max int) *Scanner {
	return &Scanner{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Scan reads the next line, terminated by "\n" or by the end of the input;
// it returns false at the end or on a read error (see Err). A "\r" before
// the "\n" is kept, as bufio.ScanLines does not.
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	s.line, s.over, s.term = s.line[:0], 0, false
	var n int64
	skipping := false
	for {
		frag, err := s.br.ReadSlice('\n')
		n += int64(len(frag))
		body := bytes.TrimSuffix(frag, []byte("\n"))
		if !skipping && len(s.line)+len(body) > s.max {
			skipping, s.line = true, s.line[:0]
		}
		if !skipping {
			s.line = append(s.line, body...)
		}
		if err == nil {
			s.term = true
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		s.done = true
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
		if n == 0 {
			return false
		}
		break
	}
	if skipping {
		s.over = n
	}
	return true
}

// Bytes is the line Scan read, without its newline; nil when it was over
// the bound. It is valid until the next Scan.
func (s *Scanner) Bytes() []byte {
	if s.over > 0 {
		return nil
	}
	return s.line
}

// Oversize is the length in bytes (newline included) of the line Scan
// skipped for being over the bound, or 0.
func (s *Scanner) Oversize() int64 { return s.over }

// Terminated reports whether the line Scan read ended with "\n" (false for
// a last line without one: a writer still writing, or killed).
func (s *Scanner) Terminated() bool { return s.term }

// Max is the bound on a line, in bytes.
func (s *Scanner) Max() int { return s.max }

// Err is the read error that ended Scan; nil at the end of the input.
func (s *Scanner) Err() error { return s.err }
