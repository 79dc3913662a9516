package lru

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// errParse is wrapped by every parse error of this package.
var errParse = errors.New("malformed vmstat line")

// vmstatRules is the mapping table documented on [Collector.VMStat]: one
// rule per VMStat field, spellings newest first.
var vmstatRules = []rule{
	{"pgscan_kswapd_pages", func(v *VMStat) **uint64 { return &v.PgscanKswapd },
		[][]string{{"pgscan_kswapd"}, zones("pgscan_kswapd")}},
	{"pgscan_direct_pages", func(v *VMStat) **uint64 { return &v.PgscanDirect },
		[][]string{{"pgscan_direct"}, zones("pgscan_direct")}},
	{"pgsteal_kswapd_pages", func(v *VMStat) **uint64 { return &v.PgstealKswapd },
		[][]string{{"pgsteal_kswapd"}, zones("pgsteal_kswapd")}},
	{"pgsteal_direct_pages", func(v *VMStat) **uint64 { return &v.PgstealDirect },
		[][]string{{"pgsteal_direct"}, zones("pgsteal_direct")}},
	{"pgscan_anon_pages", func(v *VMStat) **uint64 { return &v.PgscanAnon },
		[][]string{{"pgscan_anon"}}},
	{"pgscan_file_pages", func(v *VMStat) **uint64 { return &v.PgscanFile },
		[][]string{{"pgscan_file"}}},
	{"pgsteal_anon_pages", func(v *VMStat) **uint64 { return &v.PgstealAnon },
		[][]string{{"pgsteal_anon"}}},
	{"pgsteal_file_pages", func(v *VMStat) **uint64 { return &v.PgstealFile },
		[][]string{{"pgsteal_file"}}},
	{"workingset_refault_file_pages", func(v *VMStat) **uint64 { return &v.WorkingsetRefaultFile },
		[][]string{{"workingset_refault_file"}, {"workingset_refault"}}},
	{"workingset_refault_anon_pages", func(v *VMStat) **uint64 { return &v.WorkingsetRefaultAnon },
		[][]string{{"workingset_refault_anon"}}},
	{"workingset_activate_pages", func(v *VMStat) **uint64 { return &v.WorkingsetActivate },
		[][]string{{"workingset_activate_file", "workingset_activate_anon"}, {"workingset_activate"}}},
	{"workingset_restore_pages", func(v *VMStat) **uint64 { return &v.WorkingsetRestore },
		[][]string{{"workingset_restore_file", "workingset_restore_anon"}, {"workingset_restore"}}},
	{"pgmajfault", func(v *VMStat) **uint64 { return &v.Pgmajfault },
		[][]string{{"pgmajfault"}}},
	{"allocstall", func(v *VMStat) **uint64 { return &v.Allocstall },
		[][]string{zones("allocstall"), {"allocstall"}}},
	{"oom_kill", func(v *VMStat) **uint64 { return &v.OOMKill },
		[][]string{{"oom_kill"}}},
	{"pswpin_pages", func(v *VMStat) **uint64 { return &v.Pswpin },
		[][]string{{"pswpin"}}},
	{"pswpout_pages", func(v *VMStat) **uint64 { return &v.Pswpout },
		[][]string{{"pswpout"}}},
}

// rule maps one VMStat field to the /proc/vmstat counters that carry its
// meaning.
type rule struct {
	field string                 // the VMStat field's JSON name
	ptr   func(*VMStat) **uint64 // the field
	alts  [][]string             // spellings, newest first; each one's counters are summed
}

// zones lists the per-zone counters prefix_<zone> of old kernels, in the
// kernel's zone order (TEXTS_FOR_ZONES in mm/vmstat.c).
func zones(prefix string) []string {
	z := []string{"dma", "dma32", "normal", "high", "movable", "device"}
	out := make([]string, len(z))
	for i, s := range z {
		out[i] = prefix + "_" + s
	}
	return out
}

// vmstatWanted holds every counter named in vmstatRules, mapped to itself
// so that the parser stores keys without allocating a string per line.
var vmstatWanted = func() map[string]string {
	m := map[string]string{}
	for _, r := range vmstatRules {
		for _, alt := range r.alts {
			for _, name := range alt {
				m[name] = name
			}
		}
	}
	return m
}()

