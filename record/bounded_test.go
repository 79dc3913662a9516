package record

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// repeatReader yields n bytes of c without holding them.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n)
	p[0] = r.c
	for i := 1; i < int(k); i *= 2 {
		copy(p[i:k], p[:i])
	}
	r.n -= k
	return int(k), nil
}

// firstLines returns the header and the next n lines of a real recording.
func firstLines(t *testing.T, n int) [][]byte {
	t.Helper()
	gz, err := os.ReadFile("../correlate/testdata/noperiod.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(plain, []byte("\n"))[:n+1]
}

// TestOversizeLineSkipped: a line over maxLine used to reject the whole
// recording ("bufio.Scanner: token too long"); it is skipped with a
// warning naming it, like a damaged line, and every other sample is read.
func TestOversizeLineSkipped(t *testing.T) {
	lines := firstLines(t, 4)
	input := func() io.Reader {
		return io.MultiReader(bytes.NewReader(lines[0]), bytes.NewReader(lines[1]), bytes.NewReader(lines[2]),
			&repeatReader{c: 'x', n: maxLine + 10}, strings.NewReader("\n"),
			bytes.NewReader(lines[3]), bytes.NewReader(lines[4]))
	}
	const want = "rec.jsonl:4: line of 67108875 bytes skipped: over the 64 MiB a recording line may have"
	// Next, one line at a time.
	r, err := NewReader(input(), "rec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 || len(r.Warnings()) != 1 || !strings.HasPrefix(r.Warnings()[0], want) {
		t.Errorf("Next: %d samples, warnings %q; want 4 and %q", n, r.Warnings(), want)
	}
	// Each, decoding in parallel.
	r, err = NewReader(input(), "rec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	rec, err := r.Each(func(*Sample) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 || len(rec.Warnings) != 1 || !strings.HasPrefix(rec.Warnings[0], want) {
		t.Errorf("Each: %d samples, warnings %q; want 4 and %q", n, rec.Warnings, want)
	}
}

// TestManyLargeLinesInBudget reads lines larger than a batch and, in
// sum, than the in-flight budget, in order and complete.
func TestManyLargeLinesInBudget(t *testing.T) {
	lines := firstLines(t, 1)
	sample := bytes.TrimSpace(lines[1])
	// Pad a sample line to 3 MiB with spaces inside the object: still
	// the same sample.
	pad := bytes.Repeat([]byte(" "), 3<<20)
	big := append(append(append([]byte{}, sample[:len(sample)-1]...), pad...), '}', '\n')
	var in bytes.Buffer
	in.Write(lines[0])
	const count = 40 // 120 MiB in all, over inFlightBytes
	for range count {
		in.Write(big)
	}
	r, err := NewReader(&in, "rec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	rec, err := r.Each(func(*Sample) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	if n != count || strings.Contains(strings.Join(rec.Warnings, "\n"), "skipped") {
		t.Errorf("%d samples, warnings %q; want %d, none skipped", n, rec.Warnings, count)
	}
}
