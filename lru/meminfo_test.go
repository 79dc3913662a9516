package lru

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/internal/fixtures"
)

func u(x uint64) *uint64 { return &x }

// kB converts a value as printed in /proc/meminfo ("kB" means KiB).
func kB(x uint64) *uint64 { return u(x * 1024) }

func newCollector(t testing.TB, fixture string) *Collector {
	t.Helper()
	c, err := NewCollector(fixtures.Proc(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Values copied by hand from each fixture's proc/meminfo.
func TestMeminfo(t *testing.T) {
	tests := []struct {
		fixture string
		want    *Meminfo
	}{
		{"linux-6.18", &Meminfo{
			MemTotal: kB(24684092), MemFree: kB(23657600), MemAvailable: kB(24232104),
			Buffers: kB(28148), Cached: kB(721440), SwapCached: kB(0),
			ActiveAnon: kB(1560), InactiveAnon: kB(78276),
			ActiveFile: kB(272360), InactiveFile: kB(468360),
			Unevictable: kB(16060), Dirty: kB(141004), Writeback: kB(0), Shmem: kB(8856),
			SwapTotal: kB(0), SwapFree: kB(0),
		}},
		{"linux-6.18-hog-t0", &Meminfo{
			MemTotal: kB(24684092), MemFree: kB(22868212), MemAvailable: kB(24068316),
			Buffers: kB(38112), Cached: kB(1326164), SwapCached: kB(200),
			ActiveAnon: kB(1572), InactiveAnon: kB(165956),
			ActiveFile: kB(453092), InactiveFile: kB(902256),
			Unevictable: kB(16100), Dirty: kB(2148), Writeback: kB(0), Shmem: kB(8856),
			SwapTotal: kB(262140), SwapFree: kB(165768),
		}},
		{"ubuntu-17.10-linux-4.13", &Meminfo{
			MemTotal: kB(4042048), MemFree: kB(2551468), MemAvailable: kB(3651940),
			Buffers: kB(33316), Cached: kB(1248984), SwapCached: kB(0),
			ActiveAnon: kB(111080), InactiveAnon: kB(660),
			ActiveFile: kB(99476), InactiveFile: kB(1181220),
			Unevictable: kB(0), Dirty: kB(0), Writeback: kB(0), Shmem: kB(1536),
			SwapTotal: kB(1048572), SwapFree: kB(1048572),
		}},
		// No MemAvailable line in this file: the field stays nil, not 0.
		{"node-exporter-old", &Meminfo{
			MemTotal: kB(3742148), MemFree: kB(225472),
			Buffers: kB(22040), Cached: kB(930888), SwapCached: kB(192504),
			ActiveAnon: kB(2020004), InactiveAnon: kB(883052),
			ActiveFile: kB(213412), InactiveFile: kB(145676),
			Unevictable: kB(32), Dirty: kB(1052), Writeback: kB(0), Shmem: kB(593840),
			SwapTotal: kB(4194300), SwapFree: kB(3155360),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := newCollector(t, tt.fixture).Meminfo()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Meminfo() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFileAndAnonLRU(t *testing.T) {
	m, err := newCollector(t, "linux-6.18-hog-t0").Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	// Active(file) 453092 kB + Inactive(file) 902256 kB.
	if got, ok := m.FileLRU(); !ok || got != (453092+902256)*1024 {
		t.Errorf("FileLRU() = %d, %v; want %d, true", got, ok, (453092+902256)*1024)
	}
	// Active(anon) 1572 kB + Inactive(anon) 165956 kB.
	if got, ok := m.AnonLRU(); !ok || got != (1572+165956)*1024 {
		t.Errorf("AnonLRU() = %d, %v; want %d, true", got, ok, (1572+165956)*1024)
	}
	var empty *Meminfo
	if _, ok := empty.FileLRU(); ok {
		t.Error("nil Meminfo: FileLRU ok = true")
	}
}

func TestMeminfoErrors(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		c, err := NewCollector(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Meminfo()
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Meminfo() error = %v, want os.ErrNotExist", err)
		}
	})
	t.Run("malformed names the file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "meminfo")
		if err := os.WriteFile(path, []byte("MemTotal:       1000 kB\nMemFree: lots kB\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := NewCollector(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Meminfo()
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("Meminfo() error = %v, want it to start with %q", err, path+": ")
		}
	})
	t.Run("root not a directory", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := NewCollector(f); err == nil {
			t.Error("NewCollector(a file) succeeded")
		}
	})
}
