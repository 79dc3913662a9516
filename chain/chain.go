// Package chain traces memdiag's page-cache chain with eBPF: who added
// pages to the page cache, whose file pages reclaim took and which
// reclaimer took them, which tasks stalled in direct or memcg reclaim and
// for how long, and who refaulted. The programs (bpf/chain.bpf.c) sum
// everything in kernel hash maps; [Collector.Fill] drains them once per
// sample into a [record.Chain], so the cost does not grow with the event
// rate on the user-space side.
//
// Kernel sources (all attached with BTF, no tracefs needed):
//
//	tp_btf/mm_filemap_add_to_page_cache       mm/filemap.c __filemap_add_folio
//	tp_btf/mm_filemap_delete_from_page_cache  mm/filemap.c __filemap_remove_folio
//	                                          (reclaim: mm/vmscan.c __remove_mapping)
//	tp_btf/mm_vmscan_direct_reclaim_begin/end mm/vmscan.c try_to_free_pages
//	tp_btf/mm_vmscan_memcg_reclaim_begin/end  mm/vmscan.c try_to_free_mem_cgroup_pages
//	fentry/workingset_refault                 mm/workingset.c
//
// It needs a kernel with BTF (CONFIG_DEBUG_INFO_BTF, /sys/kernel/btf/vmlinux,
// 5.11 or later for memcg-accounted BPF memory), CAP_BPF and CAP_PERFMON
// (or root), and no lockdown in confidentiality mode. Without them [Open]
// returns an [*UnavailableError].
package chain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/record"
)

// Name is the collector's name in the recording header and errors.
const Name = "ebpf-chain"

// DefaultMaxRows is Options.MaxRows when unset.
const DefaultMaxRows = 64

// Options configure [Open].
type Options struct {
	// SysRoot is where sysfs is mounted ("/sys"): cgroup ids are turned
	// into paths by walking <SysRoot>/fs/cgroup/{unified,memory} (hybrid)
	// or <SysRoot>/fs/cgroup (pure v2). Default "/sys".
	SysRoot string
	// MaxRows caps each list of a sample (the rest are summed into one
	// row with PID 0 and Comm "(others)"). Default DefaultMaxRows.
	MaxRows int
	// PageSize converts pages to bytes. Default os.Getpagesize().
	PageSize int
}

// Collector is the loaded and attached programs and their maps.
type Collector struct {
	opts     Options
	objs     chainObjects // maps, and WorkingsetRefault when it loaded
	core     corePrograms // every program but the refault one
	missing  []string     // what is not traced, and why
	links    []link.Link
	stats    io.Closer // kernel.bpf_stats_enabled held on; nil if not permitted
	v2, mem  *cgroupNames
	memV1    bool          // mem is the v1 memory controller's hierarchy
	dropped  uint64        // the dropped counter at the previous Fill
	runTime  time.Duration // the programs' run time at the previous Fill
	batchOK  bool          // BPF_MAP_LOOKUP_AND_DELETE_BATCH works on hash maps
	scratch  scratch
	pageSize uint64
}

// Open loads the programs, attaches them, and returns the Collector. Any
// failure (no BTF, no privilege, lockdown, a verifier rejection, a
// missing tracepoint or symbol) is an *UnavailableError saying what and
// what to do; nothing stays loaded then.
func Open(opts Options) (*Collector, error) {
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.MaxRows == 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.PageSize <= 0 {
		opts.PageSize = os.Getpagesize()
	}
	if err := probe(); err != nil {
		return nil, err
	}
	c := &Collector{opts: opts, pageSize: uint64(opts.PageSize), batchOK: true}
	spec, err := loadChain()
	if err != nil {
		return nil, &UnavailableError{Reason: "reading the embedded BPF object: " + err.Error(), Err: err}
	}
	if err := spec.LoadAndAssign(&struct {
		*chainMaps
		*corePrograms
	}{&c.objs.chainMaps, &c.core}, nil); err != nil {
		_ = c.Close()
		return nil, loadError(err)
	}
	for _, p := range c.core.list() {
		l, err := link.AttachTracing(link.TracingOptions{Program: p})
		if err != nil {
			_ = c.Close()
			return nil, &UnavailableError{Reason: fmt.Sprintf("attaching %s: %v", p, err),
				Hint: "the kernel lacks this tracepoint, or it cannot be traced", Err: err}
		}
		c.links = append(c.links, l)
	}
	c.openRefaults(spec)
	// run_time_ns is kept only while someone holds BPF_ENABLE_STATS (or
	// kernel.bpf_stats_enabled=1); the kernel wants CAP_SYS_ADMIN for
	// that. Without it RunTime stays 0 unless the sysctl is already on.
	if s, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME)); err == nil {
		c.stats = s
	}
	v2, mem, v1 := hierarchies(opts.SysRoot)
	c.v2, c.mem, c.memV1 = newCgroupNames(v2), newCgroupNames(mem), v1
	c.dropped = c.readDropped()
	c.runTime = c.readRunTime()
	return c, nil
}

