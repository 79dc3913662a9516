package memstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSnapshots: one read without an interval; with one, a second read
// after it sees what changed in between (workingset_refault_file 422054
// in testdata/host618/proc/vmstat, set to 422154 between the reads);
// a context done while waiting ends it.
func TestSnapshots(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/host618")); err != nil {
		t.Fatal(err)
	}
	col, err := NewCollector(root)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 21, 44, 0, 0, time.UTC)
	calls := 0
	now := func() time.Time { calls++; return t0.Add(time.Duration(calls) * time.Second) }
	prev, cur, missing, err := col.Snapshots(context.Background(), 0, now, func() { t.Error("between ran without an interval") })
	if err != nil || missing != nil {
		t.Fatal(err, missing)
	}
	if calls != 1 || !prev.Time.Equal(cur.Time) || *prev.VMStat.WorkingsetRefaultFile != 422054 {
		t.Errorf("interval 0: %d reads, prev %v cur %v, refaults %d", calls, prev.Time, cur.Time, *prev.VMStat.WorkingsetRefaultFile)
	}
	path := filepath.Join(root, "proc/vmstat")
	between := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "workingset_refault_file 422054\n", "workingset_refault_file 422154\n", 1)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls = 0
	prev, cur, _, err = col.Snapshots(context.Background(), time.Millisecond, now, between)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || *prev.VMStat.WorkingsetRefaultFile != 422054 || *cur.VMStat.WorkingsetRefaultFile != 422154 || !cur.Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("interval: %d reads, refaults %d then %d at %v", calls, *prev.VMStat.WorkingsetRefaultFile, *cur.VMStat.WorkingsetRefaultFile, cur.Time)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := col.Snapshots(ctx, time.Hour, now, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want %v", err, context.Canceled)
	}
}
