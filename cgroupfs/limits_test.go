package cgroupfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMemoryLimits: every group with a memory limit from a group up to
// the root, nearest first — a service's slice inside a node's group
// (the node model: kubepods, a machine.slice with MemoryMax=) gives both
// — in v1 and v2 layouts built in a temp dir; an unreadable file ends
// the walk.
func TestMemoryLimits(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, file, val string) {
		t.Helper()
		d := filepath.Join(root, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, file), []byte(val+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const unlimited = "9223372036854771712"
	mk("v1/node.slice", "memory.limit_in_bytes", "268435456")
	mk("v1/node.slice/app.slice", "memory.limit_in_bytes", "234881024")
	mk("v1/node.slice/app.slice/web.service", "memory.limit_in_bytes", unlimited)
	mk("v1/node.slice/job.service", "memory.limit_in_bytes", unlimited)
	mk("v1/free.slice/x.service", "memory.limit_in_bytes", unlimited)
	mk("v1/free.slice", "memory.limit_in_bytes", unlimited)
	mk("v2/node.slice", "memory.max", "268435456")
	mk("v2/node.slice/web.service", "memory.max", "max")
	mk("v2/gap/web.service", "memory.max", "104857600") // gap/ has no memory.max
	for _, c := range []struct {
		dir, group string
		v1         bool
		want       []Limit
	}{
		{"v1/node.slice/app.slice/web.service", "/node.slice/app.slice/web.service", true,
			[]Limit{{"/node.slice/app.slice", 234881024}, {"/node.slice", 268435456}}},
		{"v1/node.slice/job.service", "/node.slice/job.service", true, []Limit{{"/node.slice", 268435456}}},
		{"v1/free.slice/x.service", "/free.slice/x.service", true, nil},
		{"v2/node.slice/web.service", "/node.slice/web.service", false, []Limit{{"/node.slice", 268435456}}},
		{"v2/gap/web.service", "/gap/web.service", false, []Limit{{"/gap/web.service", 104857600}}},
	} {
		got := MemoryLimits(filepath.Join(root, c.dir), c.group, c.v1)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("MemoryLimits(%s) (-want +got):\n%s", c.dir, diff)
		}
	}
}
