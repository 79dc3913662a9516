package diskio

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestScanFixtureJailed scans a fixture proc root (not a procfs mount)
// holding the real python3 writer of testdata/diskio/poll (PID 15706), a
// PID folder that is a link to this host's /proc/self, and a process
// whose stat is a FIFO and whose io is a link to /dev/zero. Only 15706 is
// listed: the link's target is resolved inside the root (it does not
// exist there) and the FIFO and device are refused without blocking.
// Before, the linked folder gave this test process's own counters as
// PID 5's.
func TestScanFixtureJailed(t *testing.T) {
	proc := filepath.Join(t.TempDir(), "proc")
	if err := os.CopyFS(filepath.Join(proc, "15706"), os.DirFS(filepath.Join("..", "testdata", "diskio", "poll", "t0", "proc", "15706"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self", filepath.Join(proc, "5")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(proc, "6")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(bad, "stat"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(bad, "io")); err != nil {
		t.Fatal(err)
	}
	s, err := NewProcScanner(proc, ProcScanOptions{TopN: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 2 {
		if _, _, _, err := s.Scan(now.Add(time.Duration(i) * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	var pids []int
	for pid := range s.procs {
		pids = append(pids, pid)
	}
	if len(pids) != 1 || pids[0] != 15706 {
		t.Errorf("processes followed: %v; want [15706] only", pids)
	}
}
