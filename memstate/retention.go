package memstate

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/process"
)

// Retention is what the host tells about whether a process's anon memory
// is held by the program (a leak, or data it keeps) or kept by its
// allocator after the program freed it (retention). memstate cannot see
// the program's own heap, so it gives the evidence and a plain reading,
// never a verdict.
// Sources: /proc/PID/maps (mapped allocator libraries), /proc/PID/exe (Go
// build info), /proc/PID/environ (only the allocator variables in
// [allocatorVars]), /proc/PID/status Threads, /sys/devices/system/cpu/online,
// and the process's cgroup cpu.max (v2) or cpu.cfs_quota_us /
// cpu.cfs_period_us (v1).
type Retention struct {
	// Allocators mapped into the process: "glibc" (libc.so: ptmalloc),
	// "jemalloc", "tcmalloc", "mimalloc".
	Allocators []string `json:"allocators,omitempty"`
	Go         bool     `json:"go,omitempty"` // a Go program (build info in its executable)
	Threads    int      `json:"threads"`
	// Env holds only the allocator variables of allocatorVars set in the
	// process's environment (GLIBC_TUNABLES reduced to glibc.malloc.*);
	// nothing else of the environment is read into memdiag.
	Env map[string]string `json:"env,omitempty"`
	// CPUsOnline is what glibc counts to size its arena limit (8 per CPU
	// on 64-bit); CPUQuota the cgroup's CPU limit in CPUs, 0 when none.
	CPUsOnline int     `json:"cpus_online"`
	CPUQuota   float64 `json:"cpu_quota,omitempty"`
	// ArenasMax is how many malloc arenas glibc may create: MALLOC_ARENA_MAX
	// (or glibc.malloc.arena_max) when set, else 8 × CPUsOnline; 0 without
	// glibc malloc.
	ArenasMax int    `json:"glibc_arenas_max,omitempty"`
	Reading   string `json:"reading"`
}

// ProcRetention is one process's retention evidence as `memdiag watch`
// records it (record.Sample.Retention): read once, in the interval in
// which the process first became a growth candidate (its RSS rose to a
// new high at least 1 MiB above its lowest; diskio.ProcScanner.RSS), so
// that `analyze` can attach it to the process's growth finding.
type ProcRetention struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"` // with PID, tells a reused PID apart
	Comm       string `json:"comm"`
	Retention
}

// RetentionOf reads the retention evidence of one process, as `mem` does
// for its processes by RSS, from <root>/proc/PID/{stat,cgroup,maps,exe,environ}.
// startTicks is the start time (stat field 22) the caller saw: a process
// that has since exited and left its PID to another is refused.
func (c *Collector) RetentionOf(pid int, startTicks uint64) (*Retention, error) {
	ctx := context.Background()
	st, err := process.ReadStat(ctx, c.procRoot(), pid)
	if err != nil {
		return nil, err
	}
	if st.StartTicks != startTicks {
		return nil, fmt.Errorf("process %d: started at tick %d, not %d: another process", pid, st.StartTicks, startTicks)
	}
	cpuPath, v2 := "", true
	if b, err := process.ReadPIDFile(ctx, c.procRoot(), pid, "cgroup", rootfs.ProcLimit); err == nil {
		var v1 bool
		cpuPath, v1 = process.ControllerPath(b, "cpu")
		v2 = !v1
	}
	return c.retention(pid, st.NumThreads, cpuPath, v2, nil), nil
}

// allocatorVars are the environment variables memdiag reads from
// /proc/PID/environ: the ones that change how an allocator keeps freed
// memory. No other variable is recorded or printed.
var allocatorVars = []string{"MALLOC_ARENA_MAX", "MALLOC_ARENA_TEST", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
	"MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES", "MALLOC_CONF", "JE_MALLOC_CONF", "TCMALLOC_RELEASE_RATE",
	"MIMALLOC_PURGE_DELAY", "GODEBUG", "GOGC", "GOMEMLIMIT", "LD_PRELOAD"}

