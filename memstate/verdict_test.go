package memstate

import (
	"os"
	"slices"
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
		Crossed:            []Crossing{CrossRefaults},
		HostShort:          false, // 23.0 GiB available, no host-wide reclaim
	}
	if d := cmp.Diff(wantV, v); d != "" {
		t.Errorf("Verdict (-want +got):\n%s", d)
	}
}

func TestAssessCalm(t *testing.T) {
	// host618 and the vmstat read 1 s later: no counter that means pressure moved.
	h, prev, cur := calmSnapshots(t)
	v := assess(h, NewActivity(prev, cur))
	if v.UnderPressure == nil || *v.UnderPressure || v.Crossed != nil {
		t.Fatalf("UnderPressure = %v, crossed %v; want false", v.UnderPressure, v.Crossed)
	}
	// Without an interval nothing is claimed about pressure.
	v = assess(h, NewActivity(prev, prev))
	if v.UnderPressure != nil || v.Crossed != nil {
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
	if v.UnderPressure == nil || !*v.UnderPressure || !slices.Equal(v.Crossed, []Crossing{CrossDirectReclaim}) || !v.HostShort {
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
	if !slices.Equal(v.Crossed, []Crossing{CrossLimitReclaim}) || v.HostShort {
		t.Errorf("plenty available: Crossed %v, HostShort %v; want limit reclaim, false", v.Crossed, v.HostShort)
	}
	// Short of memory (under 10 % available): host pressure.
	short := Host{TotalBytes: 24 << 30, AvailableBytes: 1 << 30}
	if v := assess(short, a); !v.HostShort {
		t.Errorf("short host: HostShort false")
	}
}

// calmSnapshots is host618's meminfo and two reads 1 s apart (its
// vmstat, then testdata/host618-vmstat-1s-later): no counter that means
// pressure moved.
func calmSnapshots(t *testing.T) (Host, Snapshot, Snapshot) {
	t.Helper()
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
	return h, prev, Snapshot{Time: time.Unix(101, 0), VMStat: later, PSI: prev.PSI}
}
