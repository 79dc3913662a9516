package diskio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/fixtures"
	"github.com/memdiag/memdiag/process"
)

// TestTopRSS ranks by stat's resident pages and splits RSS from status:
// /proc/PID/{stat,status} of two real processes (memstate's host618
// fixture: a hog in a 64 MiB cgroup and a sleep), each with a real
// /proc/PID/io file from the diskio poll fixture so the scanner keeps them.
func TestTopRSS(t *testing.T) {
	proc := filepath.Join(t.TempDir(), "proc")
	src := filepath.Join(fixtures.Dir(t), "..", "memstate", "testdata", "host618", "proc")
	io, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "diskio", "poll", "t0", "proc", "9225", "io"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []string{"12762", "13604"} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"stat", "status", "cgroup", "cmdline"} {
			b, err := os.ReadFile(filepath.Join(src, pid, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(proc, pid, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "io"), io, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewProcScanner(proc, ProcScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Scan(time.Now()); err != nil {
		t.Fatal(err)
	}
	const k = 1024
	// Values of the RssAnon/RssFile/RssShmem and Threads lines of the two status files;
	// stat field 24 (rss pages) orders them: 5535 pages before 390. The
	// cgroups are their cgroup files' (the hog's v1 memory group).
	want := []process.RSS{
		{PID: 12762, StartTicks: 49399, Comm: "memdiag-mem-hog", AnonBytes: 20620 * k, FileBytes: 1660 * k, Cgroup: "/memdiag-mem-fixture", Threads: 5},
		{PID: 13604, StartTicks: 51601, Comm: "sleep", AnonBytes: 108 * k, FileBytes: 1624 * k, Cgroup: "/", Threads: 1},
	}
	if d := cmp.Diff(want, s.TopRSS(10)); d != "" {
		t.Errorf("TopRSS (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[:1], s.TopRSS(1)); d != "" {
		t.Errorf("TopRSS(1) (-want +got):\n%s", d)
	}
}

// writeRSSProc writes a process of the real python3 writer's stat (as
// writeProc) with its resident pages (stat field 24) set and a status
// file whose RssAnon is those pages (4 KiB each) and RssFile 1 MiB.
func writeRSSProc(t testing.TB, dir string, pid int, pages uint64) {
	t.Helper()
	writeProc(t, dir, pid, 1, uint64(pid), fmt.Sprintf("p%d", pid), 0, 0)
	d := filepath.Join(dir, fmt.Sprint(pid))
	b, err := os.ReadFile(filepath.Join(d, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	f[23] = fmt.Sprint(pages)
	status := fmt.Sprintf("Name:\tp%d\nRssAnon:\t%d kB\nRssFile:\t1024 kB\nRssShmem:\t0 kB\n", pid, pages*4)
	for name, content := range map[string]string{"stat": strings.Join(f, " ") + "\n", "status": status} {
		if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRSSGrowthCandidates: ten large steady processes and, below them,
// one growing 100 pages (400 KiB) a scan, one that jumps 600 pages and
// falls back, and one that grows 600 pages once and then holds. With the
// top 3 by RSS asked for, RSS returns the three largest and, from the
// scan in which each first stands 1 MiB (256 pages) above its lowest at a
// new high, the small growers (most grown first), each reported fresh
// once; the spike and the step stay followed until GrowthIdle (5 s) has
// passed without a new high, and the step's baseline then starts again.
func TestRSSGrowthCandidates(t *testing.T) {
	if os.Getpagesize() != 4096 {
		t.Skip("the fixture counts 4 KiB pages")
	}
	dir := t.TempDir()
	const slow, spike, step = 200, 201, 202
	for i := range 10 {
		writeRSSProc(t, dir, 100+i, 100000-uint64(i))
	}
	s, err := NewProcScanner(dir, ProcScanOptions{GrowthIdle: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	top := []int{100, 101, 102}
	for i, sc := range []struct {
		slow, spike, step uint64
		pids, fresh       []int
	}{
		{1000, 1000, 1000, top, nil}, // baseline
		{1100, 1000, 1000, top, nil}, // slow +100 pages
		{1200, 1600, 1600, append(top, spike, step), []int{spike, step}},
		{1300, 1000, 1600, append(top, step, slow, spike), []int{slow}}, // slow +300: a candidate
		{1400, 1000, 1600, append(top, step, slow, spike), nil},
		{1500, 1000, 1600, append(top, step, slow, spike), nil},
		{1600, 1000, 1600, append(top, slow, step, spike), nil},  // slow as grown as step: lower PID first
		{1700, 1000, 1600, append(top, slow, step, spike), nil},  // 5 s after their high: not yet past
		{1800, 1000, 1600, append(top, slow), nil},               // 6 s: spike and step dropped
		{1900, 1000, 1700, append(top, slow), nil},               // step +100 over its new baseline
		{1900, 1000, 2000, append(top, slow, step), []int{step}}, // +400: a candidate again
	} {
		writeRSSProc(t, dir, slow, sc.slow)
		writeRSSProc(t, dir, spike, sc.spike)
		writeRSSProc(t, dir, step, sc.step)
		if _, _, _, err := s.Scan(t0.Add(time.Duration(i) * time.Second)); err != nil {
			t.Fatal(err)
		}
		out, fresh := s.RSS(3)
		var pids, freshPIDs []int
		for _, r := range out {
			pids = append(pids, r.PID)
			if r.PID == slow && r.AnonBytes != sc.slow*4096 {
				t.Errorf("scan %d: slow's RssAnon %d, want %d", i, r.AnonBytes, sc.slow*4096)
			}
		}
		for _, j := range fresh {
			freshPIDs = append(freshPIDs, out[j].PID)
		}
		if d := cmp.Diff(sc.pids, pids); d != "" {
			t.Errorf("scan %d: RSS PIDs (-want +got):\n%s", i, d)
		}
		if d := cmp.Diff(sc.fresh, freshPIDs); d != "" {
			t.Errorf("scan %d: fresh PIDs (-want +got):\n%s", i, d)
		}
		if got := s.TopRSS(3); len(got) != 3 || got[0].PID != 100 {
			t.Errorf("scan %d: TopRSS(3) = %v, want the three largest only", i, got)
		}
	}
}

// TestRSSGrowthBeyondMax: six small processes grow every scan, each by a
// different amount, under a cap of two growth candidates per call. RSS
// returns the two returned longest ago (the most grown first on a tie),
// so over three calls every grower is returned once, not the two most
// grown every time; GrowthLeftOut counts the four left out of each call.
func TestRSSGrowthBeyondMax(t *testing.T) {
	if os.Getpagesize() != 4096 {
		t.Skip("the fixture counts 4 KiB pages")
	}
	dir := t.TempDir()
	writeRSSProc(t, dir, 100, 100000)
	s, err := NewProcScanner(dir, ProcScanOptions{MaxGrowth: 2})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	// Grower 300+i grows 300·(i+1) pages a scan: past 1 MiB (256 pages)
	// above its lowest from the second scan on; 305 grows most.
	want := [][]int{
		nil,
		{100, 305, 304},
		{100, 303, 302},
		{100, 301, 300},
		{100, 305, 304},
	}
	for n, w := range want {
		for i := range 6 {
			writeRSSProc(t, dir, 300+i, 1000+uint64(n*300*(i+1)))
		}
		if _, _, _, err := s.Scan(t0.Add(time.Duration(n) * time.Second)); err != nil {
			t.Fatal(err)
		}
		out, _ := s.RSS(1)
		var pids []int
		for _, r := range out {
			pids = append(pids, r.PID)
		}
		if n == 0 {
			w = []int{100}
		}
		if d := cmp.Diff(w, pids); d != "" {
			t.Errorf("scan %d: RSS PIDs (-want +got):\n%s", n, d)
		}
		wantOut := 4
		if n == 0 {
			wantOut = 0
		}
		if got := s.GrowthLeftOut(); got != wantOut {
			t.Errorf("scan %d: GrowthLeftOut = %d, want %d", n, got, wantOut)
		}
	}
}
