package cmd

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// TestWatchSourceOrder: watch samples its sources, and lists its
// collectors in the header, in the order of watchSourceOrder, whatever
// the files defining them are called. The fixture root is a real 6.18
// /proc (testdata/linux-6.18/SOURCE) with no processes in it.
func TestWatchSourceOrder(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	o := &watchOptions{
		F:           &factory{IO: ios, Now: time.Now, Root: "../testdata/linux-6.18"},
		Interval:    time.Second,
		TopN:        5,
		NoTimers:    true,
		Events:      "off",
		LatencyFile: filepath.Join(t.TempDir(), "hey.csv"), // never created
	}
	ws, h, err := buildWatchSources(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.close()
	var got []string
	for _, s := range ws.list {
		got = append(got, s.Name())
	}
	// diskstats is in the header but not sampled: the fixture has no
	// /sys/block to tell disks from partitions.
	want := []string{"psi", "lru", "oom-kills", "latency", "procs"}
	if !slices.Equal(got, want) {
		t.Errorf("sources = %v, want %v", got, want)
	}
	var cols []string
	for _, c := range h.Collectors {
		cols = append(cols, c.Name)
	}
	wantCols := []string{"psi", "meminfo", "vmstat", "swaps", "diskstats", "procs"}
	if !slices.Equal(cols, wantCols) {
		t.Errorf("header collectors = %v, want %v", cols, wantCols)
	}
}
