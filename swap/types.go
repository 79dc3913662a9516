// Package swap reads swap devices (/proc/swaps) and turns the swap-in/out
// counters of /proc/vmstat (pswpin, pswpout; pages) into rates.
//
// Sources: /proc/swaps (mm/swapfile.c, sizes in KiB), /proc/vmstat pswpin
// and pswpout (mm/page_io.c, pages of the host page size), /proc/meminfo
// SwapTotal, SwapFree, SwapCached (see package lru).
package swap

// Device is one line of /proc/swaps, with sizes converted to bytes (the
// file reports KiB).
type Device struct {
	Filename  string `json:"filename"`
	Type      string `json:"type"` // "partition" or "file"
	SizeBytes uint64 `json:"size_bytes"`
	UsedBytes uint64 `json:"used_bytes"`
	Priority  int    `json:"priority"`
}
