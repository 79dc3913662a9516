package chain

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/record"
)

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCgroupNamesPath(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "system.slice/app.service", "user.slice")
	if err := os.WriteFile(filepath.Join(root, "system.slice", "cgroup.procs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCgroupNames(root)
	app := ino(t, filepath.Join(root, "system.slice/app.service"))
	for _, tc := range []struct {
		id   uint64
		want string
	}{
		{0, ""},
		{ino(t, root), "/"},
		{app, "/system.slice/app.service"},
		{ino(t, filepath.Join(root, "user.slice")), "/user.slice"},
		{ino(t, filepath.Join(root, "system.slice", "cgroup.procs")), "(gone " + itoa(ino(t, filepath.Join(root, "system.slice", "cgroup.procs"))) + ")"}, // a file is no group
	} {
		if got := c.path(tc.id); got != tc.want {
			t.Errorf("path(%d) = %q, want %q", tc.id, got, tc.want)
		}
	}
	if c.walks != 1 {
		t.Errorf("%d walks before the first reset, want 1 (once per sample)", c.walks)
	}

	// A group made later is found after the next reset; a known-gone id
	// never walks again.
	mkdirs(t, root, "late.scope")
	late := ino(t, filepath.Join(root, "late.scope"))
	if got := c.path(late); got != "(gone "+itoa(late)+")" {
		t.Errorf("before reset: path(late) = %q, want it unresolved (no second walk in a sample)", got)
	}
	c.reset()
	if got := c.path(late); got != "/late.scope" {
		t.Errorf("after reset: path(late) = %q, want /late.scope", got)
	}
	if c.walks != 2 {
		t.Errorf("walks = %d, want 2", c.walks)
	}
	// An id missing from a walk made for it is gone for good: no more walks.
	file := ino(t, filepath.Join(root, "system.slice", "cgroup.procs"))
	c.reset()
	_ = c.path(file) // walk 3 finds no such group
	c.reset()
	_ = c.path(file)
	if c.walks != 3 {
		t.Errorf("a gone id walked again: walks = %d, want 3", c.walks)
	}
	// Removed: its row keeps the path it had when walked.
	if err := os.Remove(filepath.Join(root, "late.scope")); err != nil {
		t.Fatal(err)
	}
	if got := c.path(late); got != "/late.scope" {
		t.Errorf("removed group: path = %q, want the cached /late.scope", got)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

func TestHierarchies(t *testing.T) {
	touch := func(t *testing.T, p string) {
		t.Helper()
		mkdirs(t, filepath.Dir(p), ".")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("hybrid", func(t *testing.T) {
		sys := t.TempDir()
		touch(t, filepath.Join(sys, "fs/cgroup/unified/cgroup.procs"))
		touch(t, filepath.Join(sys, "fs/cgroup/memory/memory.limit_in_bytes"))
		v2, mem, v1 := hierarchies(sys)
		if v2 != filepath.Join(sys, "fs/cgroup/unified") || mem != filepath.Join(sys, "fs/cgroup/memory") || !v1 {
			t.Errorf("hierarchies = %q, %q, v1 %v", v2, mem, v1)
		}
	})
	t.Run("pure v2", func(t *testing.T) {
		sys := t.TempDir()
		touch(t, filepath.Join(sys, "fs/cgroup/cgroup.controllers"))
		v2, mem, v1 := hierarchies(sys)
		if want := filepath.Join(sys, "fs/cgroup"); v2 != want || mem != want || v1 {
			t.Errorf("hierarchies = %q, %q, v1 %v, want %q twice, v2", v2, mem, v1, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		v2, mem, _ := hierarchies(t.TempDir())
		if v2 != "" || mem != "" {
			t.Errorf("hierarchies = %q, %q, want none", v2, mem)
		}
	})
}

// TestMemcgLimits: the limits of the adders' memory cgroups and their
// ancestors, as a hybrid host's v1 memory controller shows them (the
// newcomer-together scenario's node: the node and the neighbour limited,
// the job not; an unlimited v1 group reads 9223372036854771712), and as
// a pure v2 host does ("max" unlimited).
func TestMemcgLimits(t *testing.T) {
	write := func(t *testing.T, dir, file, body string) {
		t.Helper()
		mkdirs(t, dir, ".")
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const unlimited = "9223372036854771712\n"
	adds := []record.ChainAdd{
		{PID: 10, Memcg: "/node.slice/job.service", Bytes: 4096},
		{PID: 11, Memcg: "/node.slice/nb.service", Bytes: 4096},
		{PID: 12, Memcg: "/node.slice/nb.service", Bytes: 4096},
		{PID: 13, Memcg: "(gone 77)", Bytes: 4096},
		{PID: 0, Comm: Others, Bytes: 4096},
	}
	t.Run("v1", func(t *testing.T) {
		mem := t.TempDir()
		write(t, mem, "memory.limit_in_bytes", unlimited)
		write(t, filepath.Join(mem, "node.slice"), "memory.limit_in_bytes", "268435456\n")
		write(t, filepath.Join(mem, "node.slice/job.service"), "memory.limit_in_bytes", unlimited)
		write(t, filepath.Join(mem, "node.slice/nb.service"), "memory.limit_in_bytes", "33554432\n")
		got := memcgLimits(mem, true, adds)
		want := []record.MemoryLimit{{Group: "/node.slice", Bytes: 256 << 20}, {Group: "/node.slice/nb.service", Bytes: 32 << 20}}
		if !slices.Equal(got, want) {
			t.Errorf("memcgLimits = %+v, want %+v", got, want)
		}
	})
	t.Run("v2", func(t *testing.T) {
		v2 := t.TempDir()
		write(t, filepath.Join(v2, "node.slice"), "memory.max", "268435456\n")
		write(t, filepath.Join(v2, "node.slice/job.service"), "memory.max", "max\n")
		write(t, filepath.Join(v2, "node.slice/nb.service"), "memory.max", "max\n")
		got := memcgLimits(v2, false, adds)
		if want := []record.MemoryLimit{{Group: "/node.slice", Bytes: 256 << 20}}; !slices.Equal(got, want) {
			t.Errorf("memcgLimits = %+v, want %+v", got, want)
		}
	})
	t.Run("no hierarchy", func(t *testing.T) {
		if got := memcgLimits("", true, adds); got != nil {
			t.Errorf("memcgLimits without a hierarchy = %+v, want nil", got)
		}
	})
}

func TestCapAdds(t *testing.T) {
	rows := []record.ChainAdd{
		{PID: 3, Comm: "c", Bytes: 300},
		{PID: 1, Comm: "a", Bytes: 100},
		{PID: 4, Comm: "d", Bytes: 400},
		{PID: 2, Comm: "b", Bytes: 100},
		{PID: 5, Comm: "e", Bytes: 50},
	}
	got := capAdds(append([]record.ChainAdd(nil), rows...), 3)
	want := []record.ChainAdd{
		{PID: 4, Comm: "d", Bytes: 400},
		{PID: 3, Comm: "c", Bytes: 300},
		{PID: 0, Comm: Others, Bytes: 250}, // 100 + 100 + 50
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("capAdds (-want +got):\n%s", d)
	}
	if got := capAdds(append([]record.ChainAdd(nil), rows...), 5); len(got) != 5 || got[4].PID != 5 {
		t.Errorf("cap at len: %+v, want all five, smallest last", got)
	}
	if got := capAdds(nil, 3); got != nil {
		t.Errorf("capAdds(nil) = %v", got)
	}
}

func TestCapStallsAndEvictions(t *testing.T) {
	st := capStalls([]record.ChainStall{
		{PID: 1, Direct: 5, Limit: 0},
		{PID: 2, Direct: 1, Limit: 9},
		{PID: 3, Direct: 2, Limit: 1},
	}, 2)
	wantSt := []record.ChainStall{{PID: 2, Direct: 1, Limit: 9}, {Comm: Others, Direct: 7, Limit: 1}}
	if d := cmp.Diff(wantSt, st); d != "" {
		t.Errorf("capStalls (-want +got):\n%s", d)
	}
	ev := capEvictions([]record.ChainEviction{
		{Memcg: "/a", Reclaimer: record.ReclaimKswapd, PID: 40, Bytes: 10},
		{Memcg: "/b", Reclaimer: record.ReclaimMemcg, PID: 7, Bytes: 30},
		{Memcg: "/a", Reclaimer: record.ReclaimDirect, PID: 8, Bytes: 20},
	}, 2)
	wantEv := []record.ChainEviction{
		{Memcg: "/b", Reclaimer: record.ReclaimMemcg, PID: 7, Bytes: 30},
		{Comm: Others, Bytes: 30},
	}
	if d := cmp.Diff(wantEv, ev); d != "" {
		t.Errorf("capEvictions (-want +got):\n%s", d)
	}
	rf := capRefaults([]record.ChainRefault{{PID: 1, Bytes: 1}, {PID: 2, Bytes: 2}}, 0)
	if len(rf) != 2 || rf[0].PID != 2 {
		t.Errorf("capRefaults, no cap: %+v", rf)
	}
}

func TestComm(t *testing.T) {
	var b [16]int8
	for i, c := range "kswapd0" {
		b[i] = int8(c)
	}
	if got := comm(b); got != "kswapd0" {
		t.Errorf("comm = %q", got)
	}
	for i := range b {
		b[i] = 'x'
	}
	if got := comm(b); got != "xxxxxxxxxxxxxxxx" {
		t.Errorf("comm without NUL = %q", got)
	}
}
