package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is set with -ldflags "-X github.com/memdiag/memdiag/cmd.Version=v1.2.3";
// otherwise it comes from the module's build info.
var Version = ""

// VersionString is memdiag's version: the -X value, the module version, or
// the VCS revision the binary was built from.
func VersionString() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
			v = "devel-" + s.Value[:min(12, len(s.Value))]
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v
}

func newVersionCmd(f *Factory) *cobra.Command {
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
// after "memdiag ": the version and the Go release that built it.
func versionLine() string {
	gov := runtime.Version()
	return fmt.Sprintf("%s (%s)", VersionString(), gov)
}
