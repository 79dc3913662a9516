package memstate

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
)

// activitySnapshot builds a Snapshot from testdata/activity/*.<i>.
func activitySnapshot(t *testing.T, i string) Snapshot {
	t.Helper()
	f, err := os.Open("testdata/activity/vmstat." + i)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := lru.ParseVMStat(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	p, err := psi.ReadFile("testdata/activity/pressure-memory." + i)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/activity/time." + i)
	if err != nil {
		t.Fatal(err)
	}
	sec, frac, _ := strings.Cut(strings.TrimSpace(string(b)), ".")
	s, _ := strconv.ParseInt(sec, 10, 64)
	ns, _ := strconv.ParseInt(frac, 10, 64)
	return Snapshot{Time: time.Unix(s, ns), VMStat: v, PSI: &p}
}

func TestActivityAndAssess(t *testing.T) {
	prev, cur := activitySnapshot(t, "0"), activitySnapshot(t, "1")
	a := NewActivity(prev, cur)
	zero := 0.0
	dt := 1017563753 * time.Nanosecond // 1795988982.699037647 − 1795988981.681473894
	perSec := func(d float64) float64 { return d / dt.Seconds() }
	want := Activity{
		Interval:  dt,
		StallSome: &zero, StallFull: &zero, // PSI totals did not move
		RefaultPages: 1176542 - 1176257, // workingset_refault_file; _anon stayed 1601
		MajorFaults:  3005 - 3002,
		// Every catalogue signal of /proc/vmstat and
		// /proc/pressure/memory, as a rate keyed as analyze and gate key
		// it; all exist on 6.18, so each is known. Only refaults and
		// major faults moved.
		Signals: map[string]float64{
			"psi_memory_some_share": 0, "psi_memory_full_share": 0,
			"direct_reclaim_pages_per_s": 0, "limit_reclaim_pages_per_s": 0, "alloc_reclaim_pages_per_s": 0, "kswapd_reclaim_pages_per_s": 0,
			"reclaimed_pages_per_s":    0, // pgsteal_anon 67092, pgsteal_file 1233383 in both
			"refault_file_pages_per_s": perSec(1176542 - 1176257), "refault_anon_pages_per_s": 0, "workingset_activate_pages_per_s": 0,
			"workingset_restore_pages_per_s": 0, // workingset_restore_file, _anon 0 in both
			"major_faults_events_per_s":      perSec(3005 - 3002), "allocstalls_events_per_s": 0,
			"swap_in_pages_per_s": 0, "swap_out_pages_per_s": 0, "oom_kills_events_per_s": 0,
		},
	}
	if d := cmp.Diff(want, a); d != "" {
		t.Fatalf("Activity (-want +got):\n%s", d)
	}

	c := fixture(t)
	h, _, err := c.Host()
	if err != nil {
		t.Fatal(err)
	}
	v := assess(h, a)
	// 285 refaults in 1.0176 s = 280/s ≥ pressureRefaultsPerSec.
	yes := true
	wantV := Verdict{
		UsedWithCacheBytes: (24684092 - 22807592) * 1024,
		ReclaimableBytes:   (24119332 - 22807592) * 1024,
		InUseBytes:         (24684092 - 24119332) * 1024,
		UnderPressure:      &yes,
		Reasons:            []string{"280 refaults/s"},
		Sentence: `A "used" figure that counts cache would show 1.8 GiB of 23.5 GiB (8 %); 1.3 GiB of it is page cache and slab the kernel gives back on demand, so 551.5 MiB is not available for reuse (processes' anon memory, shmem, kernel memory and reserves).` +
			` Over the last 1s memory was under pressure (280 refaults/s), but the host is not short of it (23.0 GiB available, no host-wide reclaim): the pressure comes from cgroup limits.`,
	}
	if d := cmp.Diff(wantV, v); d != "" {
		t.Errorf("Verdict (-want +got):\n%s", d)
	}
}

func TestAssessCalm(t *testing.T) {
	// host618 and the vmstat read 1 s later: no counter that means pressure moved.
	c := fixture(t)
	h, _, err := c.Host()
	if err != nil {
		t.Fatal(err)
	}
	prev, _, err := c.Snapshot(time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/host618-vmstat-1s-later")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	later, err := lru.ParseVMStat(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	cur := Snapshot{Time: time.Unix(101, 0), VMStat: later, PSI: prev.PSI}
	v := assess(h, NewActivity(prev, cur))
	if v.UnderPressure == nil || *v.UnderPressure || v.Reasons != nil {
		t.Fatalf("UnderPressure = %v, reasons %v; want false", v.UnderPressure, v.Reasons)
	}
	if !strings.HasSuffix(v.Sentence, "Over the last 1s the kernel was not under memory pressure (PSI memory some 0.0 %, 0 refaults, no direct reclaim), so the cache is not the problem.") {
		t.Errorf("Sentence = %q", v.Sentence)
	}
	// Without an interval nothing is claimed about pressure.
	v = assess(h, NewActivity(prev, prev))
	if v.UnderPressure != nil || !strings.Contains(v.Sentence, "Pressure was not measured") {
		t.Errorf("no interval: %+v", v)
	}
}

func TestActivityOldKernelNames(t *testing.T) {
	// Before 4.8 direct reclaim was counted per zone (pgscan_direct_normal,
	// pgscan_direct_dma32) and before 5.9 refaults had one counter;
	// pgscan_direct_throttle counts throttling events, not pages.
	vm := func(s string) *lru.VMStat {
		v, err := lru.ParseVMStat(strings.NewReader(s), "vmstat")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	prev := Snapshot{Time: time.Unix(0, 0), VMStat: vm(
		"pgscan_direct_dma32 10\npgscan_direct_normal 100\npgscan_direct_throttle 5\nallocstall 3\nworkingset_refault 1000\n")}
	cur := Snapshot{Time: time.Unix(2, 0), VMStat: vm(
		"pgscan_direct_dma32 30\npgscan_direct_normal 600\npgscan_direct_throttle 9\nallocstall 7\nworkingset_refault 1100\n")}
	a := NewActivity(prev, cur)
	if a.DirectScanPages != 520 || a.Allocstalls != 4 || a.RefaultPages != 100 || a.StallSome != nil {
		t.Fatalf("Activity = %+v; want 520 direct scan pages, 4 allocstalls, 100 refaults, no PSI", a)
	}
	v := assess(Host{}, a)
	if v.UnderPressure == nil || !*v.UnderPressure || len(v.Reasons) != 1 || v.Reasons[0] != "direct reclaim (4 stalls, 520 pages scanned)" {
		t.Errorf("Verdict = %+v", v)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 64 << 20: "64.0 MiB", 1<<30 + 1<<29: "1.5 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestActivityLimitReclaim(t *testing.T) {
	// 5.8+: cgroup-limit reclaim shows in pgscan_anon/_file only. Figures
	// as read live on this host while a 64 MiB v1 group was OOM-killed:
	// pgscan_file +15360, pgscan_direct and allocstall unchanged.
	vm := func(s string) *lru.VMStat {
		v, err := lru.ParseVMStat(strings.NewReader(s), "vmstat")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	prev := Snapshot{Time: time.Unix(0, 0), VMStat: vm("pgscan_kswapd 10\npgscan_direct 0\npgscan_anon 5\npgscan_file 100\nallocstall_normal 0\n")}
	cur := Snapshot{Time: time.Unix(6, 0), VMStat: vm("pgscan_kswapd 10\npgscan_direct 0\npgscan_anon 5\npgscan_file 15460\nallocstall_normal 0\n")}
	a := NewActivity(prev, cur)
	if a.LimitScanPages != 15360 || a.DirectScanPages != 0 || a.KswapdScanPages != 0 {
		t.Fatalf("Activity = %+v; want 15360 limit-reclaim pages, no direct or kswapd", a)
	}
	plenty := Host{TotalBytes: 24 << 30, AvailableBytes: 21 << 30}
	v := assess(plenty, a)
	if !strings.Contains(v.Sentence, "Over the last 6s memory was under pressure (cgroup-limit reclaim (15360 pages scanned)), but the host is not short of it (21.0 GiB available, no host-wide reclaim): the pressure comes from cgroup limits.") {
		t.Errorf("Sentence = %q", v.Sentence)
	}
	// Short of memory (under 10 % available): host pressure, said so.
	short := Host{TotalBytes: 24 << 30, AvailableBytes: 1 << 30}
	if v := assess(short, a); !strings.Contains(v.Sentence, "the kernel was under memory pressure: cgroup-limit reclaim") {
		t.Errorf("Sentence = %q", v.Sentence)
	}
}
