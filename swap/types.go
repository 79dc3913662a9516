// Package swap reads the swap devices of /proc/swaps (files and
// partitions, their size, use and priority). The swap-in/out rates are
// signal catalogue entries (pswpin, pswpout of /proc/vmstat), and
// SwapTotal, SwapFree and SwapCached come with /proc/meminfo (package lru).
//
// Source: /proc/swaps (mm/swapfile.c, sizes in KiB).
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
