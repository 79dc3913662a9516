package record

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenContextCancelled: a recording opened with a context that is
// done (Ctrl-C) fails with the context's error, naming the file, on the
// header read; later reads go through the same rootfs.Input, which
// checks the context before each block (rootfs's tests).
func TestOpenContextCancelled(t *testing.T) {
	p := filepath.Join("testdata", "v1", "watch-6.18-cgroup.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OpenContext(ctx, p); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), p) {
		t.Fatalf("OpenContext(cancelled, %s) = %v; want context.Canceled naming the file", p, err)
	}

}
