package diskio

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzDiskstats runs what watch runs every interval, DiskCollector.Disks
// (prometheus/procfs's blockdevice reader and parser, then the filter and
// the sector-to-byte conversion), over any /proc/diskstats. procfs exports
// no parser over bytes, so each input is written to <proc>/diskstats of a
// root made once per fuzzing worker. It checks that nothing panics or
// hangs, that an error names the file, and that each device kept has the
// read and write bytes written, 512 per sector, never wrapped past 2^64.
func FuzzDiskstats(f *testing.F) {
	for _, p := range []string{"../testdata/linux-6.18/proc/diskstats"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("8 0 sda 1 0 36028797018963968 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n"))
	f.Add([]byte("8 0 sda -1 0 1 0 1 0 8 0 0 0 0\n"))
	root := f.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	if err := os.MkdirAll(proc, 0o700); err != nil {
		f.Fatal(err)
	}
	if err := os.MkdirAll(sys, 0o700); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(proc, "diskstats")
	c, err := NewDiskCollector(proc, sys, DiskFilter{Partitions: true, Virtual: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		disks, err := c.Disks()
		if err != nil {
			if !strings.Contains(err.Error(), "diskstats") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, d := range disks {
			var line []string
			for _, l := range strings.Split(string(b), "\n") {
				// fmt.Sscanf reads runes: each invalid UTF-8 byte of a
				// name becomes U+FFFD, as string([]rune(name)) does.
				if fs := strings.Fields(l); len(fs) >= 14 && string([]rune(fs[2])) == d.Name {
					line = fs
					break
				}
			}
			if line == nil {
				t.Fatalf("disk %q is on no line of 14 fields or more", d.Name)
			}
			for _, c := range []struct {
				field string
				got   uint64
			}{{line[5], d.ReadBytes}, {line[9], d.WriteBytes}} {
				n, err := strconv.ParseUint(c.field, 10, 64)
				if err != nil || n > math.MaxUint64/sectorSize || n*sectorSize != c.got {
					t.Fatalf("%s: %d bytes, written %q sectors", d.Name, c.got, c.field)
				}
			}
		}
	})
}

// TestDiskstatsFuzzFindings: what FuzzDiskstats found. 2^55 sectors read
// became 0 bytes (512 × 2^55 wraps past 2^64); such a line is refused.
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
}
