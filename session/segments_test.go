package session

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/store"
	"github.com/memdiag/memdiag/timers"
)

// disk is a store directory on a simulated file system of capacity
// bytes (0: unbounded) that may refuse new files (ro), as a full or
// read-only disk does: a write past the capacity writes what fits and
// fails with ENOSPC, as write(2) does.
type disk struct {
	dir      string
	capacity int64
	ro       bool
}

func (d *disk) used() int64 {
	ents, _ := os.ReadDir(d.dir)
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func (d *disk) create(path string) *record.Writer {
	return record.CreateSegmentWith(path, func() (record.File, error) {
		if d.ro {
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EROFS}
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		return &diskFile{File: f, d: d}, nil
	})
}

type diskFile struct {
	*os.File
	d *disk
}

func (f *diskFile) Write(b []byte) (int, error) {
	room := f.d.capacity - f.d.used()
	if f.d.capacity <= 0 || int64(len(b)) <= room {
		return f.File.Write(b)
	}
	n, _ := f.File.Write(b[:max(room, 0)])
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

var segT0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

// openStore opens a store of 10 s segments on d, its log in log.
func openStore(t *testing.T, d *disk, ret store.Retention, log *bytes.Buffer) *Segments {
	t.Helper()
	sg, err := OpenStore(d.dir, 10*time.Second, ret, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sg.Unlock)
	sg.create = d.create
	if err := sg.WriteHeader(&record.Header{Host: "h", Interval: time.Second, PageSize: 4096}); err != nil {
		t.Fatal(err)
	}
	return sg
}

// put writes the samples at seconds from..to after segT0.
func put(t *testing.T, sg *Segments, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		n := uint64(100 * i)
		if err := sg.WriteSample(&record.Sample{Seq: i, Time: segT0.Add(time.Duration(i) * time.Second), VMStat: &record.VMStat{Pgmajfault: &n}}); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
	}
}

// readStore reads the whole store as analyze does, and returns the
// samples' seq numbers and the notes.
func readStore(t *testing.T, dir string) (string, []string, *record.End) {
	t.Helper()
	segs, err := store.Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.Size == 0 {
			t.Errorf("empty segment %s", s.Path)
		}
	}
	j, err := store.Join(segs, store.Window{})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	rec, err := j.Each(context.Background(), func(s *record.Sample) { seqs = append(seqs, s.Seq) })
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(seqs), rec.Warnings, rec.End
}

