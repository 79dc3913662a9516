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
// the program's own heap, so it gives the evidence, never a verdict; the
// report layer writes its plain reading (report/mem.RetentionReading).
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
	ArenasMax int `json:"glibc_arenas_max,omitempty"`
	// Reading is the plain reading of the evidence, in words: empty as
	// memstate returns it; the report layer fills it for output, and the
	// recorder for the recording, whose v1 format keeps it.
	Reading string `json:"reading"`
	// Unread is why the evidence could not be read (the maps file's
	// error), "" when it was: the rest of the evidence is then empty. A
	// recording keeps it as its reading ("no allocator evidence: "
	// Unread); record.Retention.Memstate reads it back from there.
	Unread string `json:"-"`
}

// UnreadPrefix begins the recorded reading of evidence that could not be
// read, before [Retention.Unread].
const UnreadPrefix = "no allocator evidence: "

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
		r.Unread = err.Error()
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
	r.derive()
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

// derive sets what follows from the evidence: ArenasMax.
func (r *Retention) derive() {
	r.ArenasMax = 0
	if !r.GlibcOnly() {
		return
	}
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
}

// GlibcOnly is whether glibc's malloc is the process's allocator: libc
// is mapped and no other allocator of [Retention.Allocators] is.
func (r *Retention) GlibcOnly() bool {
	return contains(r.Allocators, "glibc") && len(r.OtherAllocators()) == 0
}

// OtherAllocators are the allocators besides glibc's mapped into the
// process, in a fixed order (jemalloc, tcmalloc, mimalloc).
func (r *Retention) OtherAllocators() []string {
	var out []string
	for _, a := range []string{"jemalloc", "tcmalloc", "mimalloc"} {
		if contains(r.Allocators, a) {
			out = append(out, a)
		}
	}
	return out
}

// ArenaSuggestion is the MALLOC_ARENA_MAX to try: the CPUs the process
// can use (its CPU quota rounded up, else the CPUs online), at least 2.
// glibc counts the CPUs online (sysconf), never the cgroup's quota: a
// 0.5-CPU container on 4 CPUs may still get 32 arenas.
func (r *Retention) ArenaSuggestion() int {
	if r.CPUQuota > 0 {
		return max(int(math.Ceil(r.CPUQuota)), 2)
	}
	return max(r.CPUsOnline, 2)
}

// AttachRetention attaches r, the retention evidence `watch` recorded
// when the process began growing (nil when none was recorded), to a
// growth finding: a copy of it, with ThreadsAtGrowth keeping the thread
// count it was read with and Threads raised to the most seen in any
// sample since (issue 30.4: a program that starts its threads later is
// not a one-thread program), and what follows from it derived again by
// this memdiag. The report layer writes what the evidence says
// (report/mem.GrowthEvidence).
func (g *ProcGrowth) AttachRetention(r *Retention) {
	g.Retention, g.ThreadsAtGrowth = nil, 0
	if r == nil {
		return
	}
	rr := *r
	rr.Reading = ""
	g.ThreadsAtGrowth = rr.Threads
	rr.Threads = max(rr.Threads, g.ThreadsMax)
	rr.derive()
	g.Retention = &rr
}
