package lru

import (
	"os"
	"syscall"
	"testing"
)

// On the machine running the tests, MemTotal from /proc/meminfo must equal
// the total RAM sysinfo(2) reports: both are totalram_pages, one printed
// in KiB, the other in bytes. This checks the unit conversion against a
// second source, on whatever kernel runs the tests.
func TestLiveMemTotalMatchesSysinfo(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo: not Linux")
	}
	c, err := NewCollector("/proc")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	want := uint64(si.Totalram) * uint64(si.Unit)
	if m.MemTotal == nil || *m.MemTotal != want {
		t.Errorf("MemTotal = %v, want %d bytes (sysinfo totalram × mem_unit)", m.MemTotal, want)
	}
}

// On the live kernel every field the mapping fills is non-nil in VMStat,
// and the counters every Linux since 2.6 has are found.
func TestLiveVMStatMatchesMapping(t *testing.T) {
	if _, err := os.Stat("/proc/vmstat"); err != nil {
		t.Skip("no /proc/vmstat: not Linux")
	}
	c, err := NewCollector("/proc")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.VMStatMapping()
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.VMStat()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range vmstatRules {
		got := *r.ptr(v) != nil
		if want := m[r.field] != nil; got != want {
			t.Errorf("%s: VMStat field set = %v, mapping has sources = %v (%v)", r.field, got, want, m[r.field])
		}
	}
	for _, f := range []string{"pgmajfault", "pswpin_pages", "pswpout_pages", "pgscan_kswapd_pages", "pgscan_direct_pages"} {
		if m[f] == nil {
			t.Errorf("mapping[%s] = nil on the live kernel", f)
		}
	}
}
