package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseCgroup checks that no /proc/PID/cgroup panics the parsers
// (parseCgroup, ControllerPath), that a controller's path is a piece of
// the input, and that every component of a unit it derives is a component of the path.
// Seeds: the real files of testdata/diskio/cgroup (see its SOURCE).
func FuzzParseCgroup(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "testdata", "diskio", "cgroup", "*"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, "SOURCE") {
			f.Add(b)
		}
	}
	f.Add([]byte("0::/system.slice/x.service\n1:name=systemd:/a.scope\n"))
	f.Add([]byte("0::/kubepods/besteffort/pod1/abc\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ctrl := range []string{"memory", "cpu"} {
			if p, _ := ControllerPath(b, ctrl); !bytes.Contains(b, []byte(p)) {
				t.Fatalf("ControllerPath(%q) = %q, not in the input", ctrl, p)
			}
		}
		p, unit := parseCgroup(b)
		if unit == "" {
			return
		}
		comps := strings.Split(p, "/")
		for _, u := range strings.Split(unit, "/") {
			found := false
			for _, c := range comps {
				found = found || c == u
			}
			if !found {
				t.Fatalf("unit %q: %q is not a component of path %q", unit, u, p)
			}
		}
	})
}
