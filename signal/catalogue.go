// Package signal is the catalogue of memdiag's derived quantities: one
// table of every rate, count and amount memdiag computes from two samples
// of the kernel's cumulative counters, with its name, unit, kernel source
// and document, and the one function that computes it.
//
// Every view reads this table and none recomputes: `analyze`
// (record.Interval), `gate` (its metrics are the entries with a
// [Signal.Gate] name), `mem` (memstate.Activity and its lines), and the JSON
// keys ([Signal.JSONKey]). A new signal is one entry in [Catalogue] plus a
// row in the catalogue test; see CONTRIBUTING.md.
//
// The table follows below's model (facebookincubator/below:
// below/model/src/system.rs computes every rate once from two samples),
// and the field's terms: "direct reclaim" is reclaim by an allocating task
// because the host ran short, "cgroup-limit reclaim" is reclaim by an
// allocating task because its cgroup reached memory.max/memory.high/
// limit_in_bytes. They are two entries, never one number under one name.
//
// Sources: /proc/vmstat, mapped across kernel versions by package lru
// (https://docs.kernel.org/admin-guide/mm/concepts.html, mm/vmstat.c,
// mm/vmscan.c, mm/workingset.c).
package signal

import (
	"math"
	"time"

	"github.com/memdiag/memdiag/lru"
)

// Unit is what one unit of a signal's per-interval delta counts.
type Unit string

// Units of a delta. A rate is the delta per second ("pages/s").
const (
	Pages  Unit = "pages"  // pages of the host page size (Header.PageSize)
	Events Unit = "events" // occurrences (faults, stalls, kills)
)

// Aggregate says how a signal is judged over a whole run, for gate: its
// rate (delta per second of wall time) or its total.
type Aggregate int

// Aggregates.
const (
	Rate  Aggregate = iota // Σdelta / Σwall, per second
	Total                  // Σdelta; for Pages, converted to bytes
)

// Signal is one derived quantity: an amount per interval computed from
// two samples' cumulative /proc/vmstat counters.
type Signal struct {
	// Name is the signal's stable key ("direct_reclaim"): JSON keys,
	// flags and test names derive from it. Never renamed.
	Name string
	// Title is the human name, in the field's terms ("direct reclaim").
	Title string
	// Unit is what the delta counts; rates are Unit per second.
	Unit Unit
	// Gate is the `memdiag gate` metric name, "" if gate does not offer it.
	Gate string
	// Aggregate is how gate judges the signal over a run.
	Aggregate Aggregate
	// Counters are the /proc/vmstat counters read (lru.VMStat JSON names),
	// for messages ("no pgscan_direct counter").
	Counters []string
	// Computed says how the value comes from two samples, as a formula.
	Computed string
	// Doc is one sentence for help and reports: what the signal means.
	Doc string
	// Kernel is the kernel source file that counts it; URL its document.
	Kernel, URL string

	delta func(prev, cur *lru.VMStat) (float64, bool)
}

// Delta is the signal's amount between two /proc/vmstat samples, in
// [Signal.Unit]. ok is false when either sample lacks a counter the signal
// needs (kernel too old, collector unavailable) or a counter went
// backwards (reset, a different boot): unknown, never zero.
func (s *Signal) Delta(prev, cur *lru.VMStat) (float64, bool) {
	if prev == nil || cur == nil {
		return 0, false
	}
	return s.delta(prev, cur)
}

// PerSec is Delta divided by dt in seconds, NaN when unknown or dt ≤ 0.
func (s *Signal) PerSec(prev, cur *lru.VMStat, dt time.Duration) float64 {
	d, ok := s.Delta(prev, cur)
	if !ok || dt <= 0 {
		return math.NaN()
	}
	return d / dt.Seconds()
}

// JSONKey is the key of the signal's rate in JSON output:
// "<name>_<unit>_per_s" (STYLE.md §5: units in field names).
func (s *Signal) JSONKey() string { return s.Name + "_" + string(s.Unit) + "_per_s" }

// RateUnit is the rate's unit as printed: "pages/s", "events/s".
func (s *Signal) RateUnit() string { return string(s.Unit) + "/s" }

// Catalogue lists every signal, in the order views show them.
var Catalogue = []*Signal{
	DirectReclaim, LimitReclaim, AllocReclaim, KswapdReclaim,
	RefaultFile, RefaultAnon, WorkingsetActivate,
	MajorFaults, Allocstalls, SwapIn, SwapOut, OOMKills,
}

// Lookup returns the signal named name (its Name or its Gate name), or nil.
func Lookup(name string) *Signal {
	for _, s := range Catalogue {
		if s.Name == name || (s.Gate != "" && s.Gate == name) {
			return s
		}
	}
	return nil
}

// The entries. URLs point at the kernel document that defines the counter;
// where none does, at the source file.
const (
	vmscanURL     = "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/mm/vmscan.c"
	workingsetDoc = "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/mm/workingset.c"
	cgroupV2Doc   = "https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files"
)

