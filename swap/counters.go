package swap

import (
	"time"

	"github.com/memdiag/memdiag/lru"
)

// Rate is the swap traffic in one direction between two reads of
// /proc/vmstat. OK is false when the rate is unknown: a counter absent from
// either read, a non-positive interval, or a counter that went backwards
// (reset or wrap); then both rates are 0 and must not be shown as such.
type Rate struct {
	PagesPerSec float64 // pages of the host page size per second
	BytesPerSec float64 // PagesPerSec × page size
	OK          bool
}

// Rates is swap-in (pswpin) and swap-out (pswpout) between two reads.
type Rates struct {
	In  Rate // pages read from swap (pswpin)
	Out Rate // pages written to swap (pswpout)
}

// RatesBetween derives swap-in/out rates from the pswpin and pswpout
// counters of two VMStat reads taken dt apart. pageSize is the host page
// size in bytes (os.Getpagesize(), or the recording header's page_size):
// the kernel counts these in pages (mm/page_io.c, count_vm_events(PSWPOUT,
// nr_pages)).
func RatesBetween(prev, cur *lru.VMStat, dt time.Duration, pageSize int) Rates {
	if prev == nil || cur == nil {
		return Rates{}
	}
	return Rates{
		In:  rate(prev.Pswpin, cur.Pswpin, dt, pageSize),
		Out: rate(prev.Pswpout, cur.Pswpout, dt, pageSize),
	}
}

func rate(prev, cur *uint64, dt time.Duration, pageSize int) Rate {
	if prev == nil || cur == nil || dt <= 0 || *cur < *prev || pageSize <= 0 {
		return Rate{}
	}
	pages := float64(*cur-*prev) / dt.Seconds()
	return Rate{PagesPerSec: pages, BytesPerSec: pages * float64(pageSize), OK: true}
}
