package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testenv"
)

// TestGateCgroupMemoryLimit is case C03's limit (issue 30, item 3): a
// group's stall is most often its memory limit reached, so `gate
// --cgroup` says the limit that bounds the group, its own or an
// ancestor's (v1 memory.limit_in_bytes at the same path on a hybrid
// host, v2 memory.max), and `analyze` of gate's recording says it too.
// Real groups: a parent limited to 48 MiB with an unlimited child, and
// a child of its own limited to 32 MiB.
func TestGateCgroupMemoryLimit(t *testing.T) {
	testenv.RequireRoot(t, "memory cgroups")
	// Its own cgroups and assertions on them only.
	t.Parallel()
	testenv.Shared(t)
	memdiag := testenv.BuildMemdiag(t)
	parent := testenv.NewCgroup(t, "memdiag-e2e-limit", 48<<20)
	free := testenv.NewCgroup(t, "memdiag-e2e-limit/free", 0)
	own := testenv.NewCgroup(t, "memdiag-e2e-limit/own", 32<<20)
	if parent.V2Dir == "" {
		testenv.Unmet(t, "no cgroup v2 hierarchy: --cgroup reads the group's PSI there")
	}
	for _, tc := range []struct {
		cg    *testenv.Cgroup
		limit string
		bytes uint64
		text  string
	}{
		{free, "/memdiag-e2e-limit", 48 << 20, ", memory limited to 48.0 MiB with every group under /memdiag-e2e-limit"},
		{own, "/memdiag-e2e-limit/own", 32 << 20, ", memory limited to 32.0 MiB"},
	} {
		rec := filepath.Join(t.TempDir(), "gate.jsonl.gz")
		out, err := exec.Command(memdiag, "gate", "--cgroup", tc.cg.V2Dir, "--duration", "1s", "--interval", "250ms",
			"-t", "memory.some.avg10<50%", "--format", "json", "--out", rec).Output()
		if err != nil {
			t.Fatalf("memdiag gate --cgroup %s: %v\n%s", tc.cg.V2Dir, err, out)
		}
		var g struct {
			Cgroup string `json:"cgroup"`
			Limit  string `json:"memory_limit_cgroup"`
			Bytes  uint64 `json:"memory_limit_bytes"`
		}
		if err := json.Unmarshal(out, &g); err != nil {
			t.Fatalf("gate JSON: %v\n%s", err, out)
		}
		if g.Limit != tc.limit || g.Bytes != tc.bytes {
			t.Errorf("gate --cgroup %s: memory_limit_cgroup %q, memory_limit_bytes %d; want %q, %d", tc.cg.Name, g.Limit, g.Bytes, tc.limit, tc.bytes)
		}
		text, err := exec.Command(memdiag, "analyze", rec).Output()
		if err != nil {
			t.Fatalf("memdiag analyze %s: %v\n%s", rec, err, text)
		}
		if want := "Scope: --cgroup " + tc.cg.V2Dir + tc.text + "\n"; !strings.Contains(string(text), want) {
			t.Errorf("analyze of gate's recording lacks %q:\n%s", want, text)
		}
	}
}
