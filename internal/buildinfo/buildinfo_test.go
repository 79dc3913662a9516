package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(v string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/memdiag/memdiag", Version: v}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	const rev = "d3cd7b8255d7e60bd06af80eecb33cb41adc9e81"
	tests := []struct {
		name, ldflags     string
		bi                *debug.BuildInfo
		wantV, wantDetail string
	}{
		{"make dist (-X)", "v1.2.3", vcs("(devel)", "vcs.revision", rev), "v1.2.3", ""},
		{"go install @v1.2.3", "", vcs("v1.2.3"), "v1.2.3", ""},
		{"go build in a clone (Go ≥ 1.24 pseudo-version)", "", vcs("v0.0.0-20261201204944-d3cd7b8255d7+dirty", "vcs.revision", rev), "v0.0.0-20261201204944-d3cd7b8255d7+dirty", ""},
		{"devel with a VCS stamp", "", vcs("(devel)", "vcs.revision", rev, "vcs.time", "2026-12-01T20:49:44Z", "vcs.modified", "false"),
			"devel-d3cd7b8255d7", "committed 2026-12-01T20:49:44Z"},
		{"devel, modified", "", vcs("(devel)", "vcs.revision", rev, "vcs.time", "2026-12-01T20:49:44Z", "vcs.modified", "true"),
			"devel-d3cd7b8255d7+dirty", "committed 2026-12-01T20:49:44Z, with uncommitted changes"},
		{"go run (no stamp)", "", vcs("(devel)"), "(devel)", "no commit recorded: go run, -buildvcs=false (see go env GOFLAGS) or a git worktree; go build -buildvcs=true in a clone or make build records it"},
		{"no build info", "", nil, "(devel)", "built without module information"},
	}
	for _, tt := range tests {
		v, d := From(tt.ldflags, tt.bi)
		if v != tt.wantV || d != tt.wantDetail {
			t.Errorf("%s: got %q, %q; want %q, %q", tt.name, v, d, tt.wantV, tt.wantDetail)
		}
	}
}

// TestVersionLdflags builds memdiag as make build and make dist do, with
// the version set by -ldflags -X, and runs its --version: the variable
// the Makefile and packaging/dist.sh name must be the one printed.
