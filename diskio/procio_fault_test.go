package diskio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/process"
)

// TestScanFaults (issue 29): a per-process file that is there but
// unusable — a malformed /proc/PID/io, a FIFO at /proc/PID/stat (a --root
// tree) — leaves its process out of that scan, is counted in
// ScanStats.Failed, and is named, with its line, by Fault; the other
// processes are scanned as usual, and a scan without one has no Fault.
// Before, the scan skipped them without a word.
func TestScanFaults(t *testing.T) {
	dir := t.TempDir()
	writeProc(t, dir, 100, 1, 500, "good", 4096, 0)
	writeProc(t, dir, 200, 1, 600, "badio", 4096, 0)
	io200 := filepath.Join(dir, "200", "io")
	if err := os.WriteFile(io200, []byte("rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: x\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := newProcLink(t, dir)
	s := mustScanner(t, link.root, ProcScanOptions{TopN: 10})

	_, _, st := scan(t, s, t0)
	if diff := cmp.Diff(ScanStats{Processes: 2, Failed: 1}, st); diff != "" {
		t.Errorf("malformed io: stats (-want +got):\n%s", diff)
	}
	var fe *process.FaultError
	if err := s.Fault(); !errors.As(err, &fe) || fe.N != 1 || !errors.Is(err, process.ErrParse) ||
		fe.First.Error() != link.root+`/200/io:5: malformed line: read_bytes "x"` {
		t.Errorf("malformed io: Fault() = %v", err)
	}

	// 200's io is mended and its stat becomes a FIFO; 100 reads 8 KiB.
	writeProc(t, dir, 200, 1, 600, "badio", 4096, 0)
	writeProc(t, dir, 100, 1, 500, "good", 4096+8192, 0)
	stat200 := filepath.Join(dir, "200", "stat")
	os.Remove(stat200)
	if err := syscall.Mkfifo(stat200, 0o600); err != nil {
		t.Fatal(err)
	}
	top, _, st := scan(t, s, t0.Add(1e9))
	if diff := cmp.Diff(ScanStats{Processes: 2, Failed: 1}, st); diff != "" {
		t.Errorf("FIFO stat: stats (-want +got):\n%s", diff)
	}
	if err := s.Fault(); err == nil || !errors.As(err, &fe) || fe.N != 1 ||
		fe.First.Error() != "read "+link.root+"/200/stat: not a regular file" {
		t.Errorf("FIFO stat: Fault() = %v", err)
	}
	if len(top) != 1 || top[0].PID != 100 || top[0].DeltaReadBytes != 8192 {
		t.Errorf("FIFO stat: top = %+v; want PID 100 and its 8 KiB, one bad process stops no other", top)
	}

	os.Remove(stat200)
	writeProc(t, dir, 200, 1, 600, "badio", 4096, 0) // a regular stat again
	if _, _, st = scan(t, s, t0.Add(2e9)); st.Failed != 0 || s.Fault() != nil {
		t.Errorf("all files good: stats %+v, Fault() = %v", st, s.Fault())
	}
}

// TestScanFaultsNotVanishedOrDenied: a process that exits while read
// and another user's io are no fault (TestScanVanished, TestScanDenied
// count them).
func TestScanFaultsNotVanishedOrDenied(t *testing.T) {
	dir := t.TempDir()
	writeProc(t, dir, 100, 1, 500, "a", 4096, 0)
	writeProc(t, dir, 200, 1, 600, "b", 4096, 0)
	writeProc(t, dir, 300, 1, 700, "c", 4096, 0)
	os.Remove(filepath.Join(dir, "300", "stat"))
	link := newProcLink(t, dir)
	s := mustScanner(t, link.root, ProcScanOptions{})
	s.readFile = failing(syscall.EACCES, "/100/io")
	base := s.readFile
	s.readFile = func(dirfd int, path, buf []byte) (int, error) {
		if string(path) == "200/stat\x00" {
			return 0, syscall.ESRCH
		}
		return base(dirfd, path, buf)
	}
	_, _, st := scan(t, s, t0)
	if diff := cmp.Diff(ScanStats{Processes: 3, Denied: 1, Vanished: 2}, st); diff != "" || s.Fault() != nil {
		t.Errorf("stats (-want +got):\n%s\nFault() = %v", diff, s.Fault())
	}
}
