// Package buildinfo is memdiag's version as recordings store it and
// `memdiag version` prints it: from the -X value cmd.Version, else the
// binary's module and VCS build info (runtime/debug).
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Of is From with the running binary's build info.
func Of(ldflags string) (version, detail string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return From(ldflags, bi)
}

// From derives the version word and, for a development build, what
// is known of its source (commit time, uncommitted changes, or why nothing
// is known) from the -X value and the binary's build info (nil: none).
func From(ldflags string, bi *debug.BuildInfo) (version, detail string) {
	if ldflags != "" {
		return ldflags, ""
	}
	if bi == nil {
		return "(devel)", "built without module information"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v, ""
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)", "no commit recorded: go run, -buildvcs=false (see go env GOFLAGS) or a git worktree; go build -buildvcs=true in a clone or make build records it"
	}
	version = "devel-" + rev[:min(12, len(rev))]
	var d []string
	if when != "" {
		d = append(d, "committed "+when)
	}
	if modified {
		version += "+dirty"
		d = append(d, "with uncommitted changes")
	}
	return version, strings.Join(d, ", ")
}
