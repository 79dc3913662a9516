package lru

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdiag/memdiag/internal/fixtures"
)

// The collector runs once per second for the whole recording, so its cost
// per call matters. Run with:
//
//	go test ./lru -run '^$' -bench . -benchmem

func BenchmarkVMStat(b *testing.B) {
	c := newCollector(b, "linux-6.18")
	for b.Loop() {
		if _, err := c.VMStat(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseVMStat is the parse alone, on the 6.18 file (192 lines),
// without the collector's reused buffers.
func BenchmarkParseVMStat(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(fixtures.Proc(b, "linux-6.18"), "vmstat"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseVMStat(bytes.NewReader(data), "vmstat"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeminfo(b *testing.B) {
	c := newCollector(b, "linux-6.18")
	for b.Loop() {
		if _, err := c.Meminfo(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVMStatLive reads this host's /proc/vmstat, whose content the
// kernel generates on each read (the fixture is a plain file).
func BenchmarkVMStatLive(b *testing.B) {
	if _, err := os.Stat("/proc/vmstat"); err != nil {
		b.Skip("no /proc/vmstat on this host")
	}
	c, err := NewCollector("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.VMStat(); err != nil {
			b.Fatal(err)
		}
	}
}
