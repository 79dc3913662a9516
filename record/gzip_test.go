package record

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGzipKilledRecorder simulates SIGKILL of a recorder writing a .gz
// file: the writer sync-flushes every line, so the file holds every
// sample written, in a deflate stream without its end and trailer. The
// reader must return every sample and end with a warning, not an error.
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
	// 25 samples at 1 s, each flushed as it is written.
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
	if len(seqs) != 25 || seqs[0] != 1 || seqs[24] != 25 {
		t.Errorf("read samples %v, want 1..25: every sample was flushed", seqs)
	}
	// Every sample was flushed whole: only the gzip trailer is missing.
	const trailer = "compressed stream ends after this line without its gzip trailer"
	if len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], trailer) {
		t.Errorf("Warnings() = %q, want one about the stream without its trailer", r.Warnings())
	}

	// ReadFile (parallel decoding) must agree.
	killed := filepath.Join(t.TempDir(), "killed.jsonl.gz")
	if err := os.WriteFile(killed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadFile(killed)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if len(rec.Samples) != len(seqs) || len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], trailer) {
		t.Errorf("ReadFile: %d samples, warnings %q; want %d and one about the stream without its trailer", len(rec.Samples), rec.Warnings, len(seqs))
	}
}

// TestReadFileParallelOrder reads a recording of several decoding
// batches (ReadFile decodes them on all cores) and checks that the
// samples come back complete and in file order, with the end line, from
// a plain and from a .gz file.
func TestReadFileParallelOrder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"r.jsonl", "r.jsonl.gz"} {
		path := filepath.Join(dir, name)
		w, err := Create(path, false)
		if err != nil {
			t.Fatal(err)
		}
		clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		w.now = func() time.Time { return clock }
		if err := w.WriteHeader(&Header{Host: "h", Interval: time.Second}); err != nil {
			t.Fatal(err)
		}
		const n = 3*batchLines + 17
		for i := 0; i < n; i++ {
			clock = clock.Add(time.Second)
			s := &Sample{Seq: i, Time: clock}
			if i == 5 {
				s.Errors = []string{"procs: x"}
			}
			if err := w.WriteSample(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close("duration"); err != nil {
			t.Fatal(err)
		}
		rec, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Samples) != n || rec.End == nil || rec.End.Samples != n || len(rec.Warnings) != 0 {
			t.Fatalf("%s: %d samples, end %+v, warnings %q; want %d, an end line, none", name, len(rec.Samples), rec.End, rec.Warnings, n)
		}
		for i, s := range rec.Samples {
			if s.Seq != i {
				t.Fatalf("%s: sample %d has seq %d", name, i, s.Seq)
			}
		}
		if got := rec.Samples[5].Errors; len(got) != 1 || got[0] != "procs: x" {
			t.Errorf("%s: sample 5 errors = %q", name, got)
		}
	}
}

// A full disk can fail a gzip sample's sync flush after the sample's
// compressed data reached the file: the sample is readable though the
// write failed. ReadBack counts what a reader gets, as analyze does.
func TestWriterReadBackAfterFailedFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl.gz")
	w, err := Create(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.f.Close()
	if err := w.WriteHeader(&Header{Host: "h", Interval: time.Second}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if err := w.WriteSample(&Sample{Seq: i, Time: time.Date(2026, 12, 1, 12, 0, i, 0, time.UTC), Errors: []string{strings.Repeat(strconv.Itoa(i), 3000)}}); err != nil {
			t.Fatal(err)
		}
	}
	// The last sync flush's empty stored block (00 00 00 ff ff) did not
	// reach the disk, and the writer counted the sample as lost.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-5); err != nil {
		t.Fatal(err)
	}
	w.durable--
	if got := w.ReadBack(); got != 5 {
		t.Errorf("ReadBack() = %d, want 5: the fifth sample's data is in the file", got)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatalf("the header is in the first half: %v", err)
	}
	want := 0
	for s, err := r.Next(); err == nil && s != nil; s, err = r.Next() {
		want++
	}
	r.Close()
	if got := w.ReadBack(); got != want || want >= 5 {
		t.Errorf("after cutting the file in half: ReadBack() = %d, a reader gets %d (want fewer than 5)", got, want)
	}
}