// probe checks what the programs need before loading them, so the
// common failures get a plain reason.
func probe() error {
	if _, err := btf.LoadKernelSpec(); err != nil {
		return &UnavailableError{Reason: "no kernel BTF (/sys/kernel/btf/vmlinux): " + err.Error(),
			Hint: "needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian, Ubuntu, Fedora and RHEL kernels since 2020 are)", Err: err}
	}
	// Before 5.11 BPF memory counts against RLIMIT_MEMLOCK, whose
	// raising needs CAP_SYS_RESOURCE; later kernels need nothing.
	_ = rlimit.RemoveMemlock()
	if err := features.HaveMapType(ebpf.Hash); err != nil {
		if errors.Is(err, ebpf.ErrNotSupported) {
			return &UnavailableError{Reason: "the kernel lacks BPF hash maps: " + err.Error(),
				Hint: "needs Linux 5.11 or later built with CONFIG_BPF_SYSCALL=y", Err: err}
		}
		return permissionError(err)
	}
	return nil
}

func permissionError(err error) error {
	hint := "run as root, or grant CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep, or AmbientCapabilities=CAP_BPF CAP_PERFMON in the unit)"
	if b, rerr := os.ReadFile("/sys/kernel/security/lockdown"); rerr == nil && bytes.Contains(b, []byte("[confidentiality]")) {
		hint = "kernel lockdown is in confidentiality mode, which forbids reading kernel memory from BPF; boot with lockdown=integrity or none"
	}
	return &UnavailableError{Reason: "loading BPF programs: " + err.Error(), Hint: hint, Err: err}
}

// loadError explains a failure of loadChainObjects.
func loadError(err error) error {
	var ve *ebpf.VerifierError
	switch {
	case errors.As(err, &ve):
		last := ve.Log
		if len(last) > 3 {
			last = last[len(last)-3:]
		}
		return &UnavailableError{Reason: fmt.Sprintf("the kernel's verifier rejected a program: %v: %s", ve.Cause, strings.Join(last, "; ")),
			Hint: "this kernel's structures differ from what memdiag's programs expect; please report it with uname -r", Err: err}
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return permissionError(err)
	default:
		return &UnavailableError{Reason: "loading BPF programs: " + err.Error(),
			Hint: "a kernel type or function memdiag's programs need is missing on this kernel", Err: err}
	}
}

// Name returns "ebpf-chain".
func (c *Collector) Name() string { return Name }

// Close detaches the programs and frees the maps.
func (c *Collector) Close() error {
	var errs []error
	for _, l := range c.links {
		errs = append(errs, l.Close())
	}
	c.links = nil
	if c.stats != nil {
		errs = append(errs, c.stats.Close())
		c.stats = nil
	}
	errs = append(errs, c.core.Close(), c.objs.Close())
	return errors.Join(errs...)
}

// corePrograms are the programs Open cannot do without.
type corePrograms struct {
	AddToPageCache      *ebpf.Program `ebpf:"add_to_page_cache"`
	DeleteFromPageCache *ebpf.Program `ebpf:"delete_from_page_cache"`
	DirectReclaimBegin  *ebpf.Program `ebpf:"direct_reclaim_begin"`
	DirectReclaimEnd    *ebpf.Program `ebpf:"direct_reclaim_end"`
	MemcgReclaimBegin   *ebpf.Program `ebpf:"memcg_reclaim_begin"`
	MemcgReclaimEnd     *ebpf.Program `ebpf:"memcg_reclaim_end"`
}

func (p *corePrograms) list() []*ebpf.Program {
	return []*ebpf.Program{p.AddToPageCache, p.DeleteFromPageCache,
		p.DirectReclaimBegin, p.DirectReclaimEnd, p.MemcgReclaimBegin, p.MemcgReclaimEnd}
}

func (p *corePrograms) Close() error {
	var errs []error
	for _, x := range p.list() {
		if x != nil {
			errs = append(errs, x.Close())
		}
	}
	return errors.Join(errs...)
}

