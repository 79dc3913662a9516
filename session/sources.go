package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/cgroupfs"
	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
	"github.com/memdiag/memdiag/sources"
	"github.com/memdiag/memdiag/timers"
	"github.com/memdiag/memdiag/victim"
)

// Sources is what BuildSources wires: the sources in sampling order,
// warnings to print once at start, and what to release at the end.
type Sources struct {
	List     []record.Source
	Warnings []string
	closers  []func()
	// drains hand over what sources still hold in flight (the probe's
	// requests, a followed results file read to its end) before the
	// last sample; each runs once.
	drains []func()
	// commandStart are told when the wrapped command starts.
	commandStart []func(time.Time)
	Fatal        error // a collector the user demanded could not start
}

// Drain hands over what the sources still hold in flight (the probe's
// requests, a followed results file read to its end); call it before the
// last sample. It runs once.
func (w *Sources) Drain() {
	for _, d := range w.drains {
		d()
	}
	w.drains = nil
}

// Close drains the sources and releases them (event listeners, onset
// watchers, eBPF programs).
func (w *Sources) Close() {
	w.Drain()
	for _, c := range w.closers {
		c()
	}
}

// CommandStarted tells the sources that need it (a followed results file
// of offsets, as hey writes) when the wrapped command started.
func (w *Sources) CommandStarted(t time.Time) {
	for _, fn := range w.commandStart {
		fn(t)
	}
}

func (w *Sources) status(h *record.Header, name string, err error) {
	st := record.CollectorStatus{Name: name, Available: err == nil}
	if err != nil {
		st.Reason = err.Error()
		w.Warnings = append(w.Warnings, name+": "+err.Error())
	}
	h.Collectors = append(h.Collectors, st)
}

// BuildSources builds every collector from the options' root and the
// recording header describing them. Bad flags (an unreadable --cgroup)
// fail here, before anything is recorded.
func BuildSources(ctx context.Context, o *Options) (*Sources, *record.Header, error) {
	h := HostHeader(ctx, o.Root, o.now(), o.Version)
	h.Interval, h.TopN, h.Command = o.Interval, o.TopN, o.Command
	if len(o.Command) > 0 && !o.KeepCmdline {
		// Recordings get shared: the command after -- is redacted like every
		// other command line (one string, secrets as ***).
		h.Command = []string{redact.Cmdline(o.Command)}
	}
	if o.Cgroup != "" {
		// One meaning of --cgroup for every command (cgroupfs.Resolve):
		// the directory under --root, or a group path below the cgroup2
		// mount; the recording keeps the resolved directory.
		oc := *o
		oc.Cgroup = cgroupfs.Resolve(o.Root, CgroupMounts(filepath.Join(o.Root, "proc"), o.Root), o.Cgroup)
		o = &oc
	}
	ws := &Sources{}
	vic, err := ws.scope(ctx, o, h)
	if err != nil {
		return nil, nil, err
	}
	if err := ws.addPSI(ctx, o, h); err != nil {
		return nil, nil, err
	}
	if src := CgroupCounters(o.Cgroup, vic.V); src != nil {
		// The group's refaults, major faults and OOM kills (v2 memory.stat
		// and memory.events, or the v1 memory group on a hybrid host), for
		// gate --recording and analyze.
		ws.List = append(ws.List, src)
	}
	if os.Geteuid() != 0 && !capEffective(unix.CAP_SYS_PTRACE) {
		// not root and not given CAP_SYS_PTRACE (the service's unit
		// runs a dynamic user with it): other users' /proc/PID/io is denied
		ws.Warnings = append(ws.Warnings, "not root: "+diskio.DeniedHint)
	}
	for _, add := range sourceOrder {
		add(ctx, o, h, ws)
	}
	// Not a source: listed last, so the sources' order stays theirs.
	h.Collectors = append(h.Collectors, vic.Status)
	return ws, h, nil
}

// Scope is the cgroup a session's pressure is read in, the same for
// watch, record and gate: cgroup (--cgroup, resolved) when given; else
// the victim's v2 group, unless it is the root (its PSI is the host's) or
// its PSI cannot be read — then the host ("" ), with warn saying why.
func Scope(cgroup string, v *record.Victim) (scope, warn string) {
	if cgroup != "" || v == nil || v.CgroupDir == "" || victim.IsHostRoot(v) {
		return cgroup, ""
	}
	if err := psi.CheckCgroup(v.CgroupDir); err != nil {
		return "", "victim: its group's PSI cannot be read, the host's is used: " + err.Error()
	}
	return v.CgroupDir, ""
}

// scope finds whose latency is measured: --victim, else the service
// behind a local --probe. Its v2 group is the cgroup scope (h.Cgroup)
// unless --cgroup was given; a wrong --victim fails here, before
// anything is recorded.
func (ws *Sources) scope(ctx context.Context, o *Options, h *record.Header) (FoundVictim, error) {
	vic, err := FindVictim(ctx, o.Root, filepath.Join(o.Root, "proc"), o.Victim, VictimTargets(o.ProbeURL, o.LatencyFile, o.Command))
	if err != nil {
		return vic, err
	}
	h.Victim = vic.V
	if vic.Status.Reason != "" {
		ws.Warnings = append(ws.Warnings, "victim: "+vic.Status.Reason)
	}
	scope, warn := Scope(o.Cgroup, vic.V)
	if warn != "" {
		ws.Warnings = append(ws.Warnings, warn)
	}
	h.Cgroup = scope
	if scope != "" {
		h.CgroupLimit, h.CgroupLimitBytes, _ = victim.GroupLimit(CgroupMounts(filepath.Join(o.Root, "proc"), o.Root), scope)
	}
	return vic, nil
}

