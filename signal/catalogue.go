// Package signal is the catalogue of memdiag's kernel quantities: one
// table of every counter memdiag judges by its change between two samples
// (reclaim, refaults, faults, swap, PSI stall time, disk I/O) and every
// level it reads (the LRU lists, available memory, swap used), with its
// name, unit, kind, kernel source and document, and the one function that
// computes it.
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
// Every entry also says what a Prometheus exposition needs: [Signal.Kind]
// (counter or gauge), [Signal.BaseUnit] (bytes, seconds or none) and
// [Signal.BaseValue] (the current value in that unit). A metric name is
// derived from Name and BaseUnit, never spelled elsewhere.
//
// Sources: /proc/vmstat, mapped across kernel versions by package lru
// (https://docs.kernel.org/admin-guide/mm/concepts.html, mm/vmstat.c,
// mm/vmscan.c, mm/workingset.c); /proc/pressure/* and a cgroup's
// *.pressure (https://docs.kernel.org/accounting/psi.html);
// /proc/meminfo (https://docs.kernel.org/filesystems/proc.html);
// /proc/diskstats (https://docs.kernel.org/admin-guide/iostats.html).
package signal

import (
	"math"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/lru"
	"github.com/memdiag/memdiag/psi"
)

// Unit is what one unit of a signal's value or per-interval delta counts.
type Unit string

// Units of a value or delta. A rate is the delta per second ("pages/s").
const (
	Pages   Unit = "pages"   // pages of the host page size (Reading.PageSize)
	Events  Unit = "events"  // occurrences (faults, stalls, kills, I/O requests)
	Seconds Unit = "seconds" // time (stall time, weighted I/O time)
	Bytes   Unit = "bytes"
)

// Kind is whether a signal's value only grows (a counter, judged by its
// change between samples) or goes up and down (a gauge, read as it is):
// the Prometheus metric type.
type Kind int

// Kinds.
const (
	Counter Kind = iota // cumulative since boot; Delta and PerSec are its change
	Gauge               // a level at the sample; Delta is its change, may be negative
)

func (k Kind) String() string {
	if k == Gauge {
		return "gauge"
	}
	return "counter"
}

// Reading is one sample of the kernel files the catalogue reads, for one
// scope: the host (/proc) or a cgroup (its *.pressure files and the
// counters of its memory.stat in VMStat's meanings). A nil part was not
// read; the signals that need it are unknown.
type Reading struct {
	VMStat   *lru.VMStat
	Meminfo  *lru.Meminfo
	PSI      *psi.Snapshot
	Disks    []diskio.Disk
	PageSize int // bytes per page; 4096 if 0
}

func (r *Reading) pageSize() float64 {
	if r == nil || r.PageSize <= 0 {
		return 4096
	}
	return float64(r.PageSize)
}

// PSILine names the /proc/pressure line a PSI signal reads.
type PSILine struct {
	Resource string // "memory", "io", "cpu"
	Full     bool   // the "full" line, else "some"
}

// Aggregate says how a signal is judged over a whole run, for gate: its
// rate (delta per second of wall time) or its total.
type Aggregate int

// Aggregates.
const (
	Rate  Aggregate = iota // Σdelta / Σwall, per second
	Total                  // Σdelta; for Pages, converted to bytes
)

// Signal is one quantity memdiag reads or derives from the kernel: a
// counter whose change between two samples is judged, or a gauge.
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
	// Kind is counter or gauge (the Prometheus type).
	Kind Kind
	// Source is the file read, as on the host: "/proc/vmstat".
	Source string
	// PSI is the pressure line of a PSI signal, nil for the others.
	PSI *PSILine

	// value is the signal's current value in Unit (a counter's since
	// boot); delta, when set, replaces value(cur)−value(prev) for a
	// counter (a difference of differences clamped at 0, devices matched
	// by name). maxRate > 0 caps PerSec (a stall share cannot pass 1).
	value   func(r *Reading) (float64, bool)
	delta   func(prev, cur *Reading) (float64, bool)
	maxRate float64
}

// Value is the signal's value in one reading, in [Signal.Unit]: a
// counter's total since boot, a gauge's level. ok is false when the
// reading lacks what the signal needs.
func (s *Signal) Value(r *Reading) (float64, bool) {
	if r == nil || s.value == nil {
		return 0, false
	}
	return s.value(r)
}

