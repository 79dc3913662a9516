package diskio

// /proc/diskstats, one line per block device (kernel >= 5.5, 20 fields; 4.18
// has 18, older 14):
//
//	254       0 vda 89983 23257 5526546 53249 56417 38357 4616552 41197 0 24668 96845 6817 47 2342880 2149 3418 248
//
// major minor name, then reads completed, reads merged, sectors read, ms
// reading, writes completed, writes merged, sectors written, ms writing,
// I/Os in flight, ms doing I/O (io_ticks), weighted ms doing I/O, then
// discard and flush fields. Sectors are 512 bytes whatever the device's
// sector size. Sources: https://docs.kernel.org/admin-guide/iostats.html,
// https://docs.kernel.org/admin-guide/abi-testing.html (procfs-diskstats).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// sectorSize is the unit of the sector fields of /proc/diskstats: always
// 512 bytes (include/linux/blk_types.h SECTOR_SHIFT = 9), independent of
// the device's logical block size.
const sectorSize = 512

// DiskFilter says which devices of /proc/diskstats [DiskCollector.Disks]
// returns. The zero value is the default of `memdiag watch`: whole disks
// only, without loop, ram and zram devices, so that one write is counted
// once (a partition's I/O is also in its disk's line) and no memory-backed
// device looks like disk I/O. Device-mapper (dm-*) and md devices are whole
// devices and are kept; their I/O also appears on the disks beneath them,
// as it does in iostat.
type DiskFilter struct {
	Partitions bool // also return partitions (sda1, nvme0n1p2, ...)
	Virtual    bool // also return loop*, ram* and zram* devices
}

// virtualPrefixes are name prefixes of memory- or file-backed devices
// excluded unless DiskFilter.Virtual is set.
var virtualPrefixes = []string{"loop", "ram", "zram"}

// partitionName matches the kernel's partition naming when /sys/block is
// not available to tell: a disk name ending in a letter plus a number
// (sda1, vdb2, xvda1, hdc3) or a name ending in a digit plus p<number>
// (nvme0n1p2, mmcblk0p1, loop0p1, nbd0p1).
var partitionName = regexp.MustCompile(`^(?:(?:sd|hd|vd|xvd)[a-z]+[0-9]+|.*[0-9]p[0-9]+)$`)

// DiskCollector reads /proc/diskstats.
type DiskCollector struct {
	fs      blockdevice.FS
	path    string // <procRoot>/diskstats, for errors
	sysRoot string
	filter  DiskFilter
	hasSys  bool
}

// NewDiskCollector returns a collector reading <procRoot>/diskstats and
// telling whole disks from partitions by <sysRoot>/block/<name>, which the
// kernel creates for whole disks only. If <sysRoot>/block does not exist
// (no sysfs in a container), partitions are recognised by name instead
// (see the partitionName pattern). It fails if procRoot or sysRoot is not
// a directory.
func NewDiskCollector(procRoot, sysRoot string, f DiskFilter) (*DiskCollector, error) {
	fs, err := blockdevice.NewFS(procRoot, sysRoot)
	if err != nil {
		return nil, fmt.Errorf("diskstats: %w", err)
	}
	_, err = os.Stat(filepath.Join(sysRoot, "block"))
	return &DiskCollector{fs: fs, path: filepath.Join(procRoot, "diskstats"), sysRoot: sysRoot, filter: f, hasSys: err == nil}, nil
}

// Disks reads /proc/diskstats once and returns the devices the filter
// selects, in the file's order, with sectors converted to bytes and
// milliseconds to durations. An error names the file (and the line of
// a malformed one) once; the caller adds what it was reading for.
func (c *DiskCollector) Disks() ([]Disk, error) {
	// procfs opens without O_NONBLOCK and follows links: vet the file in
	// the jail first (a FIFO, a device or a link out of the root).
	if err := rootfs.Check(filepath.Dir(c.path), "diskstats"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	stats, err := c.fs.ProcDiskstats()
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err // "open <path>: …" names the file
		}
		if n := malformedLine(c.path); n > 0 {
			return nil, fmt.Errorf("%s:%d: malformed line: %w", c.path, n, err)
		}
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	disks := make([]Disk, 0, len(stats))
	for _, s := range stats {
		if !c.keep(s.DeviceName) {
			continue
		}
		if err := checkStats(s); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", c.path, s.DeviceName, err)
		}
		disks = append(disks, diskFromStats(s))
	}
	return disks, nil
}

// malformedLine is the 1-based number of the first line of the file at
// path that procfs's diskstats parser (blockdevice.FS.ProcDiskstats, whose
// error names no line) refuses: the same fmt.Sscanf format into the same
// types, a short line (io.EOF) accepted as procfs does. 0 when the file is
// unreadable now or no line fails.
func malformedLine(path string) int {
	b, err := rootfs.ReadPath(context.Background(), path, rootfs.ProcLimit)
	if err != nil {
		return 0
	}
	var (
		major, minor uint32
		name         string
		v            [17]uint64
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		_, err := fmt.Sscanf(sc.Text(), procfsDiskstatsFormat, &major, &minor, &name,
			&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10],
			&v[11], &v[12], &v[13], &v[14], &v[15], &v[16])
		if err != nil && !errors.Is(err, io.EOF) {
			return n
		}
	}
	return 0
}

