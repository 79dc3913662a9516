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

func TestReadKernelLogSources(t *testing.T) {
	// A fixture root reads its dev/kmsg: the one kill of PID 13919
	// (grep "Killed process" testdata/host618/dev/kmsg); no command runs.
	col, err := NewCollector("testdata/host618")
	if err != nil {
		t.Fatal(err)
	}
	got := col.ReadKernelLog(context.Background(), KernelLogOptions{})
	if got.Source != "/dev/kmsg" || got.File || len(got.Kills) != 1 || got.Kills[0].PID != 13919 {
		t.Errorf("dev/kmsg: got source %q, file %v, kills %+v; want the kill of PID 13919", got.Source, got.File, got.Kills)
	}
	// A pasted dmesg -T: both kills (PIDs 18594 and 18602), named by its
	// path, even where the root has a dev/kmsg.
	path := "testdata/oom/host618-shmem-oom.dmesg-T.txt"
	got = col.ReadKernelLog(context.Background(), KernelLogOptions{File: path, LogOptions: LogOptions{Boot: time.Unix(1, 0)}})
	var pids []int
	for _, k := range got.Kills {
		pids = append(pids, k.PID)
	}
	if got.Source != path || !got.File || cmp.Diff([]int{18594, 18602}, pids) != "" {
		t.Errorf("--kernel-log: got source %q, file %v, PIDs %v", got.Source, got.File, pids)
	}
	got = col.ReadKernelLog(context.Background(), KernelLogOptions{File: filepath.Join(t.TempDir(), "none")})
	if !got.File || !strings.Contains(got.Unreadable, "no such file or directory") {
		t.Errorf("missing --kernel-log file: got %+v", got)
	}
}

func TestReadKernelLogCommands(t *testing.T) {
	// No readable dev/kmsg: dmesg, then journalctl -k; empty journalctl
	// output is not "no kills"; without Run no command runs.
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	col, err := NewCollector(root)
	if err != nil {
		t.Fatal(err)
	}
	got := col.ReadKernelLog(context.Background(), KernelLogOptions{})
	if got.Source != "" || got.Unreadable != "open "+root+"/dev/kmsg: no such file or directory" {
		t.Errorf("no Run: got %+v", got)
	}
	var ran [][]string
	o := KernelLogOptions{Run: func(_ context.Context, name string, args ...string) ([]byte, error) {
		ran = append(ran, append([]string{name}, args...))
		if name == "dmesg" {
			return nil, errors.New("dmesg: exit status 1: read kernel buffer failed: Operation not permitted")
		}
		return []byte("\n"), nil
	}}
	got = col.ReadKernelLog(context.Background(), o)
	want := "open " + root + "/dev/kmsg: no such file or directory; dmesg: exit status 1: read kernel buffer failed: Operation not permitted; " +
		"journalctl: no kernel messages (no journal, or no access to it)"
	if got.Source != "" || got.Unreadable != want {
		t.Errorf("got %+v, want unreadable %q", got, want)
	}
	if d := cmp.Diff([][]string{{"dmesg"}, {"journalctl", "-k", "-o", "short-monotonic", "--no-pager", "-q"}}, ran); d != "" {
		t.Errorf("commands run (-want +got):\n%s", d)
	}
	dmesg414, err := os.ReadFile("testdata/oom/dmesg-4.14-memcg.txt")
	if err != nil {
		t.Fatal(err)
	}
	o.Run = func(_ context.Context, name string, _ ...string) ([]byte, error) {
		if name == "dmesg" {
			return nil, errors.New("dmesg: not found")
		}
		return dmesg414, nil
	}
	got = col.ReadKernelLog(context.Background(), o)
	if got.Source != "journalctl -k" || got.Unreadable != "" || len(got.Kills) != 1 || got.Kills[0].PID != 2915 {
		t.Errorf("got %+v, want the kill of PID 2915 from journalctl -k", got)
	}
}
