package mem

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/memdiag/memdiag/memstate"
)

// LeakOrRetention is the note on a growing process: what steady anon
// growth can mean and how to tell the causes apart. It is an observation:
// the fit cannot tell a leak from retention or from a working set still
// filling.
const LeakOrRetention = "steady anon growth is an observation, not a diagnosis: a leak, allocator retention, or a cache or working set still filling; " +
	"compare the runtime's heap profile (live objects: Go pprof heap, Java heap histogram, Python tracemalloc) with RssAnon: " +
	"if the heap grows too it is a leak, if the heap is flat while RssAnon grows the allocator keeps freed pages " +
	"(glibc arenas: try MALLOC_ARENA_MAX or malloc_trim; or run under jemalloc/tcmalloc with profiling on), " +
	"and memory allocated outside the runtime (cgo, C libraries) shows only in the kernel's view"

// DescribeGrowth returns gs with the words filled in: each growing
// process's Note (what was observed), its Evidence (GrowthEvidence) and
// its allocator evidence's Reading. gs itself is left as it was; the
// result is never nil (JSON's empty list for none).
func DescribeGrowth(gs []memstate.ProcGrowth) []memstate.ProcGrowth {
	out := append([]memstate.ProcGrowth{}, gs...)
	for i := range out {
		g := &out[i]
		if !g.Growing {
			continue
		}
		g.Note = GrowthNote(g)
		g.Evidence = GrowthEvidence(g)
		g.Retention = withReading(g.Retention)
	}
	return out
}

// GrowthNote says what was observed of a growing process, then
// LeakOrRetention.
func GrowthNote(g *memstate.ProcGrowth) string {
	return fmt.Sprintf("observed: anon grew %s in %s, on a straight line (%.1f MiB/h, R² %.2f); %s",
		memstate.FormatBytes(g.AnonLastBytes-g.AnonFirstBytes), g.Observed.Round(time.Second), g.AnonSlope, g.AnonR2, LeakOrRetention)
}

