package lru

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadCgroupCountersV1(t *testing.T) {
	// testdata/cgroupv1/SOURCE: websvc's group on kernel 6.18, values read
	// off the files by hand.
	got, err := ReadCgroupCountersV1("testdata/cgroupv1")
	if err != nil {
		t.Fatal(err)
	}
	want := &CgroupV1{
		VMStat:       &VMStat{WorkingsetRefaultAnon: u64(0), WorkingsetRefaultFile: u64(0), Pgmajfault: u64(0), OOMKill: u64(0)},
		FileLRUBytes: u64(8392704),             // total_active_file 0 + total_inactive_file 8392704
		AnonLRUBytes: u64(4096 + 6705152),      // total_active_anon + total_inactive_anon
		Failcnt:      u64(0),                   // memory.failcnt
		LimitBytes:   u64(9223372036854771712), // no limit: PAGE_COUNTER_MAX pages
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Built by hand: refaults and faults counted, only memory.stat.
	dir := t.TempDir()
	stat := "workingset_refault_file 5\ntotal_workingset_refault_file 300\ntotal_workingset_refault_anon 7\n" +
		"total_pgmajfault 12\ntotal_active_file 4096\n"
	if err := os.WriteFile(filepath.Join(dir, "memory.stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadCgroupCountersV1(dir)
	if err != nil {
		t.Fatal(err)
	}
	// total_inactive_file absent: no file LRU (never a half sum).
	want = &CgroupV1{VMStat: &VMStat{WorkingsetRefaultFile: u64(300), WorkingsetRefaultAnon: u64(7), Pgmajfault: u64(12)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Errors name the file.
	if err := os.WriteFile(filepath.Join(dir, "memory.failcnt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCgroupCountersV1(dir); !errors.Is(err, ErrKV) || !strings.Contains(err.Error(), "memory.failcnt:1") {
		t.Errorf("bad failcnt: %v", err)
	}
	if _, err := ReadCgroupCountersV1(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no memory.stat: %v, want os.ErrNotExist", err)
	}
}

// TestReadCgroupCountersHybrid: a v2 group dir under unified/ with no
// memory files reads its v1 memory twin, as before ReadCgroupCountersV1
// was exported.
func TestReadCgroupCountersHybrid(t *testing.T) {
	root := t.TempDir()
	v2, v1 := filepath.Join(root, "unified/g"), filepath.Join(root, "memory/g")
	for _, d := range []string{v2, v1} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(v1, "memory.stat"), []byte("total_pgmajfault 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCgroupCounters(v2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&VMStat{Pgmajfault: u64(3)}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzParseCgroupV1Stat(f *testing.F) {
	b, err := os.ReadFile("testdata/cgroupv1/memory.stat")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("total_active_file 18446744073709551615\ntotal_inactive_file 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cg, err := ParseCgroupV1Stat(bytes.NewReader(b), "memory.stat")
		if err != nil {
			if !errors.Is(err, ErrKV) && !strings.HasPrefix(err.Error(), "memory.stat") {
				t.Fatalf("error neither ErrKV nor naming the file: %v", err)
			}
			return
		}
		if cg.VMStat == nil || cg.Failcnt != nil || cg.LimitBytes != nil {
			t.Fatalf("parse filled fields of other files: %+v", cg)
		}
	})
}
