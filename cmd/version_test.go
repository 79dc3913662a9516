package cmd

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestVersionLdflags(t *testing.T) {
	t.Parallel() // its own binaries and files: beside the others
	if testing.Short() {
		t.Skip("builds memdiag (-short)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	bin := filepath.Join(t.TempDir(), "memdiag")
	build := exec.Command(gobin, "build", "-buildvcs=false", "-o", bin,
		"-ldflags", "-X github.com/memdiag/memdiag/cmd.Version=v9.8.7-test", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("memdiag --version: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "memdiag v9.8.7-test ("+runtime.Version()+")"; got != want {
		t.Errorf("--version = %q, want %q", got, want)
	}
}