// GrowthEvidence is the plain reading of a growing process's evidence,
// one line each: which kind of memory grew (RssAnon, RssFile, RssShmem
// from the first to the last sample), the threads when the thread count
// rose after the allocator evidence was read, the allocator reading
// (RetentionReading), the allocator settings in the process's
// environment, and what would tell a leak from retention. A leak and
// retention look alike from outside the process: the lines never
// conclude more than the evidence says.
func GrowthEvidence(g *memstate.ProcGrowth) []string {
	anonUp := g.AnonLastBytes - min(g.AnonLastBytes, g.AnonFirstBytes)
	fileUp := g.FileLastBytes - min(g.FileLastBytes, g.FileFirstBytes)
	shmUp := g.ShmemLastBytes - min(g.ShmemLastBytes, g.ShmemFirstBytes)
	split := fmt.Sprintf("RssAnon %s → %s, RssFile %s → %s, RssShmem %s → %s",
		memstate.FormatBytes(g.AnonFirstBytes), memstate.FormatBytes(g.AnonLastBytes), memstate.FormatBytes(g.FileFirstBytes), memstate.FormatBytes(g.FileLastBytes),
		memstate.FormatBytes(g.ShmemFirstBytes), memstate.FormatBytes(g.ShmemLastBytes))
	switch {
	case shmUp > anonUp:
		split += ": shmem grew most (tmpfs files, shared memory): no allocator holds it; look at its tmpfs files and shared segments"
	case fileUp > anonUp:
		split += ": mapped files grew most (page cache mapped in, given back under pressure)"
	default:
		split += ": the growth is anonymous memory (heap, anonymous mappings), what both a leak and allocator retention grow"
	}
	ev := []string{split}
	r := g.Retention
	if r == nil {
		return append(ev, "no allocator evidence recorded (a recording older than it, or the process could not be read when it began growing); `memdiag mem` reads it while the process runs")
	}
	if r.Threads > g.ThreadsAtGrowth {
		ev = append(ev, fmt.Sprintf("threads: %d when it began growing, up to %d later (/proc/PID/status Threads each sample); the reading uses %d",
			g.ThreadsAtGrowth, r.Threads, r.Threads))
	}
	ev = append(ev, "allocator: "+RetentionReading(r))
	if len(r.Env) > 0 {
		var kv []string
		for k, v := range r.Env {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		ev = append(ev, "allocator settings in its environment: "+strings.Join(kv, " "))
	} else if len(r.Allocators) > 0 {
		ev = append(ev, "no allocator variable in its environment (MALLOC_ARENA_MAX, GLIBC_TUNABLES, MALLOC_CONF, …): the allocator's defaults apply")
	}
	return append(ev, "what tells a leak from retention: "+tellApart(r))
}

// RetentionReading is the plain reading of a process's allocator
// evidence: whether freed memory can stay with its allocator, and why.
// Evidence that could not be read reads "no allocator evidence: " and
// why, as recordings keep it.
func RetentionReading(r *memstate.Retention) string {
	if r.Unread != "" {
		return memstate.UnreadPrefix + r.Unread
	}
	var parts []string
	if r.GlibcOnly() {
		parts = append(parts, glibcReading(r))
	}
	parts = otherAllocators(r, parts,
		" mapped: it returns freed memory on its own schedule (decay/release settings); its own statistics tell held from cached memory",
		"a Go program: runtime metrics (heap profile, /memory/classes) do not see cgo or C-library allocations; anon beyond them is outside the Go heap")
	if len(parts) == 0 {
		parts = append(parts, "no known allocator mapped (a static binary or its own allocator): nothing here tells retention from a leak")
	}
	return strings.Join(parts, "; ")
}

// withReading is a copy of r with its Reading written (RetentionReading);
// nil for nil. r itself is left as it was.
func withReading(r *memstate.Retention) *memstate.Retention {
	if r == nil {
		return nil
	}
	c := *r
	c.Reading = RetentionReading(&c)
	return &c
}

// glibcReading is the reading of glibc malloc's arenas: one thread, more
// arenas allowed than the CPUs the process can use, or bounded.
func glibcReading(r *memstate.Retention) string {
	// glibc counts the CPUs online (sysconf), never the cgroup's
	// quota: a 0.5-CPU container on 4 CPUs may still get 32 arenas.
	cpus := fmt.Sprintf("%d CPUs online", r.CPUsOnline)
	if r.CPUQuota > 0 {
		cpus += fmt.Sprintf(" (glibc counts these, not the cgroup's %g-CPU quota)", r.CPUQuota)
	}
	suggest := r.ArenaSuggestion()
	switch {
	case r.Threads <= 1:
		one := "glibc malloc with one thread: one arena, so freed memory is not spread over arenas; anon growth is memory the program still holds, or fragmentation of its one heap (malloc_trim(0) tells them apart)"
		if r.CPUQuota > 0 {
			one += fmt.Sprintf("; threads it starts later may take up to %d arenas on %s", r.ArenasMax, cpus)
		}
		return one
	case r.ArenasMax > suggest:
		return fmt.Sprintf("glibc malloc, %d threads, up to %d arenas on %s: freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=%d",
			r.Threads, r.ArenasMax, cpus, suggest)
	default:
		return fmt.Sprintf("glibc malloc, %d threads, at most %d arenas on %s: arena retention is bounded", r.Threads, r.ArenasMax, cpus)
	}
}

// otherAllocators appends to parts one sentence per allocator besides
// glibc's that r found mapped (the allocator's name then perAllocator),
// and goSentence for a Go program: the reading and the tell-apart advice
// differ only in these sentences.
func otherAllocators(r *memstate.Retention, parts []string, perAllocator, goSentence string) []string {
	for _, a := range r.OtherAllocators() {
		parts = append(parts, a+perAllocator)
	}
	if r.Go {
		parts = append(parts, goSentence)
	}
	return parts
}

// tellApart says what would tell a leak from allocator retention for
// this evidence: something to look at inside the process or to change,
// since from outside they look alike.
func tellApart(r *memstate.Retention) string {
	var parts []string
	if r.ArenasMax > 0 { // glibc malloc alone
		if r.Threads <= 1 {
			parts = append(parts, "malloc_trim(0) in the process (gdb -p PID -batch -ex 'call (int)malloc_trim(0)') returns what glibc keeps: RssAnon falling back is retention or fragmentation, RssAnon staying is memory the program holds (a leak, or data it keeps)")
		} else {
			suggest := r.ArenaSuggestion()
			if r.ArenasMax <= suggest {
				suggest = 1
			}
			parts = append(parts, fmt.Sprintf("the program's live heap (malloc_stats(), a heap profiler): flat while RssAnon grows is retention, growing with it is a leak; "+
				"or run it with MALLOC_ARENA_MAX=%d: retention then grows less or stops, a leak keeps its slope", suggest))
		}
	}
	parts = otherAllocators(r, parts,
		"'s own statistics: memory allocated by the program (held) against resident or mapped (kept by the allocator)",
		"the Go runtime's heap (runtime/metrics /memory/classes/heap/objects:bytes, pprof heap) against RssAnon: a growing Go heap is held by the program; growth outside it is cgo or C-library memory the runtime does not see, or freed spans not yet returned (/memory/classes/heap/released:bytes)")
	if len(parts) == 0 {
		return "nothing on the host: only the program's own heap profile"
	}
	return strings.Join(parts, "; ")
}
