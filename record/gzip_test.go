package record

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGzipKilledRecorder simulates SIGKILL of a recorder writing a .gz
// file: the file holds what the writer flushed (the header at once, then
// at least every 10 s) plus a cut-short deflate block. The reader must
// return the samples of the flushed part and end with a warning, not an
// error.
func TestGzipKilledRecorder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl.gz")
	w, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	w.now = func() time.Time { return clock }
	if err := w.WriteHeader(&Header{Host: "h", Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	// 25 samples at 1 s: flushes at 10 s and 20 s (the header flush was
	// at 0 s); samples 21..25 only reach the compressor.
	for i := 1; i <= 25; i++ {
		clock = clock.Add(time.Second)
		if err := w.WriteSample(&Sample{Seq: i, Time: clock, Errors: []string{strings.Repeat("x", 2000)}}); err != nil {
			t.Fatal(err)
		}
	}
	// Kill: no Close. Copy the file as the kernel has it.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close()

	r, err := NewReader(strings.NewReader(string(b)), "rec.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for {
		s, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next() after %v: %v", seqs, err)
		}
		seqs = append(seqs, s.Seq)
	}
	// gzipFlushEvery is 10 s: sample 20 (t=20 s) was the last flush.
	if len(seqs) < 20 || seqs[len(seqs)-1] > 25 {
		t.Errorf("read samples %v, want 1..20 at least (flushed at t=10 s and 20 s)", seqs)
	}
	if len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], "cut short") {
		t.Errorf("Warnings() = %q, want one about the cut-short compressed stream", r.Warnings())
	}
}