var (
	// DirectReclaim is global direct reclaim: pages scanned by allocating
	// tasks because the host as a whole ran short (pgscan_direct). The
	// allocating task stalls while it reclaims.
	DirectReclaim = &Signal{
		Name: "direct_reclaim", Title: "direct reclaim", Unit: Pages,
		Gate: "reclaim.direct.rate", Aggregate: Rate,
		Counters: []string{"pgscan_direct"},
		Computed: "Δpgscan_direct",
		Doc:      "pages scanned by direct reclaim (allocating tasks reclaiming because the host ran short)",
		Kernel:   "mm/vmscan.c", URL: cgroupV2Doc,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.PgscanDirect }),
	}
	// LimitReclaim is cgroup-limit reclaim: pages scanned by allocating
	// tasks because their cgroup reached memory.max, memory.high or
	// limit_in_bytes. The kernel counts it in pgscan_anon/_file only
	// (mm/vmscan.c skips pgscan_kswapd/_direct for cgroup reclaim), so it
	// is what those two hold beyond kswapd and direct reclaim; khugepaged's
	// and proactive reclaim, rare, land here too. Unknown before 5.8.
	LimitReclaim = &Signal{
		Name: "limit_reclaim", Title: "cgroup-limit reclaim", Unit: Pages,
		Gate: "reclaim.limit.rate", Aggregate: Rate,
		Counters: []string{"pgscan_anon", "pgscan_file", "pgscan_kswapd", "pgscan_direct"},
		Computed: "max(0, Δ(pgscan_anon+pgscan_file) − Δpgscan_kswapd − Δpgscan_direct)",
		Doc:      "pages scanned by reclaim at cgroup memory limits (memory.max, memory.high, limit_in_bytes)",
		Kernel:   "mm/vmscan.c", URL: vmscanURL,
		delta: limitReclaim,
	}
	// AllocReclaim is all reclaim done by allocating tasks, the reclaim
	// that stalls them: direct plus cgroup-limit reclaim. On kernels
	// without pgscan_anon/_file (< 5.8) it is direct reclaim alone.
	AllocReclaim = &Signal{
		Name: "alloc_reclaim", Title: "direct + cgroup-limit reclaim", Unit: Pages,
		Gate: "reclaim.alloc.rate", Aggregate: Rate,
		Counters: []string{"pgscan_direct", "pgscan_anon", "pgscan_file", "pgscan_kswapd"},
		Computed: "Δdirect_reclaim + Δlimit_reclaim (Δpgscan_direct before 5.8)",
		Doc:      "pages scanned by allocating tasks, direct reclaim plus reclaim at cgroup limits",
		Kernel:   "mm/vmscan.c", URL: vmscanURL,
		delta: allocReclaim,
	}
	// KswapdReclaim is background reclaim by kswapd; it does not stall
	// tasks by itself.
	KswapdReclaim = &Signal{
		Name: "kswapd_reclaim", Title: "kswapd reclaim", Unit: Pages,
		Gate: "reclaim.kswapd.rate", Aggregate: Rate,
		Counters: []string{"pgscan_kswapd"},
		Computed: "Δpgscan_kswapd",
		Doc:      "pages scanned by kswapd, the background reclaimer",
		Kernel:   "mm/vmscan.c", URL: cgroupV2Doc,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.PgscanKswapd }),
	}
	// RefaultFile is page-cache pages read back soon after eviction: the
	// file LRU is too small for the working set.
	RefaultFile = &Signal{
		Name: "refault_file", Title: "file refaults", Unit: Pages,
		Gate: "refault.file.rate", Aggregate: Rate,
		Counters: []string{"workingset_refault_file"},
		Computed: "Δworkingset_refault_file (workingset_refault before 5.9)",
		Doc:      "page-cache pages read back soon after eviction",
		Kernel:   "mm/workingset.c", URL: workingsetDoc,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetRefaultFile }),
	}
	// RefaultAnon is anonymous pages faulted back from swap soon after
	// eviction (since 5.9).
	RefaultAnon = &Signal{
		Name: "refault_anon", Title: "anon refaults", Unit: Pages,
		Gate: "refault.anon.rate", Aggregate: Rate,
		Counters: []string{"workingset_refault_anon"},
		Computed: "Δworkingset_refault_anon",
		Doc:      "anonymous pages faulted back soon after eviction",
		Kernel:   "mm/workingset.c", URL: workingsetDoc,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetRefaultAnon }),
	}
	// WorkingsetActivate is refaulted pages that the kernel found to be
	// part of the working set and put straight back on the active list
	// (workingset_activate_file + _anon since 5.9): thrashing, not
	// streaming — a refault that is activated was evicted too early.
	WorkingsetActivate = &Signal{
		Name: "workingset_activate", Title: "refaults activated", Unit: Pages,
		Gate: "refault.activate.rate", Aggregate: Rate,
		Counters: []string{"workingset_activate"},
		Computed: "Δ(workingset_activate_file + workingset_activate_anon) (workingset_activate before 5.9)",
		Doc:      "refaulted pages that belonged to the working set (evicted too early: thrashing)",
		Kernel:   "mm/workingset.c", URL: workingsetDoc,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetActivate }),
	}
	// MajorFaults is page faults that had to read from disk (pgmajfault).
	MajorFaults = &Signal{
		Name: "major_faults", Title: "major faults", Unit: Events,
		Gate: "majfault.rate", Aggregate: Rate,
		Counters: []string{"pgmajfault"},
		Computed: "Δpgmajfault",
		Doc:      "page faults that waited for a read from disk or swap",
		Kernel:   "mm/memory.c", URL: cgroupV2Doc,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.Pgmajfault }),
	}
	// Allocstalls is entries into direct reclaim (allocstall, summed over
	// zones).
	Allocstalls = &Signal{
		Name: "allocstalls", Title: "allocation stalls", Unit: Events,
		Gate: "allocstall.rate", Aggregate: Rate,
		Counters: []string{"allocstall"},
		Computed: "Δallocstall (Σ allocstall_<zone>)",
		Doc:      "times an allocating task entered direct reclaim",
		Kernel:   "mm/vmscan.c", URL: vmscanURL,
		delta: counter(func(v *lru.VMStat) *uint64 { return v.Allocstall }),
	}
	// SwapIn is pages read in from swap (pswpin).
	SwapIn = &Signal{
		Name: "swap_in", Title: "swap-in", Unit: Pages,
		Gate: "swap.in", Aggregate: Total,
		Counters: []string{"pswpin"},
		Computed: "Δpswpin",
		Doc:      "pages swapped in",
		Kernel:   "mm/page_io.c", URL: "https://docs.kernel.org/admin-guide/mm/concepts.html#anonymous-memory",
		delta: counter(func(v *lru.VMStat) *uint64 { return v.Pswpin }),
	}
	// SwapOut is pages written out to swap (pswpout).
	SwapOut = &Signal{
		Name: "swap_out", Title: "swap-out", Unit: Pages,
		Gate: "swap.out", Aggregate: Total,
		Counters: []string{"pswpout"},
		Computed: "Δpswpout",
		Doc:      "pages swapped out",
		Kernel:   "mm/page_io.c", URL: "https://docs.kernel.org/admin-guide/mm/concepts.html#anonymous-memory",
		delta: counter(func(v *lru.VMStat) *uint64 { return v.Pswpout }),
	}
	// OOMKills is processes killed by the OOM killer (oom_kill, since 4.13).
	OOMKills = &Signal{
		Name: "oom_kills", Title: "OOM kills", Unit: Events,
		Gate: "oom_kills", Aggregate: Total,
		Counters: []string{"oom_kill"},
		Computed: "Δoom_kill",
		Doc:      "processes killed by the OOM killer",
		Kernel:   "mm/oom_kill.c", URL: "https://docs.kernel.org/admin-guide/mm/concepts.html#oom-killer",
		delta: counter(func(v *lru.VMStat) *uint64 { return v.OOMKill }),
	}
)

