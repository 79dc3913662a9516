package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store with an empty segment (what a full disk left before memdiag
// created segments with their first sample) is read, not refused: analyze
// gives the verdict of the readable segment with a note on the empty one,
// and gate --recording judges it.
func TestStoreWithEmptySegment(t *testing.T) {
	b, err := os.ReadFile(unionRec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memdiag-20261129T120000Z.jsonl.gz"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memdiag-20261206T000000Z.jsonl.gz"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, whole, _ := runCmd(t, "analyze", unionRec)
	code, out, errOut := runCmd(t, "analyze", dir)
	if code != exitOK {
		t.Fatalf("analyze of the store: exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, strings.TrimRight(whole, "\n")) {
		t.Errorf("analyze of the store differs from its readable segment's:\n%s\nwant:\n%s", out, whole)
	}
	if !strings.Contains(out, "Note: memdiag-20261206T000000Z.jsonl.gz is empty (0 bytes): skipped, the other segments are read") {
		t.Errorf("no note on the empty segment:\n%s", out)
	}
	code, out, errOut = runCmd(t, "gate", "-t", "memory.some.stall<=100%", "--recording", dir)
	if code != exitOK || !strings.Contains(out, "memdiag gate: PASS") {
		t.Errorf("gate --recording of the store: exit %d\n%s%s", code, out, errOut)
	}
}
