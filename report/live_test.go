package report

import (
	"strings"
	"testing"
	"time"

	"github.com/memdiag/memdiag/record"
)

func TestLiveUnitsAlign(t *testing.T) {
	// Header names, units and a row's numbers end in the same columns.
	ends := func(line string) []int {
		r := []rune(line)
		var e []int
		for i := range r {
			if r[i] != ' ' && (i+1 == len(r) || r[i+1] == ' ') {
				e = append(e, i)
			}
		}
		return e
	}
	iv := record.Interval{MemSome: 0.5, MemFull: 0.25, IOSome: 0.125, FileLRUBytes: 100 << 20, FileLRUDeltaBytes: -(3 << 20),
		AllocReclaimPerSec: 7, PgscanKswapdPerSec: 8, RefaultFilePerSec: 9, RefaultAnonPerSec: 1,
		SwapOutBytesPerSec: 1 << 20, DiskReadBytesPerSec: 1e6, DiskWriteBytesPerSec: 1e6, DiskBusy: 0.5, Dt: time.Second}
	row := LiveRow(iv, nil, false) // ends with "  -" for no process
	ce, ue, re := ends(LiveColumns), ends(LiveUnits), ends(row)
	// 13 columns; TIME has no unit; TOP-IO starts (not ends) at a fixed place.
	if len(ce) != 13 || len(ue) != 12 || len(re) != 13 {
		t.Fatalf("fields: %d names, %d units, %d values\n%s\n%s\n%s", len(ce), len(ue), len(re), LiveColumns, LiveUnits, row)
	}
	for i := 1; i < 12; i++ {
		if ce[i] != ue[i-1] || ce[i] != re[i] {
			t.Errorf("column %d ends at %d (name), %d (unit), %d (value):\n%s\n%s\n%s", i, ce[i], ue[i-1], re[i], LiveColumns, LiveUnits, row)
		}
	}
}

func TestLiveRowHugeValuesStayApart(t *testing.T) {
	// Values a new user saw live: ΔLRU 1 MiB next to 10,040,844 pages/s of
	// reclaim ran together as "110040844".
	iv := record.Interval{MemSome: 0.5, MemFull: 0.25, IOSome: 0.125, FileLRUBytes: 3039 << 20, FileLRUDeltaBytes: 1 << 20,
		AllocReclaimPerSec: 10040844, PgscanKswapdPerSec: 0, RefaultFilePerSec: 181235, RefaultAnonPerSec: 0,
		SwapOutBytesPerSec: 0, DiskReadBytesPerSec: 0, DiskWriteBytesPerSec: 0, DiskBusy: 0, Dt: time.Second}
	row := LiveRow(iv, nil, false)
	f := strings.Fields(row)
	if len(f) != 13 || f[5] != "1" || f[6] != "10.0M" || f[8] != "181235" {
		t.Errorf("fields %q of row %q; want ΔLRU 1, DIRECT 10.0M, REFAULT 181235 apart", f, row)
	}
	if fitNum(-16654930, 8, 0) != "  -16.7M" || fitNum(12.34, 8, 1) != "    12.3" {
		t.Errorf("fitNum: %q %q", fitNum(-16654930, 8, 0), fitNum(12.34, 8, 1))
	}
}