// Mapping says, for each VMStat field (by its JSON name), which
// /proc/vmstat counters were summed to make it on the kernel that was
// read. A field with no counter on that kernel maps to nil ("null" in
// JSON) and is nil in VMStat. `memdiag watch` records it in the header.
type Mapping map[string][]string

// VMStat reads <procRoot>/vmstat once and maps its counters to VMStat.
// Counters are cumulative since boot; page counts are in pages of the host
// page size.
//
// /proc/vmstat is one "name value" pair per line:
//
//	pgscan_kswapd 3868525
//	pgscan_direct 1483
//	workingset_refault_file 197274
//
// The names of some counters changed between kernel versions. Each field
// lists, newest first, the ways kernels spell its meaning; the first
// spelling with at least one counter in the file is used, and its counters
// present are summed (old kernels count per memory zone). A field none of
// whose counters exists is nil, never zero. [Collector.VMStatMapping]
// tells which counters were used on a host.
//
//	field                  newer kernels (since)               older kernels
//	PgscanKswapd           pgscan_kswapd (4.8)                 pgscan_kswapd_{dma,dma32,normal,high,movable}
//	PgscanDirect           pgscan_direct (4.8)                 pgscan_direct_{dma,dma32,normal,high,movable}
//	PgstealKswapd          pgsteal_kswapd (4.8)                pgsteal_kswapd_{dma,dma32,normal,high,movable}
//	PgstealDirect          pgsteal_direct (4.8)                pgsteal_direct_{dma,dma32,normal,high,movable}
//	PgscanAnon, PgscanFile pgscan_anon, pgscan_file (5.8)      none: nil
//	PgstealAnon, …File     pgsteal_anon, pgsteal_file (5.8)    none: nil
//	WorkingsetRefaultFile  workingset_refault_file (5.9)       workingset_refault (3.15; only file pages then)
//	WorkingsetRefaultAnon  workingset_refault_anon (5.9)       none: nil (anon refaults were not tracked)
//	WorkingsetActivate     workingset_activate_file + _anon    workingset_activate (3.15)
//	                       (5.9)
//	WorkingsetRestore      workingset_restore_file + _anon     workingset_restore (4.20)
//	                       (5.9)
//	Pgmajfault             pgmajfault                          pgmajfault
//	Allocstall             allocstall_{dma,dma32,normal,high,  allocstall
//	                       movable,device} (4.11)
//	OOMKill                oom_kill (4.13)                     none: nil
//	Pswpin, Pswpout        pswpin, pswpout                     pswpin, pswpout
//
// Not mapped: pgscan_direct_throttle (throttling events, not pages,
// despite the prefix) and pgscan_khugepaged/pgscan_proactive and their
// pgsteal_ twins (6.x; reclaimers other than kswapd and direct reclaim).
//
// pgscan_kswapd/_direct, pgsteal_kswapd/_direct and allocstall count
// global reclaim only: reclaim forced by a cgroup's memory limit is not in
// them (mm/vmscan.c, cgroup_reclaim()). It is in pgscan_anon/_file and
// pgsteal_anon/_file, which count every reclaim.
//
// Sources: /proc/vmstat; include/linux/vm_event_item.h,
// include/linux/mmzone.h (node_stat_item) and mm/vmstat.c (vmstat_text)
// in the kernel tree; https://docs.kernel.org/admin-guide/mm/concepts.html.
func (c *Collector) VMStat() (*VMStat, error) {
	vals, err := c.vmstat.read(filepath.Join(c.procRoot, "vmstat"))
	if err != nil {
		return nil, err
	}
	v, _ := mapVMStat(vals, false)
	return v, nil
}

// VMStatMapping reads <procRoot>/vmstat once and returns which counters
// feed each VMStat field on this kernel.
func (c *Collector) VMStatMapping() (Mapping, error) {
	vals, err := c.vmstat.read(filepath.Join(c.procRoot, "vmstat"))
	if err != nil {
		return nil, err
	}
	_, m := mapVMStat(vals, true)
	return m, nil
}

