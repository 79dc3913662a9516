package cpuprofile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStart: a profile file is created with the mode asked for and is
// not empty once stopped; no path, no file; a folder is refused.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpu.pprof")
	stop, err := Start(p, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	fi, err := os.Stat(p)
	if err != nil || fi.Size() == 0 || fi.Mode().Perm() != 0o640 {
		t.Fatalf("profile %v, %v; want a non-empty 0640 file", fi, err)
	}
	stop, err = Start("", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := Start(dir, 0o600); err == nil || !strings.HasPrefix(err.Error(), "--cpuprofile: ") {
		t.Errorf("Start(folder) = %v, want a --cpuprofile error", err)
	}
}
