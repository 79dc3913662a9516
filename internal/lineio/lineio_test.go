package lineio

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestScanner(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 100) + "\n\nlast-unterminated"
	s := NewScanner(iotest.OneByteReader(strings.NewReader(in)), 10)
	type got struct {
		line string
		over int64
	}
	var all []got
	for s.Scan() {
		all = append(all, got{string(s.Bytes()), s.Oversize()})
	}
	// The unterminated last line (17 bytes) is over the bound too.
	want := []got{{"short", 0}, {"", 101}, {"", 0}, {"", 17}}
	if len(all) != len(want) {
		t.Fatalf("got %+v, want %+v", all, want)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i+1, all[i], want[i])
		}
	}
	if s.Err() != nil {
		t.Errorf("Err = %v", s.Err())
	}
}

func TestScannerLongLineBufferReuse(t *testing.T) {
	// A line longer than the bufio buffer (64 KiB) but within the bound.
	long := strings.Repeat("y", 200<<10)
	s := NewScanner(strings.NewReader(long+"\nz\n"), 1<<20)
	if !s.Scan() || string(s.Bytes()) != long {
		t.Fatalf("long line: %d bytes", len(s.Bytes()))
	}
	if !s.Scan() || string(s.Bytes()) != "z" || s.Scan() {
		t.Fatal("after the long line")
	}
}

func TestScannerError(t *testing.T) {
	s := NewScanner(io.MultiReader(strings.NewReader("a\npartial"), iotest.ErrReader(io.ErrUnexpectedEOF)), 100)
	var lines []string
	for s.Scan() {
		lines = append(lines, string(s.Bytes()))
	}
	if strings.Join(lines, ",") != "a,partial" || !errors.Is(s.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("lines %q err %v", lines, s.Err())
	}
}
