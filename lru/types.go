// Package lru reads the page-cache and reclaim side of memory: the LRU list
// sizes and related figures of /proc/meminfo, and the reclaim, refault and
// OOM counters of /proc/vmstat, mapping counter names that differ between
// kernel versions to one meaning.
//
// Sources: /proc/meminfo (https://docs.kernel.org/filesystems/proc.html,
// "meminfo") and /proc/vmstat (include/linux/vm_event_item.h and
// mm/vmstat.c in the kernel tree; workingset_* in mm/workingset.c).
package lru

// Meminfo is the subset of /proc/meminfo memdiag records, in bytes (the
// file reports kB, which the kernel means as KiB). A nil field is absent on
// the kernel that produced the file, which is distinct from zero.
type Meminfo struct {
	MemTotal     *uint64 `json:"mem_total_bytes,omitempty"`
	MemFree      *uint64 `json:"mem_free_bytes,omitempty"`
	MemAvailable *uint64 `json:"mem_available_bytes,omitempty"` // since 3.14
	Buffers      *uint64 `json:"buffers_bytes,omitempty"`
	Cached       *uint64 `json:"cached_bytes,omitempty"`
	SwapCached   *uint64 `json:"swap_cached_bytes,omitempty"`
	ActiveAnon   *uint64 `json:"active_anon_bytes,omitempty"`
	InactiveAnon *uint64 `json:"inactive_anon_bytes,omitempty"`
	ActiveFile   *uint64 `json:"active_file_bytes,omitempty"`
	InactiveFile *uint64 `json:"inactive_file_bytes,omitempty"`
	Unevictable  *uint64 `json:"unevictable_bytes,omitempty"`
	Dirty        *uint64 `json:"dirty_bytes,omitempty"`
	Writeback    *uint64 `json:"writeback_bytes,omitempty"`
	Shmem        *uint64 `json:"shmem_bytes,omitempty"`
	SwapTotal    *uint64 `json:"swap_total_bytes,omitempty"`
	SwapFree     *uint64 `json:"swap_free_bytes,omitempty"`
}

// FileLRU is Active(file)+Inactive(file) in bytes: the page cache on the
// LRU lists. ok is false if either field is absent.
func (m *Meminfo) FileLRU() (bytes uint64, ok bool) {
	if m == nil || m.ActiveFile == nil || m.InactiveFile == nil {
		return 0, false
	}
	return *m.ActiveFile + *m.InactiveFile, true
}

// AnonLRU is Active(anon)+Inactive(anon) in bytes. ok is false if either
// field is absent.
func (m *Meminfo) AnonLRU() (bytes uint64, ok bool) {
	if m == nil || m.ActiveAnon == nil || m.InactiveAnon == nil {
		return 0, false
	}
	return *m.ActiveAnon + *m.InactiveAnon, true
}

// VMStat holds the /proc/vmstat counters memdiag records, each cumulative
// since boot, mapped to one meaning across kernel versions (see the
// mapping table in vmstat.go). A nil field means no counter with that
// meaning exists on the kernel that produced the file; it is never
// reported as zero.
type VMStat struct {
	PgscanKswapd          *uint64 `json:"pgscan_kswapd_pages,omitempty"`
	PgscanDirect          *uint64 `json:"pgscan_direct_pages,omitempty"`
	PgstealKswapd         *uint64 `json:"pgsteal_kswapd_pages,omitempty"`
	PgstealDirect         *uint64 `json:"pgsteal_direct_pages,omitempty"`
	WorkingsetRefaultFile *uint64 `json:"workingset_refault_file_pages,omitempty"` // workingset_refault before 5.9
	WorkingsetRefaultAnon *uint64 `json:"workingset_refault_anon_pages,omitempty"` // since 5.9
	WorkingsetActivate    *uint64 `json:"workingset_activate_pages,omitempty"`     // file+anon since 5.9
	Pgmajfault            *uint64 `json:"pgmajfault,omitempty"`                    // events
	Allocstall            *uint64 `json:"allocstall,omitempty"`                    // direct reclaim entries; sum of allocstall_* zones
	OOMKill               *uint64 `json:"oom_kill,omitempty"`                      // since 4.13
	Pswpin                *uint64 `json:"pswpin_pages,omitempty"`
	Pswpout               *uint64 `json:"pswpout_pages,omitempty"`

	// Added by the lru collector: the kswapd/direct counters above count
	// global reclaim only; reclaim forced by a cgroup's memory limit (a
	// container's --memory) shows up only in these (since 5.8).
	PgscanAnon  *uint64 `json:"pgscan_anon_pages,omitempty"`
	PgscanFile  *uint64 `json:"pgscan_file_pages,omitempty"`
	PgstealAnon *uint64 `json:"pgsteal_anon_pages,omitempty"`
	PgstealFile *uint64 `json:"pgsteal_file_pages,omitempty"`
	// WorkingsetRestore is refaulted pages that were active before they
	// were evicted (file+anon since 5.9, workingset_restore since 4.20).
	WorkingsetRestore *uint64 `json:"workingset_restore_pages,omitempty"`
}