// BaseUnit is the Prometheus base unit of [Signal.BaseValue]: "bytes"
// for Pages and Bytes, "seconds" for Seconds, "" for Events (a count).
func (s *Signal) BaseUnit() string {
	switch s.Unit {
	case Pages, Bytes:
		return "bytes"
	case Seconds:
		return "seconds"
	}
	return ""
}

// BaseValue is Value in [Signal.BaseUnit]: pages times the reading's page
// size, everything else as it is.
func (s *Signal) BaseValue(r *Reading) (float64, bool) {
	v, ok := s.Value(r)
	if ok && s.Unit == Pages {
		v *= r.pageSize()
	}
	return v, ok
}

// Between is the signal's change from prev to cur, in [Signal.Unit]. ok
// is false when either reading lacks what the signal needs (kernel too
// old, collector unavailable) or a counter went backwards (reset, a
// different boot): unknown, never zero. A gauge's change may be negative.
func (s *Signal) Between(prev, cur *Reading) (float64, bool) {
	if prev == nil || cur == nil {
		return 0, false
	}
	if s.delta != nil {
		return s.delta(prev, cur)
	}
	a, okA := s.Value(prev)
	b, okB := s.Value(cur)
	if !okA || !okB || (s.Kind == Counter && b < a) {
		return 0, false
	}
	return b - a, true
}

// Delta is Between for two /proc/vmstat samples alone (the host's or a
// cgroup's counters); signals that read other files are unknown.
func (s *Signal) Delta(prev, cur *lru.VMStat) (float64, bool) {
	if prev == nil || cur == nil {
		return 0, false
	}
	return s.Between(&Reading{VMStat: prev}, &Reading{VMStat: cur})
}

// PerSec is Between divided by dt in seconds, NaN when unknown or dt ≤ 0.
// A stall share is capped at 1 (the jitter between reading the file and
// taking the timestamp).
func (s *Signal) PerSec(prev, cur *Reading, dt time.Duration) float64 {
	d, ok := s.Between(prev, cur)
	if !ok || dt <= 0 {
		return math.NaN()
	}
	r := d / dt.Seconds()
	if s.maxRate > 0 && r > s.maxRate {
		r = s.maxRate
	}
	return r
}

// JSONKey is the key of the signal in JSON output (docs/STYLE.md §5: units in
// field names): a counter's rate "<name>_<unit>_per_s" (a stall share
// "<name>_share"), a gauge's level "<name>_<unit>".
func (s *Signal) JSONKey() string {
	switch {
	case s.Kind == Gauge:
		return s.Name + "_" + string(s.Unit)
	case s.maxRate == 1:
		return s.Name + "_share"
	}
	return s.Name + "_" + string(s.Unit) + "_per_s"
}

// RateKey is the JSON key of the signal's rate over an interval or an
// episode: JSONKey for a counter, "<name>_<unit>_per_s" (its change per
// second) for a gauge.
func (s *Signal) RateKey() string {
	if s.Kind == Gauge {
		return s.Name + "_" + string(s.Unit) + "_per_s"
	}
	return s.JSONKey()
}

// RateUnit is the rate's unit as printed: "pages/s", "events/s", "B/s",
// "s/s"; "share" (0..1 of wall time) for a stall share.
func (s *Signal) RateUnit() string {
	switch {
	case s.maxRate == 1:
		return "share"
	case s.Unit == Bytes:
		return "B/s"
	case s.Unit == Seconds:
		return "s/s"
	}
	return string(s.Unit) + "/s"
}