// openRefaults loads and attaches fentry/workingset_refault, the one
// program that needs a BPF trampoline (fentry): some kernels refuse
// fentry programs (EPERM at load on this project's 6.18 Firecracker
// kernel, which has no kprobes either), and the rest of the chain is
// worth having without refaults. What failed goes to Missing.
func (c *Collector) openRefaults(spec *ebpf.CollectionSpec) {
	var p struct {
		P *ebpf.Program `ebpf:"workingset_refault"`
	}
	err := spec.LoadAndAssign(&p, &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{
		"refaults": c.objs.Refaults, "dropped": c.objs.Dropped,
	}})
	if err == nil {
		var l link.Link
		l, err = link.AttachTracing(link.TracingOptions{Program: p.P})
		if err != nil {
			_ = p.P.Close()
		} else {
			c.links = append(c.links, l)
			c.objs.WorkingsetRefault = p.P
			return
		}
	}
	why := err.Error()
	if errors.Is(err, unix.EPERM) {
		why = "the kernel refused the fentry program (EPERM at load)"
	}
	c.missing = append(c.missing, "refaults not traced: fentry/workingset_refault: "+why+
		"; the memory cgroups' memory.stat workingset_refault_file still counts them")
}

// Missing says which parts of the chain are not traced on this kernel
// and why (e.g. refaults, when fentry programs are refused); empty when
// all are.
func (c *Collector) Missing() []string { return c.missing }

// UntracedRefaults is record.Chain.Untraced's entry when the refault
// program (fentry/workingset_refault) could not load.
const UntracedRefaults = "refaults"

func (c *Collector) readDropped() uint64 {
	var v uint64
	_ = c.objs.Dropped.Lookup(uint32(0), &v)
	return v
}

// readRunTime sums the programs' run_time_ns (bpf_prog_info; 0 unless
// stats are on).
func (c *Collector) readRunTime() time.Duration {
	var sum time.Duration
	progs := c.core.list()
	if c.objs.WorkingsetRefault != nil {
		progs = append(progs, c.objs.WorkingsetRefault)
	}
	for _, p := range progs {
		if st, err := p.Stats(); err == nil {
			sum += st.Runtime
		}
	}
	return sum
}

// Fill drains the maps into s.Chain: the pages added, evicted and
// refaulted and the reclaim stalls since the previous Fill (or Open),
// bytes = pages × page size, cgroup ids as paths, each list sorted
// biggest first and capped at Options.MaxRows.
//
// Draining deletes each row as it is read (BPF_MAP_LOOKUP_AND_DELETE_BATCH,
// or lookup then delete on kernels without it); an increment that races
// with the deletion of its row can be lost or, rarely, land in a row
// created just after (the map's preallocated element is reused). Both
// are a few pages at a sample boundary.
func (c *Collector) Fill(ctx context.Context, s *record.Sample) error {
	c.v2.reset()
	c.mem.reset()
	ch := &record.Chain{}
	var errs []error
	errs = append(errs, c.drainAdds(ch), c.drainEvictions(ch), c.drainStalls(ch), c.drainRefaults(ch))
	d := c.readDropped()
	ch.Dropped = d - c.dropped
	c.dropped = d
	rt := c.readRunTime()
	ch.RunTime = rt - c.runTime
	c.runTime = rt
	ch.Adds = capAdds(ch.Adds, c.opts.MaxRows)
	ch.Evictions = capEvictions(ch.Evictions, c.opts.MaxRows)
	ch.Stalls = capStalls(ch.Stalls, c.opts.MaxRows)
	ch.Refaults = capRefaults(ch.Refaults, c.opts.MaxRows)
	ch.Limits = memcgLimits(c.mem.dir, c.memV1, ch.Adds)
	if c.objs.WorkingsetRefault == nil {
		ch.Untraced = []string{UntracedRefaults}
	}
	s.Chain = ch
	return errors.Join(errs...)
}

// comm turns a kernel comm (NUL-padded) into a string.
func comm(b [16]int8) string {
	var buf [16]byte
	n := 0
	for ; n < len(b) && b[n] != 0; n++ {
		buf[n] = byte(b[n])
	}
	return string(buf[:n])
}

// reclaimers are the reclaimer kinds of chain.bpf.c's enum reclaim_kind.
var reclaimers = [...]string{0: record.ReclaimOther, 1: record.ReclaimKswapd, 2: record.ReclaimDirect, 3: record.ReclaimMemcg}

func reclaimer(kind uint32) string {
	if int(kind) < len(reclaimers) {
		return reclaimers[kind]
	}
	return record.ReclaimOther
}
