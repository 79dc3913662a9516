package lru

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/fixtures"
)

func u64(x uint64) *uint64 { return &x }

func TestReadCgroupCounters(t *testing.T) {
	// gopsutil's cgroup v2 fixture: memory.stat has pgmajfault but none of
	// the reclaim or swap counters; memory.events has oom_kill 0.
	got, err := ReadCgroupCounters(fixtures.Root(t, "gopsutil-cgroup2"))
	if err != nil {
		t.Fatal(err)
	}
	want := &VMStat{Pgmajfault: u64(10), OOMKill: u64(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadCgroupCounters (-want +got):\n%s", diff)
	}

	// Newer keys (cgroup-v2.rst, memory.stat) built by hand.
	dir := t.TempDir()
	stat := "anon 1048576\nworkingset_refault_anon 7\nworkingset_refault_file 300\npswpin 2\npswpout 40\n" +
		"pgscan_kswapd 5\npgscan_direct 11\npgsteal_kswapd 4\npgsteal_direct 9\npgmajfault 3\n"
	if err := os.WriteFile(filepath.Join(dir, "memory.stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadCgroupCounters(dir)
	if err != nil {
		t.Fatal(err)
	}
	want = &VMStat{WorkingsetRefaultAnon: u64(7), WorkingsetRefaultFile: u64(300), Pswpin: u64(2), Pswpout: u64(40),
		PgscanKswapd: u64(5), PgscanDirect: u64(11), PgstealKswapd: u64(4), PgstealDirect: u64(9), Pgmajfault: u64(3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadCgroupCounters (-want +got):\n%s", diff)
	}

	// A v2 group without the memory controller has neither file.
	if got, err := ReadCgroupCounters(t.TempDir()); got != nil || err != nil {
		t.Errorf("empty group = %v, %v; want nil, nil", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.events"), []byte("oom_kill\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCgroupCounters(dir); err == nil || !strings.Contains(err.Error(), "memory.events:1: ") {
		t.Errorf("bad memory.events error = %v", err)
	}
}

func TestReadCgroupCountersHybridTwin(t *testing.T) {
	// A real hybrid layout (memstate's host618 fixture, Linux 6.18): the v2
	// group under unified/ has no memory files; its v1 memory twin does.
	root := "../memstate/testdata/host618/sys/fs/cgroup"
	got, err := ReadCgroupCounters(filepath.Join(root, "unified/memdiag-mem-fixture"))
	if err != nil {
		t.Fatal(err)
	}
	// memory/memdiag-mem-fixture/memory.stat total_* and memory.oom_control.
	want := &VMStat{WorkingsetRefaultAnon: u64(0), WorkingsetRefaultFile: u64(94208), Pgmajfault: u64(0), OOMKill: u64(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hybrid twin (-want +got):\n%s", diff)
	}
	// No twin: nothing, as before.
	if got, err := ReadCgroupCounters(filepath.Join(t.TempDir(), "unified", "x")); got != nil || err != nil {
		t.Errorf("no twin = %v, %v", got, err)
	}
	if hybridTwin("/sys/fs/cgroup/unifiedX/a") != "" {
		t.Error("unifiedX is not the unified mount")
	}
}
