package record

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fullFile is an *os.File on a disk that holds Room more bytes: a write
// past it writes what fits and fails with ENOSPC, as write(2) does on a
// full file system. Room < 0: no limit.
type fullFile struct {
	*os.File
	Room int
}

func (f *fullFile) Write(b []byte) (int, error) {
	if f.Room < 0 || len(b) <= f.Room {
		if f.Room >= 0 {
			f.Room -= len(b)
		}
		return f.File.Write(b)
	}
	n, _ := f.File.Write(b[:f.Room])
	f.Room = 0
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// A write that fails on a full disk is taken back: the file ends on the
// last whole line, readable as a recorder still writing it; the line
// waits in the writer, no other is taken, and Retry writes it once there
// is room, the compressed stream unbroken, followed by a gap line and
// the samples after.
func TestWriterFullDiskRetry(t *testing.T) {
	for _, name := range []string{"r.jsonl", "r.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			var ff *fullFile
			w := CreateSegmentWith(path, func() (File, error) {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					return nil, err
				}
				ff = &fullFile{File: f, Room: -1}
				return ff, nil
			})
			t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			at := func(i int) *Sample {
				return &Sample{Seq: i, Time: t0.Add(time.Duration(i) * time.Second), Errors: []string{strings.Repeat("x", 500)}}
			}
			if err := w.WriteHeader(&Header{Host: "h", Interval: time.Second}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the segment exists before its first sample: %v", err)
			}
			for i := 0; i < 3; i++ {
				if err := w.WriteSample(at(i)); err != nil {
					t.Fatal(err)
				}
			}
			ff.Room = 10 // sample 3 does not fit
			err := w.WriteSample(at(3))
			if !errors.Is(err, syscall.ENOSPC) || !w.Pending() {
				t.Fatalf("full disk: err %v, pending %v", err, w.Pending())
			}
			if err := w.WriteSample(at(4)); !errors.Is(err, errPending) {
				t.Fatalf("a sample while a line waits: %v, want errPending", err)
			}
			// What a reader gets now: samples 0..2, whole.
			rec, err := ReadFile(path)
			if err != nil || len(rec.Samples) != 3 || rec.End != nil {
				t.Fatalf("while the disk is full: %v, %d samples, end %v", err, len(rec.Samples), rec.End)
			}
			if w.Written() != 3 || w.Samples() != 4 || w.ReadBack() != 3 {
				t.Errorf("written %d, samples %d, read back %d; want 3, 4, 3", w.Written(), w.Samples(), w.ReadBack())
			}
			if err := w.Retry(); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("retry on a full disk: %v", err)
			}
			ff.Room = -1
			if err := w.Retry(); err != nil || w.Pending() {
				t.Fatalf("retry with room: %v, pending %v", err, w.Pending())
			}
			g := Gap{Start: at(3).Time, End: at(7).Time, Missed: 3, Reason: "no space left on device"}
			if err := w.WriteGap(&g); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteSample(at(7)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close("duration"); err != nil {
				t.Fatal(err)
			}
			rec, err = ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int
			for _, s := range rec.Samples {
				seqs = append(seqs, s.Seq)
			}
			if got := fmt.Sprint(seqs); got != "[0 1 2 3 7]" {
				t.Errorf("samples %s, want [0 1 2 3 7]", got)
			}
			if rec.End == nil || rec.End.Samples != 5 || rec.End.Reason != "duration" {
				t.Errorf("end %+v, want 5 samples, duration", rec.End)
			}
			// The gap line is the sixth, whole, before sample 7.
			if got := gapLinesOf(t, path); len(got) != 1 || got[0].line != 6 || got[0].g.Missed != 3 || !got[0].g.End.Equal(at(7).Time) || got[0].g.Reason != "no space left on device" {
				t.Errorf("gap lines %+v", got)
			}
		})
	}
}

