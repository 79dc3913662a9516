package swap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdiag/memdiag/internal/fixtures"
)

// Values from each fixture's proc/swaps (sizes there are KiB).
func TestSwaps(t *testing.T) {
	tests := []struct {
		fixture string
		want    []Device
	}{
		{"linux-6.18", []Device{}}, // header line only: no swap
		{"linux-6.18-hog-t0", []Device{{
			Filename: "/var/tmp/lru-fixture.swap", Type: "file",
			SizeBytes: 262140 * 1024, UsedBytes: 97264 * 1024, Priority: -2,
		}}},
		{"node-exporter-old", []Device{{
			Filename: "/dev/zram0", Type: "partition",
			SizeBytes: 8388604 * 1024, UsedBytes: 76 * 1024, Priority: 100,
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := Swaps(fixtures.Proc(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Swaps() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSwapsErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		if _, err := Swaps(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Swaps() error = %v, want os.ErrNotExist", err)
		}
	})
	t.Run("malformed names the file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "swaps")
		content := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/swapfile file 1024 lots -2\n"
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Swaps(dir)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("Swaps() error = %v, want prefix %q", err, path+": ")
		}
	})
}
