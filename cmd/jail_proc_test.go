package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testenv"
)

// procJailPaths are the /proc, /sys and /dev files mem and watch read under
// --root (found with strace -e openat on both commands over this
// fixture), and whether a bad one is named in the output: the optional
// host facts (boot time, host name, kernel release, a process's cgroup)
// are left out quietly instead.
var procJailPaths = []struct {
	rel   string
	named bool
}{
	{"proc/meminfo", true},
	{"proc/vmstat", true},
	{"proc/pressure/memory", true},
	{"proc/pressure/io", true},
	{"proc/pressure/cpu", true},
	{"proc/diskstats", true},
	{"proc/swaps", true},
	{"proc/stat", false},
	{"proc/sys/kernel/osrelease", false},
	{"proc/sys/kernel/hostname", false},
	{"proc/sys/kernel/task_delayacct", false},
	{"proc/1/cgroup", false},
	{"proc/1/status", false},
	{"proc/1/stat", false},
	{"proc/1/cmdline", false},
	{"proc/1/smaps_rollup", false},
	{"proc/1/maps", false},
	{"proc/1/environ", false},
	{"proc/1/exe", false},
	{"dev/kmsg", false},
	{"proc/self/mountinfo", false},
	{"sys/devices/system/cpu/online", false},
}

// TestProcRootJail puts a FIFO, then a link to /dev/zero, at each file of
// procJailPaths in a copy of the linux-6.18 fixture root and runs `mem`
// and `watch` on it. Each run ends (mem by itself; watch, given a minute,
// on SIGINT sent once it has started), its peak RSS stays under 200 MiB,
// and where the file is not optional the output names it. Before the jail
// a FIFO at proc/meminfo hung both past SIGINT, and /dev/zero at
// proc/sys/kernel/osrelease read gigabytes.
func TestProcRootJail(t *testing.T) {
	t.Parallel() // its own binaries and files: beside the others
	bin := buildJailBins(t)
	for _, p := range procJailPaths {
		for _, kind := range []string{"fifo", "dev-zero"} {
			t.Run(strings.ReplaceAll(p.rel, "/", "_")+"/"+kind, func(t *testing.T) {
				t.Parallel() // its own root copy, binaries' runs and files
				root := procJailRoot(t)
				f := filepath.Join(root, p.rel)
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				_ = os.Remove(f)
				var err error
				if kind == "fifo" {
					err = syscall.Mkfifo(f, 0o600)
				} else {
					err = os.Symlink("/dev/zero", f)
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, args := range [][]string{
					{"mem"},
					{"watch", "--duration", "1m", "--interval", "100ms", "--no-timers", "-q", "--force", "--out", filepath.Join(t.TempDir(), "w.jsonl")},
				} {
					out, rss := runJailed(t, bin, root, args[0] == "watch", args...)
					t.Logf("%s: peak RSS %d MiB", args[0], rss>>20)
					if rss > 200<<20 {
						t.Errorf("%s: peak RSS %d MiB, want under 200", args[0], rss>>20)
					}
					if p.named && !strings.Contains(out, p.rel) {
						if args[0] == "mem" && !strings.HasPrefix(p.rel, "proc/meminfo") && !strings.HasPrefix(p.rel, "proc/vmstat") && p.rel != "proc/pressure/memory" {
							continue // mem does not read it
						}
						t.Errorf("%s: output does not name %s:\n%s", args[0], p.rel, out)
					}
				}
			})
		}
	}
}

// procJailRoot copies testdata/linux-6.18 into a temporary root and adds
// the other files memdiag reads there.
func procJailRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "testdata", "linux-6.18"))); err != nil {
		t.Fatal(err)
	}
	for rel, text := range map[string]string{
		"proc/stat":                      "btime 1764900000\n",
		"proc/sys/kernel/osrelease":      "6.18.0\n",
		"proc/sys/kernel/hostname":       "fixture\n",
		"proc/sys/kernel/task_delayacct": "0\n",
		"proc/1/cgroup":                  "0::/init.scope\n",
		"proc/1/status":                  "Name:\tinit\nPid:\t1\nVmRSS:\t4096 kB\nRssAnon:\t4096 kB\n",
		"proc/1/stat":                    "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n",
		"proc/1/cmdline":                 "/sbin/init\x00",
		"proc/1/smaps_rollup":            "Rss: 4096 kB\nPss: 4000 kB\n",
		"proc/1/maps":                    "00400000-00401000 r-xp 00000000 08:01 1 /sbin/init\n",
		"proc/1/environ":                 "MALLOC_ARENA_MAX=2\x00",
		"proc/1/exe":                     "not an ELF file\n",
		"sys/devices/system/cpu/online":  "0-1\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// runJailed runs memdiag --root root args, sending SIGINT once it has
// written its first line when interrupt is set, and returns its output
// and peak RSS. A run still going after two minutes is killed and fails
// the test: it hung.
func runJailed(t *testing.T, bin jailBins, root string, interrupt bool, args ...string) (string, int64) {
	t.Helper()
	rssFile := filepath.Join(t.TempDir(), "maxrss")
	c := exec.Command(bin.peakrss, append([]string{rssFile, bin.memdiag, "--root", root}, args...)...)
	var out syncBuffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	if interrupt {
		for out.Len() == 0 {
			select {
			case <-done:
				t.Fatalf("%s ended before it started: %s", args[0], out.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		_ = c.Process.Signal(syscall.SIGINT)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = c.Process.Kill()
		<-done
		t.Fatalf("%s hung (killed after 2 min): %s", args[0], out.String())
	}
	b, err := os.ReadFile(rssFile)
	if err != nil {
		t.Fatalf("%s: no peak RSS from peakrss: %v\n%s", args[0], err, out.String())
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("peakrss wrote %q: %v", b, err)
	}
	return out.String(), kib << 10
}

// jailBins are the programs runJailed runs: memdiag, under peakrss, which
// reports memdiag's own peak RSS (the test binary's wait cannot: a child
// of a large Go process inherits its high-water mark at exec).
type jailBins struct{ memdiag, peakrss string }

// buildJailBins builds memdiag and internal/testenv/peakrss.
func buildJailBins(t *testing.T) jailBins {
	t.Helper()
	return jailBins{testenv.BuildMemdiag(t), testenv.BuildPackage(t, "github.com/memdiag/memdiag/internal/testenv/peakrss", "peakrss")}
}

// syncBuffer is a bytes.Buffer the command's output goroutines and the
// test may use at once (runWith's streams too).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Len() int { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.Len() }

func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }
