package cgroupfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeMountinfo(t *testing.T, lines string) string {
	t.Helper()
	proc := filepath.Join(t.TempDir(), "proc")
	if err := os.MkdirAll(filepath.Join(proc, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("7", filepath.Join(proc, "self")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "7/mountinfo"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return proc
}

func TestReadMounts(t *testing.T) {
	for _, tc := range []struct {
		name, lines string
		want        Mounts
	}{
		{"hybrid", // this project's CI host, kernel 6.18 (victim/testdata/hybrid)
			"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
				"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
				"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
				"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n" +
				"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
			Mounts{Root: "/r", Unified: "/sys/fs/cgroup/unified", Memory: "/sys/fs/cgroup/memory"}},
		{"pure v2", // Debian 12, systemd 252
			"30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
			Mounts{Root: "/r", Unified: "/sys/fs/cgroup"}},
		{"none", "22 1 0:21 / /proc rw - proc proc rw\n", Mounts{Root: "/r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadMounts(writeMountinfo(t, tc.lines), "/r")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReadMounts(t.TempDir(), "/"); err == nil {
		t.Error("no error without <proc>/self")
	}
}

func TestResolve(t *testing.T) {
	hybrid := Mounts{Unified: "/sys/fs/cgroup/unified", Memory: "/sys/fs/cgroup/memory"}
	for _, tc := range []struct {
		root  string
		m     Mounts
		value string
		want  string
	}{
		// gate --cgroup's rules (cmd/gate.go before the move).
		{"/", Mounts{}, "/sys/fs/cgroup/a.service", "/sys/fs/cgroup/a.service"},
		{"/", Mounts{}, "system.slice/a.service", "/sys/fs/cgroup/system.slice/a.service"},
		{"/fix", Mounts{}, "/sys/fs/cgroup/a", "/fix/sys/fs/cgroup/a"},
		{"", Mounts{}, "a", "/sys/fs/cgroup/a"},
		// With the mounts known, relative is below the cgroup2 mount.
		{"/", hybrid, "system.slice/a.service", "/sys/fs/cgroup/unified/system.slice/a.service"},
		{"/fix", hybrid, "/sys/fs/cgroup/memory/a", "/fix/sys/fs/cgroup/memory/a"},
	} {
		if got := Resolve(tc.root, tc.m, tc.value); got != tc.want {
			t.Errorf("Resolve(%q, %+v, %q) = %q, want %q", tc.root, tc.m, tc.value, got, tc.want)
		}
	}
}

func TestRel(t *testing.T) {
	for _, tc := range []struct {
		root, mount, dir, want string
		ok                     bool
	}{
		{"/", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/a/b.service", "/a/b.service", true},
		{"/", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified", "/", true},
		{"/r", "/sys/fs/cgroup", "/r/sys/fs/cgroup/x/", "/x", true},
		{"/", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory/a", "", false},
		{"/", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified2/a", "", false},
		{"/", "", "/a", "", false},
	} {
		got, ok := Rel(tc.root, tc.mount, tc.dir)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Rel(%q, %q, %q) = %q, %v; want %q, %v", tc.root, tc.mount, tc.dir, got, ok, tc.want, tc.ok)
		}
	}
}