// A segment whose first write fails leaves no file, and Retry creates it
// again with the header and the sample; one that never gets a sample
// leaves none either.
func TestCreateSegmentNoEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl.gz")
	room := 0
	w := CreateSegmentWith(path, func() (File, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		return &fullFile{File: f, Room: room}, nil
	})
	if err := w.WriteHeader(&Header{Host: "h"}); err != nil {
		t.Fatal(err)
	}
	s := &Sample{Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	if err := w.WriteSample(s); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("first sample on a full disk: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a segment whose first write failed is left: %v", err)
	}
	room = -1
	if err := w.Retry(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close("duration"); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadFile(path)
	if err != nil || len(rec.Samples) != 1 || rec.End == nil || rec.Header.Host != "h" {
		t.Fatalf("after retry: %v, %+v", err, rec)
	}

	none := CreateSegment(filepath.Join(dir, "n.jsonl.gz"))
	if err := none.WriteHeader(&Header{Host: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := none.Close("signal: terminated"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(none.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a segment without samples is left: %v", err)
	}
}

type gapAt struct {
	line int
	g    Gap
}

// gapLinesOf returns the gap lines of the recording at path and their
// line numbers.
func gapLinesOf(t *testing.T, path string) []gapAt {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rd io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	}
	var out []gapAt
	sc := bufio.NewScanner(rd)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if !strings.HasPrefix(sc.Text(), `{"type":"gap"`) {
			continue
		}
		var g Gap
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, gapAt{n, g})
	}
	return out
}

// Two gap lines before one sample are one gap (the store's samples not
// written and the sampler's lateness, say).
func TestGapMerge(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := &Gap{Start: t0.Add(3 * time.Second), End: t0.Add(7 * time.Second), Missed: 3, Reason: "no space left on device"}
	g.merge(&Gap{Start: t0.Add(6 * time.Second), End: t0.Add(7 * time.Second), Late: 700 * time.Millisecond, Reason: GapLate})
	if !g.Start.Equal(t0.Add(3*time.Second)) || g.Missed != 3 || g.Late != 700*time.Millisecond || g.Reason != "no space left on device; late" || g.Unseen(time.Second) != 3*time.Second {
		t.Errorf("merged %+v", g)
	}
}

// A segment is written under a temporary name and appears at its own
// name only with its header and first sample in it: a reader listing the
// store never meets it empty. A temporary file a killed recorder left is
// replaced; a file already at the name is never overwritten, and no
// temporary file is left then.
func TestCreateSegmentAppearsWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memdiag-20261206T150000Z.jsonl.gz")
	if err := os.WriteFile(SegmentTemp(path), []byte("left by a killed recorder"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := CreateSegment(path)
	if err := w.WriteHeader(&Header{Host: "h"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the segment exists before its first sample: %v", err)
	}
	if err := w.WriteSample(&Sample{Time: time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != filepath.Base(path) {
		t.Fatalf("after the first sample the directory holds %v; want the segment alone", ents)
	}
	rec, err := ReadAll(mustOpen(t, path), path)
	if err != nil || len(rec.Samples) != 1 || rec.Header.Host != "h" {
		t.Fatalf("the segment as a live reader sees it: %v, %+v", err, rec)
	}
	if err := w.Close("duration"); err != nil {
		t.Fatal(err)
	}

	taken := filepath.Join(dir, "memdiag-20261206T151000Z.jsonl.gz")
	if err := os.WriteFile(taken, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	w2 := CreateSegment(taken)
	_ = w2.WriteHeader(&Header{Host: "h"})
	if err := w2.WriteSample(&Sample{Time: time.Date(2026, 12, 6, 15, 10, 0, 0, time.UTC)}); !errors.Is(err, ErrExists) {
		t.Errorf("first sample to a taken name: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(taken); string(b) != "someone else's" {
		t.Errorf("the file at the taken name was changed: %q", b)
	}
	if _, err := os.Stat(SegmentTemp(taken)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a temporary file is left: %v", err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
