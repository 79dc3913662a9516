package record

import "time"

// Chain is one interval's page-cache chain, traced in the kernel with
// eBPF (package chain) and summed in kernel maps between two samples:
// who added pages to the page cache, whose file pages reclaim took and
// which reclaimer took them, which tasks stalled in reclaim and for how
// long, and who refaulted. Each list holds the interval's change, not a
// cumulative count, so a row is what happened between the previous sample
// and this one. Absent (nil) when the chain was not traced (--ebpf off,
// or the programs could not load: Header.Collectors says why), and in
// recordings made before schema version 2.
//
// Cgroup paths are as /proc/PID/cgroup gives them, relative to the
// hierarchy's root: Cgroup fields are the cgroup v2 (unified) group of a
// task; Memcg fields are the memory cgroup pages are charged to (the v1
// memory controller's group on a hybrid host, the v2 group on a pure v2
// host). "" when the kernel gave none (a page not charged to any group).
//
// Kernel sources: the tracepoints filemap:mm_filemap_add_to_page_cache and
// filemap:mm_filemap_delete_from_page_cache (mm/filemap.c),
// vmscan:mm_vmscan_direct_reclaim_begin/end and
// vmscan:mm_vmscan_memcg_reclaim_begin/end (mm/vmscan.c), and
// workingset_refault (mm/workingset.c);
// https://docs.kernel.org/admin-guide/mm/concepts.html#page-cache and
// https://docs.kernel.org/admin-guide/cgroup-v2.html#memory.
type Chain struct {
	// Adds are the pages added to the page cache in the interval, by the
	// process (thread group) that added them.
	Adds []ChainAdd `json:"adds,omitempty"`
	// Evictions are the file pages reclaim removed from the page cache,
	// by the memory cgroup they were charged to and the reclaimer.
	Evictions []ChainEviction `json:"evictions,omitempty"`
	// Stalls are the time tasks spent in direct reclaim (the host ran
	// short) and in memcg reclaim (a cgroup reached its limit), by
	// process.
	Stalls []ChainStall `json:"stalls,omitempty"`
	// Refaults are the file pages read back in shortly after reclaim took
	// them (the shadow entry said they were recently evicted), by the
	// memory cgroup they were charged to and the process that faulted.
	Refaults []ChainRefault `json:"refaults,omitempty"`
	// Limits are the memory limits of the memory cgroups that added page
	// cache in the interval (ChainAdd.Memcg) and of their ancestors, each
	// group once, sorted by group: v1 memory.limit_in_bytes or v2
	// memory.max, read when the interval's rows are (cgroupfs.MemoryLimits).
	// A group under a limit of its own can never hold more page cache
	// than that limit, however much it adds. Absent in recordings made
	// before they were recorded, and when no adder's group is limited.
	Limits []MemoryLimit `json:"limits,omitempty"`
	// Untraced lists the parts of the chain this kernel would not let
	// memdiag trace ("refaults": fentry/workingset_refault refused),
	// whose lists are then empty for want of data, not for want of
	// events. Absent when every part was traced.
	Untraced []string `json:"untraced,omitempty"`
	// Dropped counts the kernel map updates that found the map full in
	// the interval (their events are missing from the lists above).
	Dropped uint64 `json:"dropped,omitempty"`
	// RunTime is the programs' own kernel run time in the interval
	// (bpf_prog_info run_time_ns, kept while kernel.bpf_stats_enabled
	// is 1); 0 when the kernel does not count it.
	RunTime time.Duration `json:"run_time_ns,omitempty"`
}

// ChainAdd is page-cache pages one process added in an interval.
type ChainAdd struct {
	PID    int    `json:"pid"` // thread group id
	Comm   string `json:"comm"`
	Cgroup string `json:"cgroup,omitempty"` // the adder's cgroup v2 group
	Memcg  string `json:"memcg,omitempty"`  // the memory cgroup the pages were charged to
	Bytes  uint64 `json:"bytes"`            // pages × page size
}

// Reclaimers, ChainEviction.Reclaimer.
const (
	ReclaimKswapd = "kswapd" // background reclaim by kswapd
	ReclaimDirect = "direct" // an allocating task reclaimed because the host ran short
	ReclaimMemcg  = "memcg"  // a task reclaimed because a cgroup reached its limit
	ReclaimOther  = "other"  // a page removed outside reclaim tracing (e.g. proactive memory.reclaim)
)

// ChainEviction is file pages reclaim took from one memory cgroup in an
// interval, by one reclaimer.
type ChainEviction struct {
	Memcg     string `json:"memcg"`      // whose pages: the group they were charged to
	Reclaimer string `json:"reclaimer"`  // ReclaimKswapd, ReclaimDirect, ReclaimMemcg
	PID       int    `json:"pid"`        // the reclaiming process (kswapd's own PID for kswapd)
	Comm      string `json:"comm"`       // the reclaiming process's comm
	Cgroup    string `json:"cgroup"`     // the reclaimer's cgroup v2 group
	ReclMemcg string `json:"recl_memcg"` // the reclaimer's memory cgroup
	Bytes     uint64 `json:"bytes"`
}

// ChainStall is the time one process's tasks spent in reclaim in an
// interval (from each *_reclaim_begin to its *_reclaim_end).
type ChainStall struct {
	PID    int           `json:"pid"`
	Comm   string        `json:"comm"`
	Cgroup string        `json:"cgroup,omitempty"`
	Memcg  string        `json:"memcg,omitempty"`
	Direct time.Duration `json:"direct_ns,omitempty"` // in direct reclaim
	Limit  time.Duration `json:"memcg_ns,omitempty"`  // in memcg (cgroup limit) reclaim
}

// ChainRefault is file pages one process refaulted in an interval, by
// the memory cgroup they were charged to.
type ChainRefault struct {
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
	Cgroup string `json:"cgroup,omitempty"`
	Memcg  string `json:"memcg,omitempty"`
	Bytes  uint64 `json:"bytes"`
}
