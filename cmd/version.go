package cmd

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/memdiag/memdiag/internal/buildinfo"
)

// Version is set with -ldflags "-X github.com/memdiag/memdiag/cmd.Version=v1.2.3"
// (make build, make dist); otherwise it comes from the module's build info.
var Version = ""

// versionString is memdiag's version as one word, as recordings store it:
// the -X value, the module version (a release tag, or the pseudo-version
// Go ≥ 1.24 stamps from the git checkout), "devel-<commit>" from the VCS
// stamp, or "(devel)" when the build carries none of these.
func versionString() string {
	v, _ := buildinfo.Of(Version)
	return v
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
	v, detail := buildinfo.Of(Version)
	if detail != "" {
		return fmt.Sprintf("%s (%s; %s)", v, detail, runtime.Version())
	}
	return fmt.Sprintf("%s (%s)", v, runtime.Version())
}
