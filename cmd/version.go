package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version is set with -ldflags "-X github.com/memdiag/memdiag/cmd.Version=v1.2.3"
// (make build, make dist); otherwise it comes from the module's build info.
var Version = ""

// versionString is memdiag's version as one word, as recordings store it:
// the -X value, the module version (a release tag, or the pseudo-version
// Go ≥ 1.24 stamps from the git checkout), "devel-<commit>" from the VCS
// stamp, or "(devel)" when the build carries none of these.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	v, _ := versionFrom(Version, bi)
	return v
}

// versionFrom derives the version word and, for a development build, what
// is known of its source (commit time, uncommitted changes, or why nothing
// is known) from the -X value and the binary's build info (nil: none).
func versionFrom(ldflags string, bi *debug.BuildInfo) (version, detail string) {
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

func newVersionCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print memdiag's version and the Go version it was built with",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(f.IO.Out, "memdiag %s\n", versionLine())
			return nil
		},
	}
}

// versionLine is what `memdiag version` and `memdiag --version` print
// after "memdiag ": the version, what is known of a development build's
// source, and the Go release that built it.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	v, detail := versionFrom(Version, bi)
	if detail != "" {
		return fmt.Sprintf("%s (%s; %s)", v, detail, runtime.Version())
	}
	return fmt.Sprintf("%s (%s)", v, runtime.Version())
}
