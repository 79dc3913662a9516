package sources

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/procevents"
	"github.com/memdiag/memdiag/record"
)

// threadsPy is a threaded process as a server is one: three threads
// each write 4 MiB (fsync'd) and exit while the main thread lives on;
// then two more threads write 2 MiB each and are still running when the
// main thread ends the process (os._exit: exit_group kills them).
const threadsPy = `import os, sys, threading, time
d = sys.argv[1]
def wait(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.02)
def write(name, n):
    with open(os.path.join(d, name), "wb") as f:
        f.write(b"\0" * n)
        f.flush()
        os.fsync(f.fileno())
wait("go0")
ts = [threading.Thread(target=write, args=("t%d" % i, 4 << 20)) for i in range(3)]
for t in ts: t.start()
for t in ts: t.join()
open(os.path.join(d, "joined"), "w").close()
wait("go1")
done, hold = threading.Semaphore(0), threading.Event()
def write2(i):
    write("u%d" % i, 2 << 20)
    done.release()
    hold.wait()
for i in range(2):
    threading.Thread(target=write2, args=(i,), daemon=True).start()
done.acquire(); done.acquire()
os._exit(0)
`

// TestThreadedProcessIOCountedOnce records a real threaded python3
// through the process-events listener (taskstats) and the scanner, as
// watch does, and checks what the recording holds: the 12 MiB its
// exited threads wrote are its own I/O in its row (not reaped
// children's), its exit record holds all five threads' 16 MiB (threads
// that ended before it and those exit_group killed), the part of it
// past its last row is the 4 MiB written after that row — so the
// recording counts 16 MiB once — and its parent, this test, is not
// charged with it when it reaps it.
func TestThreadedProcessIOCountedOnce(t *testing.T) {
	testenv.RequireRoot(t, "the process-events connector and taskstats (CAP_NET_ADMIN)")
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		testenv.Unmet(t, "/usr/bin/python3 missing: apt-get install python3-minimal")
	}
	// /var/tmp, not t.TempDir(): /tmp may be tmpfs, which has no
	// write_bytes accounting.
	dir, err := os.MkdirTemp("/var/tmp", "memdiag-threads-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := procevents.Open(procevents.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.Start(ctx)
	t.Cleanup(func() { cancel(); l.Close(); l.Wait() })
	ps, err := diskio.NewProcScanner("/proc", diskio.ProcScanOptions{TopN: 100000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	src := Procs{Scanner: ps, Events: l}
	if _, _, _, err := ps.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	fill := func() *record.Sample {
		t.Helper()
		s := &record.Sample{Time: time.Now()}
		if err := src.Fill(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	waitFor := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("python3 did not write %s in 20 s", name)
			}
		}
	}

	cmd := exec.Command(py, "-c", threadsPy, dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	time.Sleep(300 * time.Millisecond) // started, imports read
	fill()
	touch := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch("go0")
	waitFor("joined")
	time.Sleep(100 * time.Millisecond) // the threads' exits are in signal->ioac
	s2 := fill()
	var row *record.ProcIO
	for i := range s2.Procs {
		if s2.Procs[i].PID == pid {
			row = &s2.Procs[i]
		}
	}
	const mib = 1 << 20
	// fsync may add a few journal pages; taskstats rounds each task's
	// counters down to KiB (kernel/tsacct.c xacct_add_tsk, KB_MASK).
	const slack = 256 << 10
	if row == nil || row.DeltaWriteBytes < 12*mib || row.DeltaWriteBytes > 12*mib+slack ||
		row.DeltaReapedWriteBytes != 0 || row.WriteBytes < 12*mib || row.WriteBytes > 12*mib+slack {
		if row != nil {
			t.Fatalf("python3 %d after its 3 threads wrote 12 MiB and exited: d_write_bytes %d, write_bytes %d, d_reaped_write_bytes %d; want 12 MiB, 12 MiB, 0",
				pid, row.DeltaWriteBytes, row.WriteBytes, row.DeltaReapedWriteBytes)
		}
		t.Fatalf("python3 %d after its 3 threads wrote 12 MiB and exited: no row", pid)
	}
	touch("go1")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("python3: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // every thread's taskstats record is read
	var exit *record.Event
	var after []record.ProcIO // rows of the samples from its exit on
	for deadline := time.Now().Add(10 * time.Second); exit == nil && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		s := fill()
		after = append(after, s.Procs...)
		for i := range s.Events {
			if e := s.Events[i]; e.PID == pid && e.Kind == "exit" {
				exit = &e
			}
		}
	}
	if exit == nil || exit.Source != "taskstats" {
		t.Fatalf("no taskstats exit of python3 %d within 10 s: %+v", pid, exit)
	}
	t.Logf("python3 %d: row at 12 MiB: %d written; exit record: %d written", pid, row.WriteBytes, exit.WriteBytes)
	if exit.WriteBytes < 16*mib-8<<10 || exit.WriteBytes > 16*mib+slack {
		t.Errorf("exit record of python3 holds %d bytes written; want its 5 threads' 16 MiB", exit.WriteBytes)
	}
	// What analyze counts: the rows' deltas, then of the exit only what
	// no row held.
	counted := row.DeltaWriteBytes + exit.WriteBytes - min(exit.WriteBytes, row.WriteBytes)
	if counted < 16*mib-8<<10 || counted > 16*mib+slack {
		t.Errorf("python3's writes counted %d; want 16 MiB once", counted)
	}
	for _, p := range after {
		if p.PID == os.Getpid() && p.DeltaWriteBytes+p.DeltaReapedWriteBytes >= mib {
			t.Errorf("the test process, which reaped python3, charged with %+v", p)
		}
	}
}