// counter is the delta of one cumulative counter.
func counter(get func(*lru.VMStat) *uint64) func(prev, cur *lru.VMStat) (float64, bool) {
	return func(prev, cur *lru.VMStat) (float64, bool) { return CounterDelta(get(prev), get(cur)) }
}

// CounterDelta is cur−prev for a cumulative counter; ok is false when
// either is absent or the counter went backwards (reset or wrap), so no
// negative or huge value reaches a rate.
func CounterDelta(prev, cur *uint64) (float64, bool) {
	if prev == nil || cur == nil || *cur < *prev {
		return 0, false
	}
	return float64(*cur - *prev), true
}

// scanAll is Δ(pgscan_anon+pgscan_file), the scans of every reclaimer.
func scanAll(prev, cur *lru.VMStat) (float64, bool) {
	a, okA := CounterDelta(prev.PgscanAnon, cur.PgscanAnon)
	f, okF := CounterDelta(prev.PgscanFile, cur.PgscanFile)
	return a + f, okA && okF
}

func limitReclaim(prev, cur *lru.VMStat) (float64, bool) {
	all, ok := scanAll(prev, cur)
	if !ok {
		return 0, false
	}
	k, okK := CounterDelta(prev.PgscanKswapd, cur.PgscanKswapd)
	d, okD := CounterDelta(prev.PgscanDirect, cur.PgscanDirect)
	if !okK || !okD {
		return 0, false
	}
	return max(all-k-d, 0), true
}

func allocReclaim(prev, cur *lru.VMStat) (float64, bool) {
	d, okD := CounterDelta(prev.PgscanDirect, cur.PgscanDirect)
	if prev.PgscanAnon == nil || cur.PgscanAnon == nil {
		return d, okD // before 5.8 the kernel cannot tell limit reclaim apart
	}
	l, okL := limitReclaim(prev, cur)
	if !okD || !okL {
		return 0, false
	}
	return d + l, true
}
