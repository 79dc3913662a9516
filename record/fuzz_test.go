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

// FuzzReader checks that no file, plain or gzip, panics the recording
// reader, that it ends (io.EOF or an error naming the file), and that a
// sample it returns came from a line of the file.
func FuzzReader(f *testing.F) {
	gz, err := os.ReadFile("../correlate/testdata/noperiod.jsonl.gz")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(gz)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		f.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		f.Fatal(err)
	}
	// The header and the first few lines, and a cut copy.
	lines := bytes.SplitAfter(plain, []byte("\n"))
	head := bytes.Join(lines[:min(4, len(lines))], nil)
	f.Add(head)
	f.Add(head[:len(head)-7])
	f.Add(append(append([]byte{}, lines[0]...), `{"type":"end"`...))
	f.Add(append(append([]byte{}, lines[0]...), `{"type":"sample","time":"x"}`+"\n"+`{"type":"end"}`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), "rec.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "rec.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for n := 0; ; n++ {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "rec.jsonl") {
					t.Fatalf("error does not name the file: %v", err)
				}
				break
			}
			if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) && n > bytes.Count(b, []byte("\n"))+1 {
				t.Fatalf("more samples than lines")
			}
		}
	})
}