// Catalogue lists every signal, in the order views show them.
var Catalogue = []*Signal{
	PSIMemorySome, PSIMemoryFull, PSIIOSome, PSIIOFull, PSICPUSome, PSICPUFull,
	DirectReclaim, LimitReclaim, AllocReclaim, KswapdReclaim, Reclaimed,
	RefaultFile, RefaultAnon, WorkingsetActivate, WorkingsetRestore,
	MajorFaults, Allocstalls, SwapIn, SwapOut, OOMKills,
	FileLRU, AnonLRU, ActiveFile, InactiveFile, ActiveAnon, InactiveAnon,
	MemAvailable, Dirty, SwapUsed,
	DiskRead, DiskWritten, DiskIOs, DiskIOTime,
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

// Names other packages use as constants (analyze's signal names).
const (
	DirectReclaimName = "direct_reclaim"
	LimitReclaimName  = "limit_reclaim"
)

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
		Name: DirectReclaimName, Title: "direct reclaim", Unit: Pages,
		Gate: "reclaim.direct.rate", Aggregate: Rate,
		Counters: []string{"pgscan_direct"},
		Computed: "Δpgscan_direct",
		Doc:      "pages scanned by direct reclaim (allocating tasks reclaiming because the host ran short)",
		Kernel:   "mm/vmscan.c", URL: cgroupV2Doc,
		value: counter(func(v *lru.VMStat) *uint64 { return v.PgscanDirect }), Source: procVMStat,
	}
	// LimitReclaim is cgroup-limit reclaim: pages scanned by allocating
	// tasks because their cgroup reached memory.max, memory.high or
	// limit_in_bytes. The kernel counts it in pgscan_anon/_file only
	// (mm/vmscan.c skips pgscan_kswapd/_direct for cgroup reclaim), so it
	// is what those two hold beyond kswapd and direct reclaim; khugepaged's
	// and proactive reclaim, rare, land here too. Unknown before 5.8.
	LimitReclaim = &Signal{
		Name: LimitReclaimName, Title: "cgroup-limit reclaim", Unit: Pages,
		Gate: "reclaim.limit.rate", Aggregate: Rate,
		Counters: []string{"pgscan_anon", "pgscan_file", "pgscan_kswapd", "pgscan_direct"},
		Computed: "max(0, Δ(pgscan_anon+pgscan_file) − Δpgscan_kswapd − Δpgscan_direct)",
		Doc:      "pages scanned by reclaim at cgroup memory limits (memory.max, memory.high, limit_in_bytes)",
		Kernel:   "mm/vmscan.c", URL: vmscanURL,
		delta: vm(limitReclaim), Source: procVMStat,
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
		delta: vm(allocReclaim), Source: procVMStat,
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
		value: counter(func(v *lru.VMStat) *uint64 { return v.PgscanKswapd }), Source: procVMStat,
	}
	// Reclaimed is the pages reclaim actually freed (pgsteal), by kswapd,
	// allocating tasks and cgroup limits alike: set against the pages
	// scanned (direct/limit/kswapd reclaim) it tells reclaim that finds
	// pages to free from reclaim that scans and fails (a small or hot LRU).
	// pgsteal_anon/_file (since 5.8) count every reclaimer; before 5.8 only
	// pgsteal_kswapd + pgsteal_direct exist, and they miss cgroup-limit
	// reclaim (mm/vmscan.c counts them only when !cgroup_reclaim()).
	Reclaimed = &Signal{
		Name: "reclaimed", Title: "pages reclaimed (pgsteal)", Unit: Pages,
		Gate: "reclaim.steal.rate", Aggregate: Rate,
		Counters: []string{"pgsteal_anon", "pgsteal_file", "pgsteal_kswapd", "pgsteal_direct"},
		Computed: "Δ(pgsteal_anon+pgsteal_file) (Δ(pgsteal_kswapd+pgsteal_direct) before 5.8)",
		Doc:      "pages freed by reclaim (kswapd, direct and cgroup-limit), not only scanned",
		Kernel:   "mm/vmscan.c", URL: vmscanURL,
		delta: vm(reclaimed), Source: procVMStat,
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
		value: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetRefaultFile }), Source: procVMStat,
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
		value: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetRefaultAnon }), Source: procVMStat,
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
		value: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetActivate }), Source: procVMStat,
	}
	// WorkingsetRestore is refaulted pages that had been on the active
	// list before they were evicted (workingset_restore_file + _anon since
	// 5.9): the hot working set itself is being thrashed, not pages on
	// their way out.
	WorkingsetRestore = &Signal{
		Name: "workingset_restore", Title: "refaults of active pages", Unit: Pages,
		Gate: "refault.restore.rate", Aggregate: Rate,
		Counters: []string{"workingset_restore"},
		Computed: "Δ(workingset_restore_file + workingset_restore_anon) (workingset_restore before 5.9)",
		Doc:      "refaulted pages that were active before eviction (the hot working set thrashing)",
		Kernel:   "mm/workingset.c", URL: workingsetDoc,
		value: counter(func(v *lru.VMStat) *uint64 { return v.WorkingsetRestore }), Source: procVMStat,
	}
	// MajorFaults is page faults that had to read from disk (pgmajfault).
	MajorFaults = &Signal{
		Name: "major_faults", Title: "major faults", Unit: Events,
		Gate: "majfault.rate", Aggregate: Rate,
		Counters: []string{"pgmajfault"},
		Computed: "Δpgmajfault",
		Doc:      "page faults that waited for a read from disk or swap",
		Kernel:   "mm/memory.c", URL: cgroupV2Doc,
		value: counter(func(v *lru.VMStat) *uint64 { return v.Pgmajfault }), Source: procVMStat,
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
		value: counter(func(v *lru.VMStat) *uint64 { return v.Allocstall }), Source: procVMStat,
	}
	// SwapIn is pages read in from swap (pswpin).
	SwapIn = &Signal{
		Name: "swap_in", Title: "swap-in", Unit: Pages,
		Gate: "swap.in", Aggregate: Total,
		Counters: []string{"pswpin"},
		Computed: "Δpswpin",
		Doc:      "pages swapped in",
		Kernel:   "mm/page_io.c", URL: "https://docs.kernel.org/admin-guide/mm/concepts.html#anonymous-memory",
		value: counter(func(v *lru.VMStat) *uint64 { return v.Pswpin }), Source: procVMStat,
	}
	// SwapOut is pages written out to swap (pswpout).
	SwapOut = &Signal{
		Name: "swap_out", Title: "swap-out", Unit: Pages,
		Gate: "swap.out", Aggregate: Total,
		Counters: []string{"pswpout"},
		Computed: "Δpswpout",
		Doc:      "pages swapped out",
		Kernel:   "mm/page_io.c", URL: "https://docs.kernel.org/admin-guide/mm/concepts.html#anonymous-memory",
		value: counter(func(v *lru.VMStat) *uint64 { return v.Pswpout }), Source: procVMStat,
	}
	// OOMKills is processes killed by the OOM killer (oom_kill, since 4.13).
	OOMKills = &Signal{
		Name: "oom_kills", Title: "OOM kills", Unit: Events,
		Gate: "oom_kills", Aggregate: Total,
		Counters: []string{"oom_kill"},
		Computed: "Δoom_kill",
		Doc:      "processes killed by the OOM killer",
		Kernel:   "mm/oom_kill.c", URL: "https://docs.kernel.org/admin-guide/mm/concepts.html#oom-killer",
		value: counter(func(v *lru.VMStat) *uint64 { return v.OOMKill }), Source: procVMStat,
	}
)