// retention reads the evidence for one process; cgPath is its cgroup
// (the cpu controller's path on v1, the v2 path otherwise). A file that
// is there but unusable is noted in faults (nil: not reported).
//
// Every file is read inside <root>/proc (package process): maps (at
// most 64 MiB), environ, and the program behind exe, opened as a regular
// file only (process.OpenExe) before its Go build information is read.
func (c *Collector) retention(pid int, threads int, cpuPath string, v2 bool, faults *process.Faults) *Retention {
	r := &Retention{Threads: threads}
	ctx := context.Background()
	b, err := process.ReadPIDFile(ctx, c.procRoot(), pid, "maps", 64<<20)
	if err != nil {
		faults.Note(err)
		r.Reading = "no allocator evidence: " + err.Error()
		return r
	}
	r.Allocators = allocators(b)
	if f, err := process.OpenExe(c.procRoot(), pid); err == nil {
		if _, err := buildinfo.Read(f); err == nil {
			r.Go = true
		}
		f.Close()
	} else {
		faults.Note(err)
	}
	if b, err := process.ReadPIDFile(ctx, c.procRoot(), pid, "environ", rootfs.ProcLimit); err == nil {
		r.Env = allocatorEnv(b)
	} else {
		faults.Note(err)
	}
	if b, err := rootfs.ReadPath(context.Background(), filepath.Join(c.root, "sys/devices/system/cpu/online"), rootfs.ProcLimit); err == nil {
		r.CPUsOnline = countCPUs(strings.TrimSpace(string(b)))
	}
	r.CPUQuota = c.cpuQuota(cpuPath, v2)
	read(r)
	return r
}

