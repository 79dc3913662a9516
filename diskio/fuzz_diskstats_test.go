package diskio

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/testutil"
)

// FuzzDiskstats runs what watch runs every interval, DiskCollector.Disks
// (prometheus/procfs's blockdevice reader and parser, then the filter and
// the sector-to-byte conversion), over any /proc/diskstats. procfs exports
// no parser over bytes, so each input is written to <proc>/diskstats of a
// root made once per fuzzing worker. It checks that nothing panics or
// hangs, that an error names the file, and that each device kept has the
// read and write bytes written, 512 per sector, never wrapped past 2^64.
func FuzzDiskstats(f *testing.F) {
	testutil.Seed[[]byte](f, "../testdata/linux-6.18/proc/diskstats")
	f.Add([]byte("8 0 sda 1 0 36028797018963968 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n"))
	f.Add([]byte("8 0 sda -1 0 1 0 1 0 8 0 0 0 0\n"))
	root := testutil.FuzzRoot(f, "proc", "sys")
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	path := filepath.Join(proc, "diskstats")
	c, err := NewDiskCollector(proc, sys, DiskFilter{Partitions: true, Virtual: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		testutil.WriteInput(t, path, b)
		disks, err := c.Disks()
		if err != nil {
			if !strings.Contains(err.Error(), "diskstats") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, d := range disks {
			// A name may be on several lines: d must be one of them.
			var lines int
			found := false
			for _, l := range strings.Split(string(b), "\n") {
				// fmt.Sscanf reads runes: each invalid UTF-8 byte of a
				// name becomes U+FFFD, as string([]rune(name)) does.
				fs := strings.Fields(l)
				if len(fs) < 14 || string([]rune(fs[2])) != d.Name {
					continue
				}
				lines++
				if sectorBytes(fs[5]) == d.ReadBytes && sectorBytes(fs[9]) == d.WriteBytes {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("disk %q (%d bytes read, %d written) matches none of its %d lines of 14 fields or more", d.Name, d.ReadBytes, d.WriteBytes, lines)
			}
		}
	})
}

// sectorBytes is a decimal sector count in bytes, or 1 (never a multiple of
// 512) when it does not parse or would wrap past 2^64.
func sectorBytes(field string) uint64 {
	n, err := strconv.ParseUint(field, 10, 64)
	if err != nil || n > math.MaxUint64/sectorSize {
		return 1
	}
	return n * sectorSize
}

// TestDiskstatsFuzzFindings: what FuzzDiskstats found. 2^55 sectors read
// became 0 bytes (512 × 2^55 wraps past 2^64); such a line is refused. It
// also found two lines of one name (same-name-twice in testdata): both
// are kept, in the file's order.
func TestDiskstatsFuzzFindings(t *testing.T) {
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	if err := os.MkdirAll(proc, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "sys"), 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := NewDiskCollector(proc, filepath.Join(root, "sys"), DiskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(proc, "diskstats"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("8 0 sda 1 0 36028797018963968 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n")
	if d, err := c.Disks(); err == nil || !strings.Contains(err.Error(), "sda: 36028797018963968 sectors read is past 2^64 bytes") {
		t.Errorf("Disks = %+v, %v; want sda refused", d, err)
	}
	write("8 0 sda 1 0 36028797018963967 0 1 0 8 0 0 5 7 0 0 0 0 0 0\n")
	if d, err := c.Disks(); err != nil || len(d) != 1 || d[0].ReadBytes != 36028797018963967*512 || d[0].WriteBytes != 4096 || d[0].IOTicks != 5*time.Millisecond {
		t.Errorf("Disks = %+v, %v", d, err)
	}
	write("8 0 sda 1 0 2 0 1 0 8 0 0 5 7\n8 0 sda 1 0 3 0 1 0 9 0 0 5 7\n")
	if d, err := c.Disks(); err != nil || len(d) != 2 || d[0].ReadBytes != 1024 || d[1].ReadBytes != 1536 || d[1].WriteBytes != 9*512 {
		t.Errorf("Disks = %+v, %v; want both sda lines in order", d, err)
	}
}