// gapLines returns the store's gap lines, "SEGMENT:LINE: START..END
// missed N: REASON" each, joined by "; ".
func gapLines(t *testing.T, dir string) string {
	t.Helper()
	segs, err := store.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sg := range segs {
		f, err := os.Open(sg.Path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		for n := 1; sc.Scan(); n++ {
			if !strings.HasPrefix(sc.Text(), `{"type":"gap"`) {
				continue
			}
			var g record.Gap
			if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s:%d: %s..%s missed %d: %s", filepath.Base(sg.Path), n, g.Start.Format("15:04:05"), g.End.Format("15:04:05"), g.Missed, g.Reason))
		}
		f.Close()
	}
	return strings.Join(out, "; ")
}

// A full disk: the sample being written waits, the ones after it are
// counted, the store stays readable (its live segment up to the last
// whole sample), and once there is room again the waiting sample, a gap
// line and the next samples are written — across a segment switch that
// fell while the disk was full.
func TestSegmentsFullDisk(t *testing.T) {
	d := &disk{dir: t.TempDir()}
	var log bytes.Buffer
	sg := openStore(t, d, store.Retention{}, &log)
	put(t, sg, 0, 7)
	d.capacity = d.used() // full
	put(t, sg, 8, 12)     // 8 waits; 9..12 are not written; the switch at 10 waits too
	seqs, notes, end := readStore(t, d.dir)
	if seqs != "[0 1 2 3 4 5 6 7]" || end == nil || end.Reason != store.ReasonLive {
		t.Errorf("while full: samples %s, end %+v, notes %q", seqs, end, notes)
	}
	if sg.Unwritten() != 4 {
		t.Errorf("Unwritten() = %d, want 4", sg.Unwritten())
	}
	d.capacity = 0 // room again
	put(t, sg, 13, 14)
	if err := sg.Close("signal: SIGTERM"); err != nil {
		t.Fatal(err)
	}
	seqs, notes, end = readStore(t, d.dir)
	if seqs != "[0 1 2 3 4 5 6 7 8 13 14]" || end == nil || end.Reason != "signal: SIGTERM" {
		t.Errorf("after: samples %s, end %+v", seqs, end)
	}
	// sample 8 was written late; 9..12 are the gap, before 13
	if got := gapLines(t, d.dir); got != "memdiag-20261201T060000Z.jsonl.gz:11: 06:00:08..06:00:13 missed 4: no space left on device" {
		t.Errorf("gap lines %q; notes %q", got, notes)
	}
	segs, _ := store.List(d.dir)
	if len(segs) != 2 || !segs[1].Start.Equal(segT0.Add(13*time.Second)) {
		t.Errorf("segments %+v, want the second from 06:00:13 (the first sample after the switch)", segs)
	}
	for _, want := range []string{
		"memdiag: warning: record: cannot write " + filepath.Join(d.dir, "memdiag-20261201T060000Z.jsonl.gz") + ": no space left on device; recording goes on",
		"memdiag: record: writing again to memdiag-20261201T060000Z.jsonl.gz: 4 samples from 2026-12-01T06:00:09.000Z to 2026-12-01T06:00:12.000Z not written (no space left on device), recorded as a gap",
		"memdiag: record: time: writing memdiag-20261201T060013Z.jsonl.gz",
		"memdiag: record: stopped (signal: SIGTERM); last segment " + filepath.Join(d.dir, "memdiag-20261201T060013Z.jsonl.gz") + ": 2 samples; 4 samples not written since 2026-12-01T06:00:09.000Z (no space left on device)",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// On a full disk retention runs at once: a segment it may remove frees
// the room, and no sample is lost.
func TestSegmentsFullDiskRetentionFirst(t *testing.T) {
	d := &disk{dir: t.TempDir()}
	// an old segment of 5000 bytes, over the 5050 bytes the store may hold
	// once the live one grows
	old := filepath.Join(d.dir, "memdiag-20261130T060000Z.jsonl.gz")
	if err := os.WriteFile(old, bytes.Repeat([]byte{1}, 5000), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	sg := openStore(t, d, store.Retention{MaxBytes: 5050}, &log)
	put(t, sg, 0, 3)
	d.capacity = d.used()
	put(t, sg, 4, 6)
	if err := sg.Close("duration"); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if _, err := os.Stat(old); err == nil {
		t.Fatal("the old segment is still there")
	}
	seqs, notes, _ := readStore(t, d.dir)
	if seqs != "[0 1 2 3 4 5 6]" || sg.Unwritten() != 0 || gapLines(t, d.dir) != "" {
		t.Errorf("samples %s, unwritten %d, notes %q", seqs, sg.Unwritten(), notes)
	}
	if !strings.Contains(log.String(), "memdiag: record: removed memdiag-20261130T060000Z.jsonl.gz (4.9 KiB, store over 4.9 KiB)") {
		t.Errorf("log:\n%s", log.String())
	}
}

// A store that refuses new files (read-only) when a segment starts: no
// file is left for it, the samples are counted, and the segment is
// created, starting with the sample that waited, when it can be.
func TestSegmentsReadOnlyAtSwitch(t *testing.T) {
	d := &disk{dir: t.TempDir()}
	var log bytes.Buffer
	sg := openStore(t, d, store.Retention{}, &log)
	put(t, sg, 0, 9)
	d.ro = true
	put(t, sg, 10, 12) // 10 ends the first segment and waits to start the second
	segs, _ := store.List(d.dir)
	if len(segs) != 1 {
		t.Fatalf("segments while read-only: %+v", segs)
	}
	d.ro = false
	put(t, sg, 13, 13)
	if err := sg.Close("duration"); err != nil {
		t.Fatal(err)
	}
	seqs, notes, _ := readStore(t, d.dir)
	if seqs != "[0 1 2 3 4 5 6 7 8 9 10 13]" {
		t.Errorf("samples %s", seqs)
	}
	if got := gapLines(t, d.dir); got != "memdiag-20261201T060010Z.jsonl.gz:3: 06:00:10..06:00:13 missed 2: read-only file system" {
		t.Errorf("gap lines %q; notes %q\nlog:\n%s", got, notes, log.String())
	}
}

// The store directory removed while recording is created again, locked
// again, and recording goes on in a new segment.
func TestSegmentsStoreRemoved(t *testing.T) {
	d := &disk{dir: filepath.Join(t.TempDir(), "st")}
	var log bytes.Buffer
	sg := openStore(t, d, store.Retention{}, &log)
	put(t, sg, 0, 3)
	if err := os.RemoveAll(d.dir); err != nil {
		t.Fatal(err)
	}
	put(t, sg, 4, 6)
	if !store.Held(d.dir) {
		t.Error("the store created again is not locked")
	}
	if err := sg.Close("duration"); err != nil {
		t.Fatal(err)
	}
	seqs, _, end := readStore(t, d.dir)
	if seqs != "[4 5 6]" || end == nil || end.Reason != "duration" {
		t.Errorf("samples %s, end %+v", seqs, end)
	}
	for _, want := range []string{
		"memdiag: warning: record: memdiag-20261201T060000Z.jsonl.gz was removed while being written (its 4 samples with it); a new segment starts",
		"memdiag: warning: record: the store " + d.dir + " was removed while recording; created again",
		"memdiag: record: segment removed: writing memdiag-20261201T060004Z.jsonl.gz",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// Segments without a sample, left by older versions on a full disk, are
// removed when the recorder starts.
func TestOpenStoreRemovesEmptySegments(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"memdiag-20261201T060000Z.jsonl.gz", "memdiag-20261201T060005Z.jsonl.gz"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	sg, err := OpenStore(dir, 10*time.Second, store.Retention{}, &log)
	if err != nil {
		t.Fatal(err)
	}
	sg.Unlock()
	if segs, _ := store.List(dir); len(segs) != 0 {
		t.Errorf("segments left: %+v", segs)
	}
	if want := "memdiag: record: removed memdiag-20261201T060005Z.jsonl.gz: it holds no sample (0 bytes; a recorder stopped before its first sample was written)"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
}

// TestReopenOn: a receive on the channel asks for a new segment, as
// SIGHUP does; a nil channel starts nothing.
func TestReopenOn(t *testing.T) {
	var r Segments
	r.ReopenOn(context.Background(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan struct{})
	r.ReopenOn(ctx, ch)
	ch <- struct{}{}
	ch <- struct{}{} // taken only once the first one's Reopen returned
	if !r.hup.Load() {
		t.Error("no new segment asked for after a receive")
	}
}

// The next segment's job inventory is read off the sampling path: a
// slow read neither delays the switch nor the samples (the segment keeps
// the last one's jobs), a finished one is the next segment's, and a
// reopen (SIGHUP) waits for its inventory, not the sampler for it.
func TestSegmentsJobsOffTheSamplingPath(t *testing.T) {
	var log bytes.Buffer
	d := &disk{dir: t.TempDir()}
	sg := openStore(t, d, store.Retention{}, &log)
	sg.opts = &Options{}
	// Each read is the function set when it was asked for (askJobs
	// takes it then), named by what it returns.
	release := make(chan struct{})
	sg.hostJobs = func(string, bool) ([]timers.Job, error) {
		<-release // the first read is slow
		return []timers.Job{{Name: "read1.timer", Source: timers.Systemd}}, nil
	}
	put(t, sg, 0, 10) // asked at 5 s, still reading at the switch at 10 s
	if sg.jobs != nil {
		t.Fatal("the switch kept the slow read for the new segment")
	}
	close(release)
	sg.hostJobs = func(string, bool) ([]timers.Job, error) {
		return []timers.Job{{Name: "read2.timer", Source: timers.Systemd}}, nil
	}
	put(t, sg, 11, 15) // asked again at 15 s
	<-sg.jobs.done
	put(t, sg, 16, 20) // switch at 20 s with read2's jobs
	sg.Reopen()
	reread := make(chan struct{})
	sg.hostJobs = func(string, bool) ([]timers.Job, error) {
		<-reread
		return []timers.Job{{Name: "reread.timer", Source: timers.Systemd}}, nil
	}
	put(t, sg, 21, 21) // the reopen asks; it waits for the read
	close(reread)
	<-sg.jobs.done
	put(t, sg, 22, 23) // switches at 22 s
	if err := sg.Close("test"); err != nil {
		t.Fatal(err)
	}
	segs, err := store.List(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range segs {
		rd, err := record.Open(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range rd.Header().Jobs {
			names = append(names, j.Name)
		}
		rd.Close()
		got = append(got, fmt.Sprintf("%s %v", rd.Header().Start.Format("15:04:05"), names))
	}
	want := "[06:00:00 [] 06:00:10 [] 06:00:20 [read2.timer] 06:00:22 [reread.timer]]"
	if fmt.Sprint(got) != want {
		t.Errorf("segments' starts and jobs %v, want %s\n%s", got, want, log.String())
	}
	if seqs, _, _ := readStore(t, d.dir); seqs != fmt.Sprint(seqRange(0, 23)) {
		t.Errorf("samples %s; want 0..23, none delayed out", seqs)
	}
}

func seqRange(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// A segment left under its temporary name (a recorder killed between
// creating it and its first write) is removed at the next start, and
// said.
func TestOpenStoreRemovesTemporarySegments(t *testing.T) {
	dir := t.TempDir()
	tmp := record.SegmentTemp(filepath.Join(dir, "memdiag-20261201T060005Z.jsonl.gz"))
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	sg, err := OpenStore(dir, 10*time.Second, store.Retention{}, &log)
	if err != nil {
		t.Fatal(err)
	}
	sg.Unlock()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary segment left: %v", err)
	}
	if want := "memdiag: record: removed .memdiag-20261201T060005Z.jsonl.gz.new: a segment a stopped recorder had not written its first sample to"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
}
