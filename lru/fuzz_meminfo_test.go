package lru

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memdiag/memdiag/internal/testutil"
)

// FuzzMeminfo runs what watch runs every interval, Collector.Meminfo
// (prometheus/procfs's reader and parser, then fromProcfs), over any
// /proc/meminfo. procfs exports no parser over bytes, so each input is
// written to <dir>/meminfo of a proc root made once per fuzzing worker.
// It checks that nothing panics or hangs, that an error names the file,
// and that every kept value is the number written, times 1024 for "kB".
func FuzzMeminfo(f *testing.F) {
	testutil.Seed[[]byte](f, "../testdata/linux-6.18/proc/meminfo", "../testdata/linux-3.x-goprocinfo/proc/meminfo", "../testdata/node-exporter-old/proc/meminfo")
	f.Add([]byte("MemTotal: 18446744073709551615 kB\n"))
	f.Add([]byte("MemTotal: 0x10 kB\nMemFree: 1_000\n"))
	dir := testutil.FuzzRoot(f)
	path := filepath.Join(dir, "meminfo")
	c, err := NewCollector(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		testutil.WriteInput(t, path, b)
		m, err := c.Meminfo()
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// The last line naming a field wins.
		last := map[string][]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if fs := strings.Fields(l); len(fs) >= 2 {
				last[fs[0]] = fs
			}
		}
		for name, got := range map[string]*uint64{"MemTotal:": m.MemTotal, "MemAvailable:": m.MemAvailable, "Active(file):": m.ActiveFile, "SwapFree:": m.SwapFree} {
			fs, ok := last[name]
			if !ok {
				if got != nil {
					t.Fatalf("%s = %d, not written", name, *got)
				}
				continue
			}
			if got == nil {
				t.Fatalf("%s written %q, not kept", name, fs)
			}
			n, err := strconv.ParseUint(fs[1], 0, 64)
			if err != nil {
				t.Fatalf("%s = %d, written %q", name, *got, fs[1])
			}
			if len(fs) == 3 {
				if n > math.MaxUint64/1024 {
					t.Fatalf("%s = %d, written %s kB: past 2^64 bytes", name, *got, fs[1])
				}
				n *= 1024
			}
			if n != *got {
				t.Fatalf("%s = %d, written %q", name, *got, fs)
			}
		}
	})
}

// TestMeminfoFuzzFindings: what FuzzMeminfo found. procfs multiplies a kB
// value by 1024 without checking, so 2^64-1 kB became 2^64-1024 bytes.
func TestMeminfoFuzzFindings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte("MemTotal: 8 kB\nMemFree: 18014398509481984 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := NewCollector(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Meminfo()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "meminfo")+": MemFree: 18014398509481984 kB is past 2^64 bytes") {
		t.Errorf("Meminfo = %+v, %v; want MemFree refused, naming the file", m, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte("MemTotal: 8 kB\nMemFree: 18014398509481983 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Meminfo(); err != nil || *m.MemTotal != 8192 || *m.MemFree != 18014398509481983*1024 {
		t.Errorf("Meminfo of the largest kB value: %+v, %v", m, err)
	}
}
