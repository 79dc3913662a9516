package memstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadKernelLogFallback(t *testing.T) {
	// No readable /dev/kmsg: with RunLog (the running host) it falls back to dmesg, then to
	// journalctl -k; empty journalctl output is not "no kills".
	root := t.TempDir() // a proc/ and no dev/kmsg
	if err := os.Mkdir(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	col, err := NewCollector(root)
	if err != nil {
		t.Fatal(err)
	}
	dmesg414, err := os.ReadFile("testdata/oom/dmesg-4.14-memcg.txt")
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	o := CollectOptions{RunLog: func(_ context.Context, name string, args ...string) ([]byte, error) {
		ran = append(ran, name)
		if name == "dmesg" {
			return nil, errors.New("dmesg: exit status 1: read kernel buffer failed: Operation not permitted")
		}
		return []byte("\n"), nil
	}}
	got := col.readKernelLog(context.Background(), o, time.Time{})
	if got.Source != "" || !strings.Contains(got.Unreadable, "dmesg: exit status 1") ||
		!strings.Contains(got.Unreadable, "journalctl: no kernel messages") || cmp.Diff([]string{"dmesg", "journalctl"}, ran) != "" {
		t.Errorf("got %+v after running %v", got, ran)
	}
	o.RunLog = func(_ context.Context, name string, args ...string) ([]byte, error) { return dmesg414, nil }
	got = col.readKernelLog(context.Background(), o, time.Time{})
	if got.Source != "dmesg" || len(got.Kills) != 1 || got.Kills[0].PID != 2915 {
		t.Errorf("got %+v, want the kill of PID 2915 from dmesg", got)
	}
}
