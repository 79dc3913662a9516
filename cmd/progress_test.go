package cmd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/iostreams"
)

func TestWithProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	data := bytes.Repeat([]byte("0123456789abcdef"), progressMinBytes/16+1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ios, _, _, stderr := iostreams.Test()
		ios.SetStderrTTY(tty)
		r, done := withProgress(ios, f, "big.jsonl")
		got, err := io.ReadAll(r)
		done()
		f.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("tty=%v: read %d bytes (%v), want the file's %d", tty, len(got), err, len(data))
		}
		// A bar only on a terminal: piped stderr (CI, scripts) stays clean.
		if shown := strings.Contains(stderr.String(), "reading big.jsonl"); shown != tty {
			t.Errorf("tty=%v: bar shown = %v; stderr %q", tty, shown, stderr.String())
		}
	}
}
