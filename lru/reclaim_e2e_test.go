package lru

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestCgroupReclaimCountsInFileCounters reads 192 MiB through the page
// cache from a memory cgroup limited to 32 MiB and checks what the
// collector sees on the live kernel: the group must reclaim about
// 160 MiB of file pages (at least 144 MiB is asserted, leaving 16 MiB for
// accounting slack), and that reclaim must show in pgscan_file and
// pgsteal_file (cgroup-limit reclaim is not in pgscan_kswapd/_direct).
// Other processes on the host can only add to the counters, so the bound
// holds under any background load.
func TestCgroupReclaimCountsInFileCounters(t *testing.T) {
	testenv.RequireRoot(t, "creating a memory cgroup")
	procs, cleanup := newMemoryCgroup(t, fmt.Sprintf("lru-e2e-%d", os.Getpid()), 32<<20)
	defer cleanup()

	c, err := NewCollector("/proc")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	if probe.PgscanFile == nil || probe.PgstealFile == nil {
		testenv.Unmet(t, "kernel before 5.8: no pgscan_file/pgsteal_file")
	}

	// The file is written around the page cache (O_DIRECT), from outside
	// the group, then read through the page cache from inside it: clean
	// pages are reclaimed easily, whereas writing from inside a 32 MiB v1
	// group gets the writer OOM-killed at times while dirty pages wait for
	// writeback. /var/tmp, not t.TempDir(): /tmp may be a tmpfs, whose
	// pages are not file LRU pages.
	dir, err := os.MkdirTemp("/var/tmp", "lru-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	const mib = 192
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+data, "bs=1M", fmt.Sprint("count=", mib), "oflag=direct", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v: %s", data, err, out)
	}
	before, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `echo $$ >"$1" && exec cat "$2" >/dev/null`, "sh", procs, data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reader in the cgroup: %v: %s", err, out)
	}

	after, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	const minPages = (mib - 32 - 16) << 20 / 4096
	scanned := *after.PgscanFile - *before.PgscanFile
	stolen := *after.PgstealFile - *before.PgstealFile
	t.Logf("pgscan_file +%d, pgsteal_file +%d pages; pgscan_direct +%d, pgscan_kswapd +%d",
		scanned, stolen, *after.PgscanDirect-*before.PgscanDirect, *after.PgscanKswapd-*before.PgscanKswapd)
	if os.Getpagesize() != 4096 {
		t.Skipf("bound computed for 4 KiB pages; page size is %d", os.Getpagesize())
	}
	if scanned < minPages || stolen < minPages {
		t.Errorf("pgscan_file rose by %d and pgsteal_file by %d pages; want both ≥ %d (%d MiB through a 32 MiB group)",
			scanned, stolen, minPages, mib)
	}
}

// newMemoryCgroup creates a memory cgroup named name limited to limit
// bytes, in the v1 memory hierarchy if there is one, else in cgroup v2, and
// returns its cgroup.procs path and a function that removes it.
func newMemoryCgroup(t *testing.T, name string, limit int64) (procs string, cleanup func()) {
	t.Helper()
	var dir, limitFile string
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil {
		dir, limitFile = filepath.Join("/sys/fs/cgroup/memory", name), "memory.limit_in_bytes"
	} else if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(b), "memory") {
		dir, limitFile = filepath.Join("/sys/fs/cgroup", name), "memory.max"
	} else {
		testenv.Unmet(t, "no cgroup v1 memory controller and no cgroup v2 memory controller enabled at /sys/fs/cgroup")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cleanup = func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("removing cgroup %s: %v", dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(fmt.Sprint(limit)), 0o644); err != nil {
		cleanup()
		t.Fatal(err)
	}
	return filepath.Join(dir, "cgroup.procs"), cleanup
}
