package iostreams

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	data := bytes.Repeat([]byte("0123456789abcdef"), ProgressMinBytes/16+1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ios, _, _, stderr := Test()
		ios.SetStderrTTY(tty)
		r, done := ios.Progress(f, "big.jsonl")
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

// TestCtxReader: reads pass through until the context is done, then end
// with its error.
func TestCtxReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := CtxReader{Ctx: ctx, R: strings.NewReader("abcdef")}
	p := make([]byte, 3)
	if n, err := r.Read(p); n != 3 || err != nil || string(p) != "abc" {
		t.Fatalf("Read = %d, %v, %q", n, err, p)
	}
	cancel()
	if n, err := r.Read(p); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: Read = %d, %v; want 0, context.Canceled", n, err)
	}
	if n, err := (CtxReader{R: strings.NewReader("x")}).Read(p); n != 1 || err != nil {
		t.Errorf("no context: Read = %d, %v", n, err)
	}
}
