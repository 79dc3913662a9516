package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/memdiag/memdiag/diskio"
	"github.com/memdiag/memdiag/memstate"
	"github.com/memdiag/memdiag/procevents"
	"github.com/memdiag/memdiag/psi"
	"github.com/memdiag/memdiag/record"
	"github.com/memdiag/memdiag/redact"
	"github.com/memdiag/memdiag/report/mem"
	"github.com/memdiag/memdiag/sources"
)

// addProcSources wires /proc/diskstats, the per-process scanner, the
// process-events connector and the --stall-threshold onset watchers.
func addProcSources(ctx context.Context, o *Options, h *record.Header, ws *Sources) {
	procRoot := filepath.Join(o.Root, "proc")
	sysRoot := filepath.Join(o.Root, "sys")
	addDisks(o, h, ws, procRoot, sysRoot)
	src := addProcs(o, h, ws, procRoot)
	if src == nil {
		return
	}
	if h.DelayAcct != nil && !*h.DelayAcct && !o.EnableDelayAcct {
		ws.Warnings = append(ws.Warnings, "kernel.task_delayacct is 0: per-process block-I/O delay (delayacct_blkio_ticks) is not measured and is not recorded; --enable-delayacct turns it on for the recording (root)")
	}
	if o.Events != "off" && !addEvents(o, h, ws, src, procRoot, sysRoot) {
		return
	}
	if o.StallThreshold > 0 {
		addOnsets(o, h, ws, procRoot)
	}
}

// addDisks wires /proc/diskstats (whole devices unless --all-devices).
func addDisks(o *Options, h *record.Header, ws *Sources, procRoot, sysRoot string) {
	dc, err := diskio.NewDiskCollector(procRoot, sysRoot, diskio.DiskFilter{Partitions: o.AllDevices, Virtual: o.AllDevices})
	if err == nil {
		_, err = dc.Disks()
	}
	ws.status(h, "diskstats", err)
	if err == nil {
		ws.List = append(ws.List, sources.Disks{C: dc})
	}
}

// addProcs wires the per-process scanner (/proc/PID/io, stat) with the
// allocator evidence of growing processes; nil when it cannot scan.
func addProcs(o *Options, h *record.Header, ws *Sources, procRoot string) *sources.Procs {
	ps, err := diskio.NewProcScanner(procRoot, diskio.ProcScanOptions{TopN: o.TopN, KeepCmdline: o.KeepCmdline, ClockTicks: h.ClockTicks})
	ws.status(h, "procs", err)
	if err != nil {
		return nil
	}
	ws.closers = append(ws.closers, func() { ps.Close() })
	h.ProcIOAccounting = record.ProcIOAccountingThreads
	src := &sources.Procs{Scanner: ps, TopRSS: o.TopN, Growth: true}
	// The allocator evidence of each process that starts growing, once:
	// without it, analyze's growth findings say none was recorded.
	if col, err := memstate.NewCollector(o.Root); err == nil {
		src.Evidence = readRetention{col}
	}
	// The first scan is the baseline: every process already running
	// is known, so only what starts later is reported as exec.
	_, _, _, _ = ps.Scan(time.Now())
	ws.List = append(ws.List, src)
	return src
}

// addEvents opens the process-events connector for src (--events);
// false when --events on could not open it (ws.Fatal is set).
func addEvents(o *Options, h *record.Header, ws *Sources, src *sources.Procs, procRoot, sysRoot string) bool {
	l, err := procevents.Open(procevents.Options{
		ProcRoot: procRoot, SysRoot: sysRoot,
		Cmdline: func(argv []string) string {
			if o.KeepCmdline {
				return strings.Join(argv, " ")
			}
			return redact.Cmdline(argv)
		},
	})
	if err != nil {
		if o.Events == "on" {
			ws.Fatal = fmt.Errorf("--events on: %w", err)
			return false
		}
		ws.status(h, "events", err)
		return true
	}
	ws.status(h, "events", nil)
	lctx, cancel := context.WithCancel(context.Background())
	l.Start(lctx)
	ws.closers = append(ws.closers, func() { cancel(); l.Close(); l.Wait() })
	src.Events = l
	return true
}

// addOnsets starts the --stall-threshold watchers of the host's memory
// PSI and, with a cgroup scope, the group's.
func addOnsets(o *Options, h *record.Header, ws *Sources, procRoot string) {
	ons := &onsetSource{procRoot: procRoot, top: o.TopN}
	scopes := []struct{ scope, path, cg string }{{"host", filepath.Join(procRoot, "pressure", "memory"), ""}}
	if h.Cgroup != "" {
		scopes = append(scopes, struct{ scope, path, cg string }{h.Cgroup, filepath.Join(h.Cgroup, "memory.pressure"), h.Cgroup})
	}
	octx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var notes []error
	started := 0
	for _, sc := range scopes {
		w, err := psi.NewOnsetWatcher(sc.path, "some", o.StallThreshold, o.StallWindow, 50*time.Millisecond)
		if err != nil {
			notes = append(notes, err)
			continue
		}
		started++
		if w.Fallback != "" {
			notes = append(notes, errors.New(w.Fallback))
		}
		wg.Add(1)
		go func(scope, cg string) {
			defer wg.Done()
			_ = w.Run(octx, func(on psi.Onset) { ons.add(on, scope, cg) })
		}(sc.scope, sc.cg)
	}
	switch {
	case started == 0:
		// No watcher runs (no PSI file in any scope): onsets are not
		// recorded, whatever the note says (issue 29.6).
		cancel()
		h.Collectors = append(h.Collectors, record.CollectorStatus{Name: "onsets", Available: false, Reason: errors.Join(notes...).Error()})
		return
	case len(notes) > 0:
		// Polling works as well as a trigger here, and a scope without
		// PSI leaves the others; record the note but do not count it as
		// a missing collector.
		h.Collectors = append(h.Collectors, record.CollectorStatus{Name: "onsets", Available: true, Reason: errors.Join(notes...).Error()})
	default:
		h.Collectors = append(h.Collectors, record.CollectorStatus{Name: "onsets", Available: true})
	}
	ws.closers = append(ws.closers, func() { cancel(); wg.Wait() })
	ws.List = append(ws.List, ons)
}

// onsetSource collects stall onsets from the watchers' goroutines and
// hands them to the next sample.
type onsetSource struct {
	procRoot string
	top      int
	mu       sync.Mutex
	pending  []record.StallOnset
}

func (o *onsetSource) Name() string { return "onsets" }

func (o *onsetSource) add(on psi.Onset, scope, cgroupDir string) {
	procs := procevents.StallSnapshot(o.procRoot, cgroupDir, o.top)
	o.mu.Lock()
	o.pending = append(o.pending, record.StallOnset{Time: on.Time, Scope: scope, Resource: "memory", Kind: on.Kind,
		Stall: on.Stall, Window: on.Window, Mode: on.Mode, Procs: record.FromProcs(procs)})
	o.mu.Unlock()
}

func (o *onsetSource) Fill(ctx context.Context, s *record.Sample) error {
	o.mu.Lock()
	s.Onsets, o.pending = o.pending, nil
	o.mu.Unlock()
	return nil
}

// readRetention reads a process's allocator evidence with its plain
// reading, which the recording keeps (record.Retention.Reading).
type readRetention struct{ col *memstate.Collector }

func (r readRetention) RetentionOf(pid int, startTicks uint64) (*memstate.Retention, error) {
	ev, err := r.col.RetentionOf(pid, startTicks)
	if err == nil {
		ev.Reading = mem.RetentionReading(ev)
	}
	return ev, err
}
