package chain

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/internal/testenv"
	"github.com/memdiag/memdiag/record"
)

const mib = 1 << 20

// TestMain lets the test binary be its own reader child:
// CHAIN_TEST_READ=buffered|direct:PATH reads PATH to its end.
func TestMain(m *testing.M) {
	if v := os.Getenv("CHAIN_TEST_READ"); v != "" {
		if err := readFile(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func readFile(spec string) error {
	mode, path := spec[:len("direct")], ""
	if spec[:len("buffered")] == "buffered" {
		mode, path = "buffered", spec[len("buffered:"):]
	} else {
		path = spec[len("direct:"):]
	}
	flags := os.O_RDONLY
	if mode == "direct" {
		flags |= unix.O_DIRECT
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// O_DIRECT wants an aligned buffer: an anonymous mapping is page-aligned.
	buf, err := unix.Mmap(-1, 0, mib, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	for {
		_, err := f.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// coldFile writes size bytes to a file in dir and drops it from the page
// cache (fsync, then POSIX_FADV_DONTNEED), so a read must add every page.
func coldFile(t *testing.T, dir string, size int) string {
	t.Helper()
	p := filepath.Join(dir, "data")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, mib)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for range size / mib {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	return p
}

func openForTest(t *testing.T) *Collector {
	t.Helper()
	c, err := Open(Options{MaxRows: 1000})
	if err != nil {
		testenv.Unmet(t, err.Error())
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func fill(t *testing.T, c *Collector) *record.Chain {
	t.Helper()
	var s record.Sample
	if err := c.Fill(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	return s.Chain
}

func reader(mode, path string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CHAIN_TEST_READ="+mode+":"+path)
	cmd.Stderr = os.Stderr
	return cmd
}

func addedBy(ch *record.Chain, pid int) (sum uint64) {
	for _, a := range ch.Adds {
		if a.PID == pid {
			sum += a.Bytes
		}
	}
	return sum
}

// TestAddsBufferedAndDirect: a buffered read of a cold 64 MiB file adds
// its pages to the page cache under the reader's PID; an O_DIRECT read
// of the same file adds none.
func TestAddsBufferedAndDirect(t *testing.T) {
	testenv.RequireRoot(t, "loading eBPF programs")
	c := openForTest(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		mode     string
		min, max uint64
	}{
		{"buffered", 60 * mib, 1 << 40},
		{"direct", 0, mib - 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p := coldFile(t, dir, 64*mib)
			fill(t, c) // what came before
			cmd := reader(tc.mode, p)
			if err := cmd.Run(); err != nil {
				t.Fatalf("reader: %v", err)
			}
			ch := fill(t, c)
			got := addedBy(ch, cmd.Process.Pid)
			t.Logf("%s reader (PID %d) added %d bytes", tc.mode, cmd.Process.Pid, got)
			if got < tc.min || got > tc.max {
				t.Errorf("%s reader added %d bytes to the page cache, want %d..%d", tc.mode, got, tc.min, tc.max)
			}
			for _, a := range ch.Adds {
				if a.PID == cmd.Process.Pid && a.Comm != "chain.test" {
					t.Errorf("comm %q, want chain.test", a.Comm)
				}
			}
		})
	}
}

// TestMemcgLimitReclaim: a process reading 256 MiB in a v1 memory cgroup
// limited to 64 MiB reclaims its own group's file pages (memcg reclaim),
// and stalls doing it.
func TestMemcgLimitReclaim(t *testing.T) {
	testenv.RequireRoot(t, "loading eBPF programs and creating a memory cgroup")
	testenv.Exclusive(t)
	c := openForTest(t)
	p := coldFile(t, t.TempDir(), 256*mib)
	name := "memdiag-chain-test-" + strconv.Itoa(os.Getpid())
	cg := testenv.NewCgroup(t, name, 64*mib)
	fill(t, c)
	cmd := cg.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CHAIN_TEST_READ=buffered:"+p)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("reader: %v", err)
	}
	pid := cmd.Process.Pid
	ch := fill(t, c)
	t.Logf("reader PID %d ran %v; dropped %d", pid, time.Since(start), ch.Dropped)
	want := "/" + name
	var evicted uint64
	for _, e := range ch.Evictions {
		if e.PID == pid {
			t.Logf("eviction %+v", e)
			if e.Reclaimer != record.ReclaimMemcg || e.Memcg != want || e.ReclMemcg != want {
				t.Errorf("eviction by the reader %+v: want reclaimer %q, memcg and recl_memcg %q", e, record.ReclaimMemcg, want)
			}
			evicted += e.Bytes
		}
	}
	// 256 MiB through a 64 MiB limit: at least 150 MiB must go.
	if evicted < 150*mib {
		t.Errorf("reader evicted %d bytes of its group's pages, want >= 150 MiB", evicted)
	}
	var stall time.Duration
	for _, s := range ch.Stalls {
		if s.PID == pid {
			t.Logf("stall %+v", s)
			if s.Memcg != want {
				t.Errorf("stall memcg %q, want %q", s.Memcg, want)
			}
			stall += s.Limit
		}
	}
	if stall <= 0 {
		t.Errorf("reader's memcg reclaim stall is %v, want > 0", stall)
	}
	if got := addedBy(ch, pid); got < 250*mib {
		t.Errorf("reader added %d bytes, want >= 250 MiB", got)
	}
	// Its group's limit is recorded beside the chain: it can never hold
	// more than 64 MiB however much it added.
	if !slices.Contains(ch.Limits, record.MemoryLimit{Group: want, Bytes: 64 * mib}) {
		t.Errorf("limits %+v; want %s at 64 MiB", ch.Limits, want)
	}
}