// allocators names the allocator libraries in a maps file.
func allocators(maps []byte) []string {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		base := filepath.Base(f[len(f)-1])
		switch {
		case strings.HasPrefix(base, "libc.so") || strings.HasPrefix(base, "libc-2."):
			seen["glibc"] = true
		case strings.HasPrefix(base, "libjemalloc"):
			seen["jemalloc"] = true
		case strings.HasPrefix(base, "libtcmalloc"):
			seen["tcmalloc"] = true
		case strings.HasPrefix(base, "libmimalloc"):
			seen["mimalloc"] = true
		}
	}
	var out []string
	for a := range seen {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// allocatorEnv keeps the allocatorVars variables of a NUL-separated
// environ, GLIBC_TUNABLES reduced to its glibc.malloc.* settings.
//
// glibc (2.36 here) parses GLIBC_TUNABLES in place, turning its ':'
// separators into NULs, so /proc/PID/environ shows the later tunables as
// entries of their own ("glibc.malloc.trim_threshold=131072") after it;
// they are joined back.
func allocatorEnv(environ []byte) map[string]string {
	var out map[string]string
	var entries []string
	for _, kv := range bytes.Split(environ, []byte{0}) {
		e := string(kv)
		if n := len(entries); n > 0 && strings.HasPrefix(e, "glibc.") && strings.HasPrefix(entries[n-1], "GLIBC_TUNABLES=") {
			entries[n-1] += ":" + e
			continue
		}
		entries = append(entries, e)
	}
	for _, e := range entries {
		k, v, ok := strings.Cut(e, "=")
		if !ok || !contains(allocatorVars, k) {
			continue
		}
		if k == "GLIBC_TUNABLES" {
			var keep []string
			for _, t := range strings.Split(v, ":") {
				if strings.HasPrefix(t, "glibc.malloc.") {
					keep = append(keep, t)
				}
			}
			if len(keep) == 0 {
				continue
			}
			v = strings.Join(keep, ":")
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// countCPUs counts a CPU list ("0-3,6").
func countCPUs(list string) int {
	n := 0
	for _, r := range strings.Split(list, ",") {
		a, b, ok := strings.Cut(r, "-")
		lo, err1 := strconv.Atoi(a)
		hi := lo
		var err2 error
		if ok {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 == nil && err2 == nil && hi >= lo {
			n += hi - lo + 1
		}
	}
	return n
}

// cpuQuota reads the group's CPU limit in CPUs; 0 when none or unknown.
func (c *Collector) cpuQuota(path string, v2 bool) float64 {
	base := filepath.Join(c.root, "sys/fs/cgroup")
	if v2 {
		b, err := rootfs.ReadPath(context.Background(), filepath.Join(base, path, "cpu.max"), rootfs.ProcLimit)
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b))
		if len(f) != 2 || f[0] == "max" {
			return 0
		}
		q, err1 := strconv.ParseFloat(f[0], 64)
		per, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || per <= 0 {
			return 0
		}
		return q / per
	}
	for _, ctl := range []string{"cpu,cpuacct", "cpu"} {
		q, ok1, _ := readInt(filepath.Join(base, ctl, path, "cpu.cfs_quota_us"))
		per, ok2, _ := readInt(filepath.Join(base, ctl, path, "cpu.cfs_period_us"))
		if ok1 && ok2 {
			if q <= 0 || per <= 0 {
				return 0
			}
			return float64(q) / float64(per)
		}
	}
	return 0
}

func readInt(p string) (int64, bool, error) {
	b, err := rootfs.ReadPath(context.Background(), p, rootfs.ProcLimit)
	if err != nil {
		return 0, false, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil, err
}

// read writes the plain reading of the evidence.
func read(r *Retention) {
	var parts []string
	glibc := contains(r.Allocators, "glibc") && !contains(r.Allocators, "jemalloc") &&
		!contains(r.Allocators, "tcmalloc") && !contains(r.Allocators, "mimalloc")
	if glibc {
		r.ArenasMax = 8 * r.CPUsOnline
		if v, err := strconv.Atoi(r.Env["MALLOC_ARENA_MAX"]); err == nil && v > 0 {
			r.ArenasMax = v
		}
		if t := r.Env["GLIBC_TUNABLES"]; strings.Contains(t, "glibc.malloc.arena_max=") {
			v, _ := strconv.Atoi(strings.SplitN(strings.SplitN(t, "glibc.malloc.arena_max=", 2)[1], ":", 2)[0])
			if v > 0 {
				r.ArenasMax = v
			}
		}
		// glibc counts the CPUs online (sysconf), never the cgroup's
		// quota: a 0.5-CPU container on 4 CPUs may still get 32 arenas.
		cpus := fmt.Sprintf("%d CPUs online", r.CPUsOnline)
		if r.CPUQuota > 0 {
			cpus += fmt.Sprintf(" (glibc counts these, not the cgroup's %g-CPU quota)", r.CPUQuota)
		}
		suggest := arenaSuggestion(r)
		switch {
		case r.Threads <= 1:
			one := "glibc malloc with one thread: one arena, so freed memory is not spread over arenas; anon growth is memory the program still holds, or fragmentation of its one heap (malloc_trim(0) tells them apart)"
			if r.CPUQuota > 0 {
				one += fmt.Sprintf("; threads it starts later may take up to %d arenas on %s", r.ArenasMax, cpus)
			}
			parts = append(parts, one)
		case r.ArenasMax > suggest:
			parts = append(parts, fmt.Sprintf("glibc malloc, %d threads, up to %d arenas on %s: freed memory can stay in the arenas; if the program's own heap is flat, likely retention: try MALLOC_ARENA_MAX=%d",
				r.Threads, r.ArenasMax, cpus, suggest))
		default:
			parts = append(parts, fmt.Sprintf("glibc malloc, %d threads, at most %d arenas on %s: arena retention is bounded", r.Threads, r.ArenasMax, cpus))
		}
	}
	parts = otherAllocators(r, parts,
		" mapped: it returns freed memory on its own schedule (decay/release settings); its own statistics tell held from cached memory",
		"a Go program: runtime metrics (heap profile, /memory/classes) do not see cgo or C-library allocations; anon beyond them is outside the Go heap")
	if len(parts) == 0 {
		parts = append(parts, "no known allocator mapped (a static binary or its own allocator): nothing here tells retention from a leak")
	}
	r.Reading = strings.Join(parts, "; ")
}

// arenaSuggestion is the MALLOC_ARENA_MAX to try: the CPUs the process
// can use (its CPU quota rounded up, else the CPUs online), at least 2.
func arenaSuggestion(r *Retention) int {
	if r.CPUQuota > 0 {
		return max(int(math.Ceil(r.CPUQuota)), 2)
	}
	return max(r.CPUsOnline, 2)
}

// otherAllocators appends to parts one sentence per allocator besides
// glibc's that r found mapped (the allocator's name then perAllocator),
// and goSentence for a Go program: the reading and the tell-apart advice
// differ only in these sentences.
func otherAllocators(r *Retention, parts []string, perAllocator, goSentence string) []string {
	for _, a := range []string{"jemalloc", "tcmalloc", "mimalloc"} {
		if contains(r.Allocators, a) {
			parts = append(parts, a+perAllocator)
		}
	}
	if r.Go {
		parts = append(parts, goSentence)
	}
	return parts
}

// AddEvidence attaches r, the retention evidence `watch` recorded when
// the process began growing (nil when none was recorded), to a growth
// finding and writes its Evidence: which kind of memory grew (RssAnon,
// RssFile, RssShmem from the first to the last sample), the allocator
// reading of [Retention] (re-derived from the recorded evidence), the
// allocator settings in the process's environment, and what would tell a
// leak from retention. A leak and retention look alike from outside the
// process: the lines never conclude more than the evidence says.
func (g *ProcGrowth) AddEvidence(r *Retention) {
	anonUp := g.AnonLastBytes - min(g.AnonLastBytes, g.AnonFirstBytes)
	fileUp := g.FileLastBytes - min(g.FileLastBytes, g.FileFirstBytes)
	shmUp := g.ShmemLastBytes - min(g.ShmemLastBytes, g.ShmemFirstBytes)
	split := fmt.Sprintf("RssAnon %s → %s, RssFile %s → %s, RssShmem %s → %s",
		FormatBytes(g.AnonFirstBytes), FormatBytes(g.AnonLastBytes), FormatBytes(g.FileFirstBytes), FormatBytes(g.FileLastBytes),
		FormatBytes(g.ShmemFirstBytes), FormatBytes(g.ShmemLastBytes))
	switch {
	case shmUp > anonUp:
		split += ": shmem grew most (tmpfs files, shared memory): no allocator holds it; look at its tmpfs files and shared segments"
	case fileUp > anonUp:
		split += ": mapped files grew most (page cache mapped in, given back under pressure)"
	default:
		split += ": the growth is anonymous memory (heap, anonymous mappings), what both a leak and allocator retention grow"
	}
	g.Evidence = []string{split}
	if r == nil {
		g.Evidence = append(g.Evidence, "no allocator evidence recorded (a recording older than it, or the process could not be read when it began growing); `memdiag mem` reads it while the process runs")
		return
	}
	rr := *r
	threads := ""
	if g.ThreadsMax > rr.Threads {
		// The evidence was read when growth began; the thread count
		// recorded each sample since says more (issue 30.4: a program
		// that starts its threads later is not a one-thread program).
		threads = fmt.Sprintf("threads: %d when it began growing, up to %d later (/proc/PID/status Threads each sample); the reading uses %d",
			rr.Threads, g.ThreadsMax, g.ThreadsMax)
		rr.Threads = g.ThreadsMax
	}
	if !strings.HasPrefix(rr.Reading, "no allocator evidence") {
		read(&rr) // this memdiag's reading of the recorded evidence
	}
	g.Retention = &rr
	if threads != "" {
		g.Evidence = append(g.Evidence, threads)
	}
	g.Evidence = append(g.Evidence, "allocator: "+rr.Reading)
	if len(rr.Env) > 0 {
		var kv []string
		for k, v := range rr.Env {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		g.Evidence = append(g.Evidence, "allocator settings in its environment: "+strings.Join(kv, " "))
	} else if len(rr.Allocators) > 0 {
		g.Evidence = append(g.Evidence, "no allocator variable in its environment (MALLOC_ARENA_MAX, GLIBC_TUNABLES, MALLOC_CONF, …): the allocator's defaults apply")
	}
	g.Evidence = append(g.Evidence, "what tells a leak from retention: "+tellApart(&rr))
}

// tellApart says what would tell a leak from allocator retention for
// this evidence: something to look at inside the process or to change,
// since from outside they look alike.
func tellApart(r *Retention) string {
	var parts []string
	if r.ArenasMax > 0 { // glibc malloc alone
		if r.Threads <= 1 {
			parts = append(parts, "malloc_trim(0) in the process (gdb -p PID -batch -ex 'call (int)malloc_trim(0)') returns what glibc keeps: RssAnon falling back is retention or fragmentation, RssAnon staying is memory the program holds (a leak, or data it keeps)")
		} else {
			suggest := arenaSuggestion(r)
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
