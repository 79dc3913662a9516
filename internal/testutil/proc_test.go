package testutil

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/process"
)

// TestWriteProc: the stat line WriteProc writes parses with the fields
// asked for and python3's others (state S, one thread), and the other
// files are written as given. A comm with a space and a ')' stays one
// field, as the kernel writes it.
func TestWriteProc(t *testing.T) {
	proc := t.TempDir()
	WriteProc(t, proc, 4321, 17, 98765, "my (job)", map[string]string{"cmdline": "a\x00b\x00"})
	got, err := process.ReadStat(context.Background(), proc, 4321)
	if err != nil {
		t.Fatal(err)
	}
	want := process.Stat{PID: 4321, Comm: "my (job)", State: "S", PPID: 17, NumThreads: 1, StartTicks: 98765}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stat (-want +got):\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(proc, "4321", "cmdline"))
	if err != nil || string(b) != "a\x00b\x00" {
		t.Errorf("cmdline %q, %v", b, err)
	}
}