const procVMStat = "/proc/vmstat"

// counter is the value of one /proc/vmstat counter.
func counter(get func(*lru.VMStat) *uint64) func(r *Reading) (float64, bool) {
	return func(r *Reading) (float64, bool) {
		if r.VMStat == nil {
			return 0, false
		}
		p := get(r.VMStat)
		if p == nil {
			return 0, false
		}
		return float64(*p), true
	}
}

// vm lifts a delta of two /proc/vmstat samples to readings.
func vm(f func(prev, cur *lru.VMStat) (float64, bool)) func(prev, cur *Reading) (float64, bool) {
	return func(prev, cur *Reading) (float64, bool) {
		if prev.VMStat == nil || cur.VMStat == nil {
			return 0, false
		}
		return f(prev.VMStat, cur.VMStat)
	}
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
	return deltaSum(prev.PgscanAnon, cur.PgscanAnon, prev.PgscanFile, cur.PgscanFile)
}

// deltaSum is the sum of two counters' CounterDelta; ok only when both
// are known.
func deltaSum(prevA, curA, prevB, curB *uint64) (float64, bool) {
	a, okA := CounterDelta(prevA, curA)
	b, okB := CounterDelta(prevB, curB)
	return a + b, okA && okB
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

func reclaimed(prev, cur *lru.VMStat) (float64, bool) {
	if prev.PgstealAnon != nil && cur.PgstealAnon != nil {
		return deltaSum(prev.PgstealAnon, cur.PgstealAnon, prev.PgstealFile, cur.PgstealFile)
	}
	return deltaSum(prev.PgstealKswapd, cur.PgstealKswapd, prev.PgstealDirect, cur.PgstealDirect)
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

// PSI: the cumulative stall time of a pressure line (its total= field),
// whose rate is the share of wall time stalled. The same entries read a
// cgroup's *.pressure files when the Reading is the cgroup's.
const psiURL = "https://docs.kernel.org/accounting/psi.html"

func psiSignal(res, title string, full bool) *Signal {
	line := "some"
	if full {
		line = "full"
	}
	doc := "time in which at least one task stalled waiting for " + title
	if full {
		doc = "time in which all non-idle tasks stalled waiting for " + title + " at once"
	}
	return &Signal{
		Name: "psi_" + res + "_" + line, Title: res + " PSI " + line, Unit: Seconds, Kind: Counter,
		Gate: res + "." + line + ".stall", Aggregate: Rate,
		Counters: []string{res + " " + line + " total"},
		Computed: "Δtotal / Δwall of the " + line + " line (share of wall time)",
		Doc:      doc + ", as a share of wall time",
		Kernel:   "kernel/sched/psi.c", URL: psiURL,
		Source: "/proc/pressure/" + res, PSI: &PSILine{Resource: res, Full: full},
		maxRate: 1,
		value: func(r *Reading) (float64, bool) {
			l := psiLine(r, res, full)
			if l == nil {
				return 0, false
			}
			return l.Total.Seconds(), true
		},
		// The change of the µs counter, subtracted whole before it
		// becomes seconds.
		delta: func(prev, cur *Reading) (float64, bool) {
			a, b := psiLine(prev, res, full), psiLine(cur, res, full)
			if a == nil || b == nil || b.Total < a.Total {
				return 0, false
			}
			return (b.Total - a.Total).Seconds(), true
		},
	}
}

func psiLine(r *Reading, res string, full bool) *psi.Line {
	rr := r.PSI.Get(res)
	if rr == nil {
		return nil
	}
	if full {
		return rr.Full
	}
	return &rr.Some
}

// The PSI lines.
var (
	PSIMemorySome = psiSignal("memory", "memory", false)
	PSIMemoryFull = psiSignal("memory", "memory", true)
	PSIIOSome     = psiSignal("io", "I/O", false)
	PSIIOFull     = psiSignal("io", "I/O", true)
	PSICPUSome    = psiSignal("cpu", "CPU", false)
	PSICPUFull    = psiSignal("cpu", "CPU", true) // since 5.13; zero at host level
)

// The LRU lists and related levels of /proc/meminfo, in bytes (the file
// says kB and means KiB). Gauges: Delta is the change (negative when the
// list shrank).
const meminfoURL = "https://docs.kernel.org/filesystems/proc.html#meminfo"

func meminfoGauge(name, title, fields, doc string, get func(m *lru.Meminfo) (uint64, bool)) *Signal {
	return &Signal{
		Name: name, Title: title, Unit: Bytes, Kind: Gauge,
		Counters: []string{fields}, Computed: fields + " at the sample",
		Doc: doc, Kernel: "fs/proc/meminfo.c", URL: meminfoURL, Source: "/proc/meminfo",
		value: func(r *Reading) (float64, bool) {
			if r.Meminfo == nil {
				return 0, false
			}
			v, ok := get(r.Meminfo)
			return float64(v), ok
		},
	}
}

func field(p *uint64) (uint64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// The meminfo levels.
var (
	FileLRU = meminfoGauge("file_lru", "file LRU", "Active(file)+Inactive(file)",
		"page cache on the LRU lists", (*lru.Meminfo).FileLRU)
	AnonLRU = meminfoGauge("anon_lru", "anon LRU", "Active(anon)+Inactive(anon)",
		"anonymous memory on the LRU lists", (*lru.Meminfo).AnonLRU)
	ActiveFile = meminfoGauge("active_file", "active file LRU", "Active(file)",
		"page cache recently used, protected from reclaim", func(m *lru.Meminfo) (uint64, bool) { return field(m.ActiveFile) })
	InactiveFile = meminfoGauge("inactive_file", "inactive file LRU", "Inactive(file)",
		"page cache reclaim takes first", func(m *lru.Meminfo) (uint64, bool) { return field(m.InactiveFile) })
	ActiveAnon = meminfoGauge("active_anon", "active anon LRU", "Active(anon)",
		"anonymous memory recently used", func(m *lru.Meminfo) (uint64, bool) { return field(m.ActiveAnon) })
	InactiveAnon = meminfoGauge("inactive_anon", "inactive anon LRU", "Inactive(anon)",
		"anonymous memory reclaim swaps out first", func(m *lru.Meminfo) (uint64, bool) { return field(m.InactiveAnon) })
	MemAvailable = meminfoGauge("mem_available", "available memory", "MemAvailable",
		"the kernel's estimate of memory available without swapping (since 3.14)", func(m *lru.Meminfo) (uint64, bool) { return field(m.MemAvailable) })
	Dirty = meminfoGauge("dirty", "dirty page cache", "Dirty",
		"page cache waiting to be written back", func(m *lru.Meminfo) (uint64, bool) { return field(m.Dirty) })
	SwapUsed = meminfoGauge("swap_used", "swap used", "SwapTotal−SwapFree",
		"swap space in use", func(m *lru.Meminfo) (uint64, bool) {
			t, okT := field(m.SwapTotal)
			f, okF := field(m.SwapFree)
			if !okT || !okF || f > t {
				return 0, false
			}
			return t - f, true
		})
)

// The block devices of /proc/diskstats, summed over the devices recorded
// (whole disks unless asked otherwise). A device missing from either
// reading, or whose counters went backwards (removed and re-added), is
// left out of the sum; with no device left the change is unknown.
const iostatsURL = "https://docs.kernel.org/admin-guide/iostats.html"

func diskCounter(name, title string, unit Unit, fields, doc string, get func(d diskio.DiskRate) float64, cum func(d *diskio.Disk) float64) *Signal {
	return &Signal{
		Name: name, Title: title, Unit: unit, Kind: Counter,
		Counters: []string{fields}, Computed: "Σ over devices of Δ" + fields,
		Doc: doc, Kernel: "block/genhd.c", URL: iostatsURL, Source: "/proc/diskstats",
		value: func(r *Reading) (float64, bool) {
			if len(r.Disks) == 0 {
				return 0, false
			}
			var sum float64
			for i := range r.Disks {
				sum += cum(&r.Disks[i])
			}
			return sum, true
		},
		delta: func(prev, cur *Reading) (float64, bool) {
			var sum float64
			seen := false
			for _, c := range cur.Disks {
				for _, p := range prev.Disks {
					if p.Name != c.Name {
						continue
					}
					// Over one second a rate is the change itself.
					if d, ok := diskio.DiskRates(p, c, time.Second); ok {
						sum, seen = sum+get(d), true
					}
				}
			}
			return sum, seen
		},
	}
}

// The disk counters.
var (
	DiskRead = diskCounter("disk_read", "disk read", Bytes, "sectors read × 512",
		"bytes read from the block devices",
		func(d diskio.DiskRate) float64 { return d.ReadBytesPerSec },
		func(d *diskio.Disk) float64 { return float64(d.ReadBytes) })
	DiskWritten = diskCounter("disk_written", "disk written", Bytes, "sectors written × 512",
		"bytes written to the block devices",
		func(d diskio.DiskRate) float64 { return d.WriteBytesPerSec },
		func(d *diskio.Disk) float64 { return float64(d.WriteBytes) })
	DiskIOs = diskCounter("disk_ios", "disk I/Os", Events, "reads + writes completed",
		"read and write requests the block devices completed",
		func(d diskio.DiskRate) float64 { return d.ReadIOPS + d.WriteIOPS },
		func(d *diskio.Disk) float64 { return float64(d.Reads + d.Writes) })
	DiskIOTime = diskCounter("disk_io_time", "disk I/O time", Seconds, "weighted time doing I/O",
		"time requests spent queued and in flight, weighted by their number (queue depth × time)",
		func(d diskio.DiskRate) float64 { return d.IOTimePerSec },
		func(d *diskio.Disk) float64 { return d.TimeInQueue.Seconds() })
)