// addPSI wires PSI of the host and of the scope (h.Cgroup), and lists
// which resources the kernel lacks. An unreadable --cgroup is an error.
func (ws *Sources) addPSI(ctx context.Context, o *Options, h *record.Header) error {
	procRoot := filepath.Join(o.Root, "proc")
	var psiOpts []psi.Option
	if o.Cgroup != "" {
		if err := psi.CheckCgroup(o.Cgroup); err != nil {
			return fmt.Errorf("--cgroup: %w", err)
		}
	}
	if h.Cgroup != "" {
		psiOpts = append(psiOpts, psi.WithCgroup(h.Cgroup))
	}
	pc, err := psi.NewCollector(procRoot, psiOpts...)
	if err != nil {
		return err
	}
	_, missing, err := pc.Collect(ctx)
	switch {
	case err != nil:
		ws.status(h, "psi", err)
	case len(missing) == len(psi.Resources):
		ws.status(h, "psi", fmt.Errorf("no %s: kernel older than 4.20 or built without CONFIG_PSI, or booted with psi=0; PSI columns show n/a, everything else is recorded", filepath.Join(procRoot, "pressure")))
	default:
		ws.status(h, "psi", errors.Join(missing...))
		if len(missing) == 0 {
			h.Collectors[len(h.Collectors)-1] = record.CollectorStatus{Name: "psi", Available: true}
		}
	}
	ws.List = append(ws.List, sources.PSI{C: pc})
	return nil
}

// sourceOrder is every step after PSI that wires a recording's sources, in
// the order they are sampled and listed in the recording header: the
// sampler fills a Sample source by source, so this order is the order of
// the header's collectors and of the sources' timings. A new collector
// is one function (in its own file) added here, where its
// place is chosen, not derived from file names.
var sourceOrder = []func(ctx context.Context, o *Options, h *record.Header, ws *Sources){
	addMemorySources,  // meminfo, vmstat, swaps, timers (memory.go)
	addLatencySources, // --probe, --latency (latency.go)
	addProcSources,    // diskstats, procs, events, onsets (procs.go)
	addChainSource,    // --ebpf: the page-cache chain (chain.go)
	addVictimDelay,    // the victim's delay accounting (victimdelay.go)
}

// HostHeader fills the host facts of a recording header started at now
// by memdiag version. Boot time (proc/stat's btime), host name (the live
// host's, or proc/sys/kernel/hostname under another root), kernel release
// and the delay accounting switch come from root's /proc, each read
// through the root's jail (package rootfs); the page size from this host.
func HostHeader(ctx context.Context, root string, now time.Time, version string) *record.Header {
	procRoot := filepath.Join(root, "proc")
	h := &record.Header{
		MemdiagVersion: version,
		Start:          now,
		PageSize:       os.Getpagesize(),
		ClockTicks:     100, // USER_HZ is 100 on every Linux architecture memdiag supports
		Root:           root,
	}
	zone, off := now.Zone()
	h.UTCOffset = off
	// The zone the host's jobs run in, by its name: a copied
	// /etc/localtime leaves time.Local an abbreviation ("CST") that is no
	// zone to project schedules in (timers.HostZone names the copy).
	h.TimeZone = timers.HostZone(root)
	if h.TimeZone == "" {
		h.TimeZone = time.Local.String()
	}
	if h.TimeZone == "Local" {
		h.TimeZone = zone
	}
	// Host name and boot time are read here, through the root's jail,
	// not with gopsutil's host.Info: that opens a dozen files under the
	// root (proc/uptime, proc/cpuinfo, etc/*-release...) with plain
	// blocking opens, so a FIFO there would hang the run.
	if root == "/" {
		h.Host, _ = os.Hostname()
	}
	if b, err := rootfs.ReadPath(ctx, filepath.Join(procRoot, "stat"), rootfs.ProcLimit); err == nil {
		if bt, ok := btime(b); ok {
			h.BootTime = time.Unix(bt, 0).UTC()
		}
	}
	if b, err := rootfs.ReadPath(ctx, filepath.Join(procRoot, "sys/kernel/osrelease"), rootfs.ProcLimit); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := rootfs.ReadPath(ctx, filepath.Join(procRoot, "sys/kernel/hostname"), rootfs.ProcLimit); err == nil && h.Host == "" {
		h.Host = strings.TrimSpace(string(b))
	}
	if b, err := rootfs.ReadPath(ctx, filepath.Join(procRoot, "sys/kernel/task_delayacct"), rootfs.ProcLimit); err == nil {
		v, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil {
			on := v != 0
			h.DelayAcct = &on
		}
	}
	return h
}

// capEffective reports whether this process has capability c in its
// effective set (capget(2)).
func capEffective(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}

// btime is the boot time in seconds since the epoch from /proc/stat's
// "btime" line; ok is false without one.
func btime(stat []byte) (int64, bool) {
	for _, line := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil && n > 0
		}
	}
	return 0, false
}