// procfsDiskstatsFormat is prometheus/procfs's blockdevice/stats.go
// procDiskstatsFormat (unexported there).
const procfsDiskstatsFormat = "%d %d %s %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d"

func (c *DiskCollector) keep(name string) bool {
	if !c.filter.Virtual {
		for _, p := range virtualPrefixes {
			if strings.HasPrefix(name, p) {
				return false
			}
		}
	}
	if !c.filter.Partitions && c.isPartition(name) {
		return false
	}
	return true
}

// isPartition reports whether name is not a whole disk: /sys/block has an
// entry for every whole disk and none for partitions. /proc/diskstats
// writes '/' in names (cciss/c0d0) where sysfs writes '!'.
func (c *DiskCollector) isPartition(name string) bool {
	if !c.hasSys {
		return partitionName.MatchString(name)
	}
	_, err := os.Lstat(filepath.Join(c.sysRoot, "block", strings.ReplaceAll(name, "/", "!")))
	return err != nil
}

// checkStats refuses counters that would wrap when converted: sectors past
// 2^64 bytes, milliseconds past time.Duration's 292 years. No kernel writes
// them, but a file under --root can.
func checkStats(s blockdevice.Diskstats) error {
	for _, c := range []struct {
		name string
		v    uint64
	}{{"sectors read", s.ReadSectors}, {"sectors written", s.WriteSectors}} {
		if c.v > math.MaxUint64/sectorSize {
			return fmt.Errorf("%d %s is past 2^64 bytes", c.v, c.name)
		}
	}
	for _, c := range []struct {
		name string
		v    uint64
	}{{"ms doing I/O", s.IOsTotalTicks}, {"weighted ms doing I/O", s.WeightedIOTicks}} {
		if c.v > math.MaxInt64/uint64(time.Millisecond) {
			return fmt.Errorf("%d %s is past 292 years", c.v, c.name)
		}
	}
	return nil
}

func diskFromStats(s blockdevice.Diskstats) Disk {
	return Disk{
		Name:        s.DeviceName,
		Reads:       s.ReadIOs,
		Writes:      s.WriteIOs,
		ReadBytes:   s.ReadSectors * sectorSize,
		WriteBytes:  s.WriteSectors * sectorSize,
		IOTicks:     time.Duration(s.IOsTotalTicks) * time.Millisecond,
		TimeInQueue: time.Duration(s.WeightedIOTicks) * time.Millisecond,
		InFlight:    s.IOsInProgress,
	}
}

// DiskRate is one device's activity over an interval, derived from two
// [Disk] readings by [DiskRates].
type DiskRate struct {
	Name             string  `json:"name"`
	ReadBytesPerSec  float64 `json:"read_bytes_per_s"`
	WriteBytesPerSec float64 `json:"write_bytes_per_s"`
	ReadIOPS         float64 `json:"read_iops"`  // completed reads per second
	WriteIOPS        float64 `json:"write_iops"` // completed writes per second
	// Busy is the share of the interval (0..1) with at least one request
	// in flight: Δio_ticks / Δwall ("%util" of iostat). On devices that
	// serve requests in parallel (SSD, NVMe, RAID) 1 does not mean saturated.
	Busy float64 `json:"busy"`
	// IOTimePerSec is Δ(weighted ms doing I/O) / Δwall in seconds per
	// second: the average number of requests in flight or queued
	// ("aqu-sz" of iostat, the "disk I/O time/s" of dashboards).
	IOTimePerSec float64 `json:"io_time_per_s"`
}

// DiskRates computes the rates of one device between two readings dt
// apart. It returns ok=false if dt is not positive, the names differ, or
// any counter went backwards (device removed and re-added, counter reset
// or 32-bit wrap), so a caller never sees a negative or huge rate. Busy is
// capped at 1 to absorb the jitter between reading the file and taking the
// timestamp.
func DiskRates(prev, cur Disk, dt time.Duration) (r DiskRate, ok bool) {
	if dt <= 0 || prev.Name != cur.Name ||
		cur.Reads < prev.Reads || cur.Writes < prev.Writes ||
		cur.ReadBytes < prev.ReadBytes || cur.WriteBytes < prev.WriteBytes ||
		cur.IOTicks < prev.IOTicks || cur.TimeInQueue < prev.TimeInQueue {
		return DiskRate{Name: cur.Name}, false
	}
	sec := dt.Seconds()
	r = DiskRate{
		Name:             cur.Name,
		ReadBytesPerSec:  float64(cur.ReadBytes-prev.ReadBytes) / sec,
		WriteBytesPerSec: float64(cur.WriteBytes-prev.WriteBytes) / sec,
		ReadIOPS:         float64(cur.Reads-prev.Reads) / sec,
		WriteIOPS:        float64(cur.Writes-prev.Writes) / sec,
		Busy:             min(float64(cur.IOTicks-prev.IOTicks)/float64(dt), 1),
		IOTimePerSec:     float64(cur.TimeInQueue-prev.TimeInQueue) / float64(dt),
	}
	return r, true
}
