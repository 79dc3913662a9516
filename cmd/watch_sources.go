package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/host"
	"golang.org/x/sys/unix"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
	"github.com/memdiag/memdiag/sources"
	"github.com/memdiag/memdiag/timers"
	"github.com/memdiag/memdiag/victim"
)

// watchSources is what buildWatchSources wires: the sources in sampling
// order, warnings to print once at start, and what to release at the end.
type watchSources struct {
	list     []record.Source
	warnings []string
	closers  []func()
	// drains hand over what sources still hold in flight (the probe's
	// requests, a followed results file read to its end) before the
	// last sample; each runs once.
	drains []func()
	// commandStart are told when the wrapped command starts.
	commandStart []func(time.Time)
	fatal        error // a collector the user demanded could not start
}

func (w *watchSources) drain() {
	for _, d := range w.drains {
		d()
	}
	w.drains = nil
}

func (w *watchSources) close() {
	w.drain()
	for _, c := range w.closers {
		c()
	}
}

func (w *watchSources) status(h *record.Header, name string, err error) {
	st := record.CollectorStatus{Name: name, Available: err == nil}
	if err != nil {
		st.Reason = err.Error()
		w.warnings = append(w.warnings, name+": "+err.Error())
	}
	h.Collectors = append(h.Collectors, st)
}

// buildWatchSources builds every collector from the options' root and the
// recording header describing them. Bad flags (an unreadable --cgroup)
// fail here, before anything is recorded.
func buildWatchSources(ctx context.Context, o *watchOptions) (*watchSources, *record.Header, error) {
	root := o.F.Root
	procRoot := filepath.Join(root, "proc")
	h := hostHeader(ctx, o.F, procRoot)
	h.Interval, h.TopN, h.Command = o.Interval, o.TopN, o.Command
	if len(o.Command) > 0 && !o.KeepCmdline {
		// Recordings get shared: the command after -- is redacted like every
		// other command line (one string, secrets as ***).
		h.Command = []string{redact.Cmdline(o.Command)}
	}
	ws := &watchSources{}

	// Whose latency is measured: --victim, else the service behind a
	// local --probe. Its v2 group is the cgroup scope unless --cgroup
	// was given; a wrong --victim fails here, before anything is recorded.
	vic, err := findVictim(ctx, root, procRoot, o.Victim, o.ProbeURL)
	if err != nil {
		return nil, nil, err
	}
	h.Victim = vic.v
	if vic.status.Reason != "" {
		ws.warnings = append(ws.warnings, "victim: "+vic.status.Reason)
	}
	scope := o.Cgroup
	if scope == "" && vic.v != nil && vic.v.CgroupDir != "" && !victim.IsHostRoot(vic.v) {
		if err := psi.CheckCgroup(vic.v.CgroupDir); err == nil {
			scope = vic.v.CgroupDir
		} else {
			ws.warnings = append(ws.warnings, "victim: its group's PSI cannot be read, the host's is used: "+err.Error())
		}
	}
	h.Cgroup = scope

	var psiOpts []psi.Option
	if o.Cgroup != "" {
		if err := psi.CheckCgroup(o.Cgroup); err != nil {
			return nil, nil, fmt.Errorf("--cgroup: %w", err)
		}
	}
	if scope != "" {
		psiOpts = append(psiOpts, psi.WithCgroup(scope))
	}
	pc, err := psi.NewCollector(procRoot, psiOpts...)
	if err != nil {
		return nil, nil, err
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
	ws.list = append(ws.list, sources.PSI{C: pc})
	if src := cgroupCounters(o.Cgroup, vic.v); src != nil {
		// The group's refaults, major faults and OOM kills (v2 memory.stat
		// and memory.events, or the v1 memory group on a hybrid host), for
		// gate --recording and analyze.
		ws.list = append(ws.list, src)
	}

	if os.Geteuid() != 0 && !capEffective(unix.CAP_SYS_PTRACE) {
		// not root and not given CAP_SYS_PTRACE (the service's unit
		// runs a dynamic user with it): other users' /proc/PID/io is denied
		ws.warnings = append(ws.warnings, "not root: "+diskio.DeniedHint)
	}
	for _, add := range watchSourceOrder {
		add(ctx, o, h, ws)
	}
	// Not a source: listed last, so the sources' order stays theirs.
	h.Collectors = append(h.Collectors, vic.status)
	return ws, h, nil
}

// watchSourceOrder is every step after PSI that wires watch's sources, in
// the order they are sampled and listed in the recording header: the
// sampler fills a Sample source by source, so this order is the order of
// the header's collectors and of the sources' timings. A new collector
// is one function (in its own watch_*.go file) added here, where its
// place is chosen, not derived from file names.
var watchSourceOrder = []func(ctx context.Context, o *watchOptions, h *record.Header, ws *watchSources){
	addMemorySources,  // meminfo, vmstat, swaps, timers (watch_collectors.go)
	addLatencySources, // --probe, --latency (watch_latency.go)
	addProcSources,    // diskstats, procs, events, onsets (watch_procs.go)
	addChainSource,    // --ebpf: the page-cache chain (watch_chain.go)
}

// hostHeader fills the host facts of a recording header. Boot time and
// host name come from gopsutil, pointed at the same root as the
// collectors (shirou/gopsutil common.EnvMap); the kernel release, page
// size and delay accounting switch come from procRoot.
func hostHeader(ctx context.Context, f *factory, procRoot string) *record.Header {
	now := f.Now()
	h := &record.Header{
		MemdiagVersion: versionString(),
		Start:          now,
		PageSize:       os.Getpagesize(),
		ClockTicks:     100, // USER_HZ is 100 on every Linux architecture memdiag supports
		Root:           f.Root,
	}
	zone, off := now.Zone()
	h.UTCOffset = off
	// The zone the host's jobs run in, by its name: a copied
	// /etc/localtime leaves time.Local an abbreviation ("CST") that is no
	// zone to project schedules in (timers.HostZone names the copy).
	h.TimeZone = timers.HostZone(f.Root)
	if h.TimeZone == "" {
		h.TimeZone = time.Local.String()
	}
	if h.TimeZone == "Local" {
		h.TimeZone = zone
	}
	gctx := context.WithValue(ctx, common.EnvKey, common.EnvMap{
		common.HostProcEnvKey: procRoot,
		common.HostSysEnvKey:  filepath.Join(f.Root, "sys"),
		common.HostEtcEnvKey:  filepath.Join(f.Root, "etc"),
	})
	if info, err := host.InfoWithContext(gctx); err == nil {
		h.Host = info.Hostname
		h.BootTime = time.Unix(int64(info.BootTime), 0).UTC()
	}
	if b, err := os.ReadFile(filepath.Join(procRoot, "sys/kernel/osrelease")); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(procRoot, "sys/kernel/hostname")); err == nil && h.Host == "" {
		h.Host = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(procRoot, "sys/kernel/task_delayacct")); err == nil {
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