// mapVMStat applies vmstatRules to the counters of one /proc/vmstat read.
// The Mapping is built only when withMapping is set, to keep the
// per-sample path to two allocations.
func mapVMStat(vals map[string]uint64, withMapping bool) (*VMStat, Mapping) {
	var (
		v       = new(VMStat)
		backing = make([]uint64, len(vmstatRules))
		m       Mapping
	)
	if withMapping {
		m = make(Mapping, len(vmstatRules))
	}
	for i, r := range vmstatRules {
		var used []string
		for _, alt := range r.alts {
			var sum uint64
			found := false
			for _, name := range alt {
				if x, ok := vals[name]; ok {
					sum += x
					found = true
					if withMapping {
						used = append(used, name)
					}
				}
			}
			if found {
				backing[i] = sum
				*r.ptr(v) = &backing[i]
				break
			}
		}
		if withMapping {
			m[r.field] = used
		}
	}
	return v, m
}

// vmstatReader reads /proc/vmstat into a buffer kept between reads, and
// parses it into a map that is also kept, so that a read every second
// costs few allocations.
type vmstatReader struct {
	buf  []byte            // the file's content
	scan []byte            // bufio.Scanner's buffer
	vals map[string]uint64 // the last parse; overwritten by the next read
}

func (r *vmstatReader) read(path string) (map[string]uint64, error) {
	f, err := rootfs.OpenPath(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if r.buf == nil {
		r.buf = make([]byte, 0, 8192)
	}
	r.buf = r.buf[:0]
	for {
		if len(r.buf) == cap(r.buf) {
			r.buf = append(r.buf, 0)[:len(r.buf)]
		}
		n, err := f.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+n]
		if len(r.buf) > rootfs.ProcLimit {
			return nil, fmt.Errorf("%s: %w: over %d bytes", path, rootfs.ErrTooLarge, rootfs.ProcLimit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if r.vals == nil {
		r.vals = make(map[string]uint64, len(vmstatWanted))
	}
	clear(r.vals)
	if r.scan == nil {
		r.scan = make([]byte, 0, 256)
	}
	if err := parseVMStatInto(bytes.NewReader(r.buf), path, r.vals, r.scan); err != nil {
		return nil, err
	}
	return r.vals, nil
}

// parseVMStat parses /proc/vmstat content and returns the counters that
// vmstatRules names (only those: the others are not converted). path is
// used only in error messages ("path:line: ...").
func parseVMStat(r io.Reader, path string) (map[string]uint64, error) {
	vals := make(map[string]uint64, len(vmstatWanted))
	if err := parseVMStatInto(r, path, vals, nil); err != nil {
		return nil, err
	}
	return vals, nil
}

// parseVMStatInto is parseVMStat storing into vals, with scan as the
// scanner's initial buffer when not nil.
func parseVMStatInto(r io.Reader, path string, vals map[string]uint64, scan []byte) error {
	sc := bufio.NewScanner(r)
	if scan != nil {
		sc.Buffer(scan, bufio.MaxScanTokenSize)
	}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(" "))
		if !ok || len(name) == 0 || len(value) == 0 {
			return fmt.Errorf("%s:%d: %w: %q: want \"name value\"", path, n, errParse, line)
		}
		key, want := vmstatWanted[string(name)] // no allocation: the conversion is only a lookup
		if !want {
			continue
		}
		x, err := parseUint(value)
		if err != nil {
			return fmt.Errorf("%s:%d: %w: %q: %w", path, n, errParse, line, err)
		}
		vals[key] = x
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// parseUint parses a decimal counter without converting b to a string.
func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, strconv.ErrSyntax
	}
	var x uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: %w", b, strconv.ErrSyntax)
		}
		d := uint64(c - '0')
		if x > (1<<64-1-d)/10 {
			return 0, fmt.Errorf("%q: %w", b, strconv.ErrRange)
		}
		x = x*10 + d
	}
	return x, nil
}

// ParseVMStat parses a whole /proc/vmstat (or a cgroup's memory.stat) from
// r into a VMStat with the kernel-version mapping applied; path names the
// source in errors. For one-off reads; Collector.VMStat is the cheap path
// for sampling.
func ParseVMStat(r io.Reader, path string) (*VMStat, error) {
	vals, err := parseVMStat(r, path)
	if err != nil {
		return nil, err
	}
	v, _ := mapVMStat(vals, false)
	return v, nil
}
