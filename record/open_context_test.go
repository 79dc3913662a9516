package record

import (
	"bytes"
	"context"
	"errors"
	"os"
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

// TestHeaderNewerSchemaPastInt: a header from a later memdiag whose
// schema_version does not fit an int (999999999999999999999) is a newer
// schema, not "not a memdiag header"; a version of 0 or 1 that fails to
// decode for another reason is still not a header. Made from the real
// recording of testdata/v1.
func TestHeaderNewerSchemaPastInt(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "v1", "watch-6.18-cgroup.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"schema_version":1`, `"schema_version":999999999999999999999`, "schema version 999999999999999999999 is newer than this memdiag reads"},
		{`"schema_version":1`, `"schema_version":7`, "schema version 7 is newer than this memdiag reads"},
		{`"schema_version":1,`, `"schema_version":1,"boot_time":7,`, "the first line is not a memdiag header"},
		{`"schema_version":1`, `"schema_version":"9"`, "the first line is not a memdiag header"},
	} {
		in := bytes.Replace(b, []byte(tc.from), []byte(tc.to), 1)
		_, err := NewReader(bytes.NewReader(in), "rec.jsonl")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "rec.jsonl:1: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrFormat at line 1 saying %q", tc.to, err, tc.want)
		}
	}
}
