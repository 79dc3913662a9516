package testutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/fixtures"
)

// WriteProc writes a fake process into proc, a fixture /proc built in
// t.TempDir(): proc/<pid>/stat and, beside it, each of files (name →
// content: "cmdline", "comm", "io", "cgroup", ...).
//
// The stat line is a real one, python3's from kernel 6.18
// (testdata/diskio/poll/t1/proc/15706/stat; see its SOURCE), with field
// 1 (pid), 2 (comm), 4 (ppid) and 22 (starttime, in clock ticks after
// boot) replaced (proc_pid_stat(5)). Every other field is python3's.
func WriteProc(t testing.TB, proc string, pid, ppid int, start uint64, comm string, files map[string]string) {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(fixtures.Root(t, "diskio"), "poll", "t1", "proc", "15706", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(tmpl))
	f[0], f[1], f[3], f[21] = strconv.Itoa(pid), "("+comm+")", strconv.Itoa(ppid), strconv.FormatUint(start, 10)
	dir := filepath.Join(proc, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(strings.Join(f, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
