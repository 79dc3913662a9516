package diskio

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixture returns the path of testdata/diskio/<elem...> at the repository root.
func fixture(elem ...string) string {
	return filepath.Join(append([]string{"..", "testdata", "diskio"}, elem...)...)
}

func names(disks []Disk) []string {
	var n []string
	for _, d := range disks {
		n = append(n, d.Name)
	}
	return n
}

func TestDisksPollFixture(t *testing.T) {
	c, err := NewDiskCollector(fixture("poll", "t0", "proc"), fixture("poll", "sys"), DiskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Disks()
	if err != nil {
		t.Fatal(err)
	}
	// "254 0 vda 89983 23257 5526546 53249 56417 38357 4616552 41197 0 24668 96845 ..."
	want := []Disk{{
		Name: "vda", Reads: 89983, Writes: 56417,
		ReadBytes: 5526546 * 512, WriteBytes: 4616552 * 512,
		IOTicks: 24668 * time.Millisecond, TimeInQueue: 96845 * time.Millisecond,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Disks() mismatch (-want +got):\n%s", diff)
	}
}

func TestDiskRatesPollFixture(t *testing.T) {
	read := func(snap string) Disk {
		c, err := NewDiskCollector(fixture("poll", snap, "proc"), fixture("poll", "sys"), DiskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Disks()
		if err != nil || len(d) != 1 {
			t.Fatalf("Disks() = %v, %v; want vda only", d, err)
		}
		return d[0]
	}
	r, ok := DiskRates(read("t0"), read("t1"), time.Second)
	if !ok {
		t.Fatal("DiskRates not ok")
	}
	// Hand-computed in testdata/diskio/poll/SOURCE.
	want := DiskRate{
		Name:             "vda",
		ReadBytesPerSec:  4608 * 512, // 2359296
		WriteBytesPerSec: 4680 * 512, // 2396160
		ReadIOPS:         9,
		WriteIOPS:        27,
		Busy:             0.012,
		IOTimePerSec:     0.016,
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("DiskRates mismatch (-want +got):\n%s", diff)
	}
	// Half the rate over two seconds.
	r2, _ := DiskRates(read("t0"), read("t1"), 2*time.Second)
	if r2.WriteBytesPerSec != 1198080 || r2.Busy != 0.006 {
		t.Errorf("over 2 s: write %v B/s busy %v, want 1198080 and 0.006", r2.WriteBytesPerSec, r2.Busy)
	}
}

func TestDiskRatesNeverNegative(t *testing.T) {
	prev := Disk{Name: "sda", Reads: 100, ReadBytes: 4096, IOTicks: time.Second}
	cur := Disk{Name: "sda", Reads: 5, ReadBytes: 512, IOTicks: 10 * time.Millisecond} // reset
	if r, ok := DiskRates(prev, cur, time.Second); ok {
		t.Errorf("counter reset: got ok with %+v", r)
	}
	if _, ok := DiskRates(prev, prev, 0); ok {
		t.Error("dt=0: got ok")
	}
	if _, ok := DiskRates(prev, Disk{Name: "sdb", Reads: 200}, time.Second); ok {
		t.Error("different devices: got ok")
	}
	// io_ticks can exceed wall time by the jitter of reading; busy stays <= 1.
	r, ok := DiskRates(Disk{Name: "sda"}, Disk{Name: "sda", IOTicks: 1010 * time.Millisecond}, time.Second)
	if !ok || r.Busy != 1 {
		t.Errorf("busy = %v (ok %v), want capped at 1", r.Busy, ok)
	}
}

func TestDiskFilter(t *testing.T) {
	proc, sys := fixture("partitions", "proc"), fixture("partitions", "sys")
	tests := []struct {
		name   string
		filter DiskFilter
		want   []string
	}{
		{"default", DiskFilter{}, []string{"sda", "nvme0n1", "dm-0", "md0", "sr0"}},
		{"partitions", DiskFilter{Partitions: true}, []string{"sda", "sda1", "sda2", "nvme0n1", "nvme0n1p1", "nvme0n1p2", "dm-0", "md0", "sr0"}},
		{"virtual", DiskFilter{Virtual: true}, []string{"loop0", "ram0", "sda", "nvme0n1", "dm-0", "md0", "zram0", "sr0"}},
		{"all", DiskFilter{Partitions: true, Virtual: true}, []string{"loop0", "ram0", "sda", "sda1", "sda2", "nvme0n1", "nvme0n1p1", "nvme0n1p2", "dm-0", "md0", "zram0", "sr0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewDiskCollector(proc, sys, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Disks()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no /sys/block: by name", func(t *testing.T) {
		c, err := NewDiskCollector(proc, t.TempDir(), DiskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Disks()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"sda", "nvme0n1", "dm-0", "md0", "sr0"}, names(got)); diff != "" {
			t.Errorf("devices (-want +got):\n%s", diff)
		}
	})
	// The sda line: 236519 reads, 14733012 sectors read, 1049301 writes,
	// 43712586 sectors written, io_ticks 987620 ms, weighted 1664120 ms.
	c, _ := NewDiskCollector(proc, sys, DiskFilter{})
	got, _ := c.Disks()
	want := Disk{Name: "sda", Reads: 236519, Writes: 1049301, ReadBytes: 7543302144, WriteBytes: 22380844032,
		IOTicks: 987620 * time.Millisecond, TimeInQueue: 1664120 * time.Millisecond}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("sda (-want +got):\n%s", diff)
	}
	// nvme0n1 has 2 requests in flight.
	if got[1].InFlight != 2 {
		t.Errorf("nvme0n1 in flight = %d, want 2", got[1].InFlight)
	}
}

func TestDisksMissingFile(t *testing.T) {
	dir := t.TempDir()
	c, err := NewDiskCollector(dir, dir, DiskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Disks(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Disks() on an empty root: err = %v, want not-exist", err)
	}
	if _, err := NewDiskCollector(filepath.Join(dir, "nope"), dir, DiskFilter{}); err == nil {
		t.Error("NewDiskCollector on a missing proc root: no error")
	}
}
