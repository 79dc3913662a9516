package diskio

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestScanLiveReapedChildUnseen runs, on the real kernel, a shell that
// starts dd (16 MiB written with O_DIRECT, so write_bytes is exactly the
// data), waits for it, and sleeps. The scanner looks before dd starts and
// after the shell reaped it: it never sees dd. The kernel then shows dd's
// 16 MiB in the shell's /proc/PID/io (kernel/exit.c wait_task_zombie()
// adds the child's ioac to the parent's signal->ioac), but not in the
// shell's own thread, /proc/PID/task/PID/io. The shell must not be
// charged with dd's writes; they are reported as reaped, not attributed.
// Needs no root: the shell is this test's own child.
func TestScanLiveReapedChildUnseen(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skip("no dd")
	}
	// /var/tmp, not t.TempDir(): /tmp may be tmpfs, which has no
	// write_bytes accounting and no O_DIRECT.
	dir, err := os.MkdirTemp("/var/tmp", "memdiag-diskio-reap-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := filepath.Join(dir, "out")
	done := filepath.Join(dir, "done")

	s, err := NewProcScanner("/proc", ProcScanOptions{TopN: 100000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// The shell waits for "go", runs dd, then says "done" and sleeps, so
	// both scans see it alive and neither sees dd.
	gofile := filepath.Join(dir, "go")
	sh := exec.Command("sh", "-c", `while [ ! -e "$1" ]; do sleep 0.05; done
dd if=/dev/zero of="$2" bs=1M count=16 oflag=direct status=none || exit 3
: > "$3"; sleep 30`, "sh", gofile, f, done)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	pid := sh.Process.Pid
	if _, _, _, err := s.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gofile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A hang bound, not a timing: dd shares the test's CPU and I/O
	// priority, and CI's fresh clone as nobody runs at SCHED_IDLE and in
	// the idle I/O class (ionice -c 3) beside a suite that writes.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dd did not finish in 2 min")
		}
	}
	whole := readIOFile(t, filepath.Join("/proc", itoa(pid), "io"))
	own := readIOFile(t, filepath.Join("/proc", itoa(pid), "task", itoa(pid), "io"))
	t.Logf("shell %d after reaping dd: /proc/PID/io write_bytes %d, task/PID/io write_bytes %d", pid, whole, own)
	if whole < 16<<20 {
		t.Skipf("the shell's write_bytes is %d after dd wrote 16 MiB: no block-layer write accounting on %s", whole, dir)
	}
	top, _, stats, err := s.Scan(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var p *ProcIO
	for i := range top {
		if top[i].PID == pid {
			p = &top[i]
		}
	}
	if p != nil && p.DeltaWriteBytes >= 1<<20 {
		t.Errorf("shell %d charged with %d bytes written in the interval; it wrote %d itself, dd wrote the rest", pid, p.DeltaWriteBytes, own)
	}
	if p == nil || p.DeltaReapedWriteBytes < 16<<20 || p.DeltaReapedWriteBytes > 16<<20+1<<20 {
		t.Errorf("shell's row %+v: want DeltaReapedWriteBytes 16 MiB (+ < 1 MiB metadata), dd's, reaped unseen", p)
	}
	if stats.ReapedWriteBytes < 16<<20 {
		t.Errorf("stats.ReapedWriteBytes = %d, want >= 16 MiB", stats.ReapedWriteBytes)
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

// readIOFile returns write_bytes of a /proc io file.
func readIOFile(t *testing.T, path string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, wr, _, ok := parseIO(b)
	if !ok {
		t.Fatalf("%s: not an io file: %q", path, b)
	}
	return wr
}
