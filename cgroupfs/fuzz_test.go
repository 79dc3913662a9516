package cgroupfs

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolveRel: any --cgroup value resolves to a clean path under the
// root, and Rel of a resolved v2 value is a clean group path ("/…") or
// not under the mount, never a panic or a path that climbs out.
func FuzzResolveRel(f *testing.F) {
	for _, s := range []string{"system.slice/web.service", "/sys/fs/cgroup/unified/a", "../../etc", "", ".", "/", "a/../../b"} {
		f.Add(s)
	}
	m := Mounts{Unified: "/sys/fs/cgroup/unified", Memory: "/sys/fs/cgroup/memory"}
	f.Fuzz(func(t *testing.T, value string) {
		dir := Resolve("/r", m, value)
		if dir != filepath.Clean(dir) || !strings.HasPrefix(dir, "/r") {
			t.Fatalf("Resolve(%q) = %q: not a clean path under the root", value, dir)
		}
		p, ok := Rel("/r", m.Unified, dir)
		if ok && (!strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../")) {
			t.Fatalf("Rel(%q) = %q: not a group path", dir, p)
		}
	})
}
